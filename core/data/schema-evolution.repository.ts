import type { Database } from '../db/database.js';
import type { RequestContext } from '../base/request-context.js';
import { SqlListQuery } from './list-query.js';
import { fieldTypes, type RegisteredSchema } from '../metadata/schema-definition.js';

export interface StoredDocument {
  tenantId: string;
  id: string;
  data: Record<string, unknown>;
}

/** The record-table SQL of a schema change (CONTRACT.md 12.1): scans in batches, the migration, duplicates. */
export class SchemaEvolutionRepository {
  constructor(private readonly db: Database) {}

  /** The tenant's records (every tenant's for a platform schema) after (tenantId, id), in key order. */
  async batch(rc: RequestContext, s: RegisteredSchema, after: [string, string], limit: number): Promise<StoredDocument[]> {
    const own = s.tenantId !== null;
    const rows = await this.db.sql(rc).rows<{ tenant_id: string; id: string; data: unknown }>(
      `SELECT tenant_id, id, data FROM ${s.tableName} WHERE ${own ? 'tenant_id = ? AND ' : ''}(tenant_id, id) > (?, ?) ORDER BY tenant_id, id LIMIT ?`,
      [...(own ? [s.tenantId] : []), ...after, limit]);
    return rows.map((r) => this.toDocument(r));
  }

  /** Records written since `since` (ISO time), inside the switching transaction. */
  async changedSince(rc: RequestContext, s: RegisteredSchema, since: string): Promise<StoredDocument[]> {
    const own = s.tenantId !== null;
    const rows = await this.db.sql(rc).rows<{ tenant_id: string; id: string; data: unknown }>(
      `SELECT tenant_id, id, data FROM ${s.tableName} WHERE ${own ? 'tenant_id = ? AND ' : ''}updated_at >= ?`,
      [...(own ? [s.tenantId] : []), since]);
    return rows.map((r) => this.toDocument(r));
  }

  /**
   * Blocks writes to the record table until rc's transaction ends (PostgreSQL: reads go on; waits for the
   * writes under way to commit). SQLite's write transaction excludes every other writer already.
   */
  async lockWrites(rc: RequestContext, s: RegisteredSchema): Promise<void> {
    if (this.db.dialect.name === 'postgres') await this.db.sql(rc).run(this.db.query.raw(`LOCK TABLE ${s.tableName} IN SHARE ROW EXCLUSIVE MODE`));
  }

  /** Up to `limit` groups of records that share the values of `fields` (a unique set to be). */
  async duplicates(rc: RequestContext, s: RegisteredSchema, fields: string[], limit: number): Promise<Array<{ ids: string[] }>> {
    const sql = new SqlListQuery(this.db.dialect, fieldTypes(s.schema));
    const exprs = fields.map((f) => sql.expression(f).sql);
    const own = s.tenantId !== null;
    const where = [...(own ? ['tenant_id = ?'] : []), ...exprs.map((e) => `${e} IS NOT NULL`)].join(' AND ');
    const rows = await this.db.sql(rc).rows<{ a: string; b: string }>(
      `SELECT min(id) AS a, max(id) AS b FROM ${s.tableName} WHERE ${where} GROUP BY tenant_id, ${exprs.join(', ')} HAVING count(*) > 1 LIMIT ?`,
      [...(own ? [s.tenantId] : []), limit]);
    return rows.map((r) => ({ ids: [r.a, r.b] }));
  }

  private toDocument(row: { tenant_id: string; id: string; data: unknown }): StoredDocument {
    return { tenantId: row.tenant_id, id: row.id, data: this.db.dialect.fromJson<Record<string, unknown>>(row.data) };
  }
}
