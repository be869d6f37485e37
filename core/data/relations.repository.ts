import type { Database } from '../db/database.js';
import { inValues } from '../db/dialects/dialect.js';
import type { RequestContext } from '../base/request-context.js';
import type { RegisteredSchema } from '../metadata/schema-definition.js';
import type { CompiledSchema } from '../metadata/schema-registry.js';
import { SqlListQuery, SqlParts, type Filter } from './list-query.js';
import type { RecordRow } from './records.repository.js';

/** The SQL of relations (CONTRACT.md 12.2): which referenced records exist, which records refer to one, batch reads. */
export class RelationsRepository {
  constructor(private readonly db: Database) {}

  /** Whether a list reads one-level expansions in its own statement (see Dialect.embedding). */
  get embedsInList(): boolean {
    return this.db.dialect.embedding !== undefined;
  }

  /**
   * Which of `ids` exist among the tenant's records of `target`. Inside a write transaction on PostgreSQL
   * the rows found are locked (FOR KEY SHARE) until it commits, so that a concurrent delete of one waits
   * and then sees the new reference; SQLite's write transaction excludes every other writer already.
   */
  async existing(rc: RequestContext, target: RegisteredSchema, ids: string[]): Promise<Set<string>> {
    if (!ids.length) return new Set();
    const lock = rc.trx && this.db.dialect.name === 'postgres' ? ' FOR KEY SHARE' : '';
    const list = inValues(this.db.dialect, ids);
    const rows = await this.db.sql(rc).rows<{ id: string }>(
      `SELECT id FROM ${target.tableName} WHERE tenant_id = ${this.db.dialect.fixedParameter} AND id IN ${list.sql}${lock}`, [rc.tenantId!, ...list.bindings]);
    return new Set(rows.map((r) => r.id));
  }

  /** The tenant's records of `source` whose `field` holds `id` (at most `limit`). */
  async referring(rc: RequestContext, source: RegisteredSchema, field: string, many: boolean, id: string, limit: number): Promise<string[]> {
    const refers = this.db.dialect.refersTo(field, many, id);
    const rows = await this.db.sql(rc).rows<{ id: string }>(
      `SELECT id FROM ${source.tableName} WHERE tenant_id = ${this.db.dialect.fixedParameter} AND ${refers.sql} ORDER BY id LIMIT ?`, [rc.tenantId!, ...refers.bindings, limit]);
    return rows.map((r) => r.id);
  }

  /**
   * The tenant's records of `target` among `ids`, in one query, each document as JSON text; with `policy` (a role's
   * read policies, CONTRACT.md 16.1) only those it lets the caller read. The plan is an index lookup whatever the
   * tenant: planned once (see Dialect.fixedParameter; on SQLite planning it for each execution cost a third of the
   * query).
   */
  async byIds(rc: RequestContext, target: CompiledSchema, ids: string[], policy: Filter[][] | null = null): Promise<Array<Omit<RecordRow, 'tenant_id'>>> {
    if (!ids.length) return [];
    const parts = new SqlParts();
    if (policy) new SqlListQuery(this.db.dialect, target.types, target.plainFields).applyAll(parts, { filters: [], policy });
    const list = inValues(this.db.dialect, ids);
    return this.db.sql(rc).rows<Omit<RecordRow, 'tenant_id'>>(
      `SELECT id, ${this.db.dialect.jsonText('data')} AS data, version, created_at, updated_at FROM ${target.tableName} WHERE tenant_id = ${this.db.dialect.fixedParameter} AND id IN ${list.sql}${parts.andWhere()}`,
      [rc.tenantId!, ...list.bindings, ...parts.bindings]);
  }

  /** Records of `source` (any tenant's, for a platform schema) whose `field` is set, for checks of a new version. */
  async withField(rc: RequestContext, source: RegisteredSchema, field: string, after: [string, string], limit: number): Promise<Array<{ tenantId: string; id: string; value: unknown }>> {
    const own = source.tenantId !== null;
    const rows = await this.db.sql(rc).rows<{ tenant_id: string; id: string; data: unknown }>(
      `SELECT tenant_id, id, data FROM ${source.tableName} WHERE ${own ? 'tenant_id = ? AND ' : ''}(tenant_id, id) > (?, ?) ORDER BY tenant_id, id LIMIT ?`,
      [...(own ? [source.tenantId] : []), ...after, limit]);
    return rows.map((r) => ({ tenantId: r.tenant_id, id: r.id, value: this.db.dialect.fromJson<Record<string, unknown>>(r.data)[field] }));
  }
}
