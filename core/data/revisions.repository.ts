import { actorOf, type Actor } from '../base/actor.js';
import type { Database } from '../db/database.js';
import type { RequestContext } from '../base/request-context.js';
import type { CompiledSchema } from '../metadata/schema-registry.js';
import { recordText, type DataRecord } from './records.repository.js';

export type RevisionAction = 'create' | 'update' | 'delete';

/** Who made a change (CONTRACT.md 16.3). */
export type RevisionActor = Actor;

/** A revision as the API returns it. */
export interface Revision {
  version: number;
  action: RevisionAction;
  at: string;
  actor: RevisionActor;
  data: DataRecord;
}

interface RevisionRow {
  version: number | string;
  action: RevisionAction;
  at: string;
  actor_type: RevisionActor['type'];
  actor_id: string;
  actor_email: string | null;
  data: string;
}

/** The revisions table (record_revisions): written at commit with the record's row, read per record. */
export class RevisionsRepository {
  constructor(private readonly db: Database) {}

  private row(rc: RequestContext, schema: CompiledSchema, actor: RevisionActor, action: RevisionAction, record: DataRecord, version: number, at: string, document?: string) {
    return {
      tenant_id: rc.tenantId!, namespace: schema.namespace, schema_name: schema.name, record_id: record.id, version, action, at,
      actor_type: actor.type, actor_id: actor.id.slice(0, 255), actor_email: actor.email?.slice(0, 320) ?? null,
      // The record as written; its document's text, when given, is reused rather than serialised a second time.
      data: version === record.version ? recordText(record, document) : JSON.stringify({ ...record, version }),
    };
  }

  /**
   * Queues one revision in rc's transaction, written with the record's row (one group commit). `document`: the
   * record's document as the write stored it (JSON text), when the caller has it.
   */
  async add(rc: RequestContext, schema: CompiledSchema, action: RevisionAction, record: DataRecord, at: string, document?: string): Promise<void> {
    const version = action === 'delete' ? record.version + 1 : record.version;
    await this.db.insertAtCommit(rc, 'record_revisions', this.row(rc, schema, actorOf(rc), action, record, version, at, document));
  }

  /** Queues the revisions of many writes (bulk, import) as multi-row statements, with their records' rows. */
  async addMany(rc: RequestContext, schema: CompiledSchema, writes: ReadonlyArray<{ action: RevisionAction; record: DataRecord }>, at: string): Promise<void> {
    const actor = actorOf(rc);
    const batch = this.db.dialect.rowsPerInsert;
    for (let i = 0; i < writes.length; i += batch) {
      const rows = writes.slice(i, i + batch).map((w) => this.row(rc, schema, actor, w.action, w.record, w.record.version, at));
      await this.db.writeAtCommit(rc, { table: 'record_revisions', rows });
    }
  }

  /** A record's revisions, newest first: `limit + 1` rows from `offset`, or below the version `before`. */
  async list(rc: RequestContext, namespace: string, name: string, id: string, page: { limit: number; offset: number; before: number | null }): Promise<Revision[]> {
    const rows = await this.db.sql(rc).rows<RevisionRow>(
      `SELECT version, action, at, actor_type, actor_id, actor_email, data FROM record_revisions
       WHERE tenant_id = ? AND namespace = ? AND schema_name = ? AND record_id = ?${page.before === null ? '' : ' AND version < ?'}
       ORDER BY version DESC LIMIT ? OFFSET ?`,
      [rc.tenantId!, namespace, name, id, ...(page.before === null ? [] : [page.before]), page.limit + 1, page.offset]);
    return rows.map(toRevision);
  }

  async count(rc: RequestContext, namespace: string, name: string, id: string): Promise<number> {
    const rows = await this.db.sql(rc).rows<{ n: number | string }>(
      'SELECT count(*) AS n FROM record_revisions WHERE tenant_id = ? AND namespace = ? AND schema_name = ? AND record_id = ?',
      [rc.tenantId!, namespace, name, id]);
    return Number(rows[0].n);
  }

  /** One revision, or null. */
  async find(rc: RequestContext, namespace: string, name: string, id: string, version: number): Promise<Revision | null> {
    const rows = await this.db.sql(rc).rows<RevisionRow>(
      `SELECT version, action, at, actor_type, actor_id, actor_email, data FROM record_revisions
       WHERE tenant_id = ? AND namespace = ? AND schema_name = ? AND record_id = ? AND version = ?`,
      [rc.tenantId!, namespace, name, id, version]);
    return rows[0] ? toRevision(rows[0]) : null;
  }

  /** The newest version a record's revisions hold (0 when none). */
  async latestVersion(rc: RequestContext, namespace: string, name: string, id: string): Promise<number> {
    const rows = await this.db.sql(rc).rows<{ v: number | string | null }>(
      'SELECT max(version) AS v FROM record_revisions WHERE tenant_id = ? AND namespace = ? AND schema_name = ? AND record_id = ?',
      [rc.tenantId!, namespace, name, id]);
    return Number(rows[0]?.v ?? 0);
  }

  /** Tenants that may hold revisions. */
  async tenantIds(): Promise<string[]> {
    const rows = await this.db.sql(null).rows<{ id: string }>('SELECT id FROM tenants');
    return rows.map((r) => r.id);
  }

  /**
   * Deletes up to `limit` revisions of a tenant made before `cutoff`, except the newest revision of each record
   * that is not deleted (its newest revision is no delete); returns how many.
   */
  async deleteOlderThan(tenantId: string, cutoff: string, limit: number): Promise<number> {
    const rows = await this.db.sql(null).rows<{ namespace: string; schema_name: string; record_id: string; version: number | string }>(
      `SELECT r.namespace, r.schema_name, r.record_id, r.version FROM record_revisions r
       WHERE r.tenant_id = ? AND r.at < ?
         AND (r.version < (SELECT max(n.version) FROM record_revisions n
                           WHERE n.tenant_id = r.tenant_id AND n.namespace = r.namespace AND n.schema_name = r.schema_name AND n.record_id = r.record_id)
              OR r.action = 'delete')
       LIMIT ?`, [tenantId, cutoff, limit]);
    if (!rows.length) return 0;
    let deleted = 0;
    await this.db.transaction({ tenantId, principal: null, requestId: 'system' }, async (rc) => {
      for (const r of rows) {
        deleted += await this.db.sql(rc).run(this.db.query('record_revisions').where({
          tenant_id: tenantId, namespace: r.namespace, schema_name: r.schema_name, record_id: r.record_id, version: Number(r.version),
        }).delete());
      }
    });
    return deleted;
  }
}

function toRevision(row: RevisionRow): Revision {
  const actor: RevisionActor = { type: row.actor_type, id: row.actor_id };
  if (row.actor_email) actor.email = row.actor_email;
  return { version: Number(row.version), action: row.action, at: row.at, actor, data: JSON.parse(row.data) as DataRecord };
}
