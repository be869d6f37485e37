import { actorOf } from '../base/actor.js';
import type { Database } from '../db/database.js';
import type { RequestContext } from '../base/request-context.js';
import { PLATFORM_SCOPE, type RegisteredSchema } from './schema-definition.js';

/** A record's key, in the order of the record table's primary key. */
export type RecordKey = [tenantId: string, id: string];

/** A record found by `late`: its document, and whether the batches (or an earlier pass) migrated it as it is now. */
export interface LateRecord {
  tenantId: string;
  id: string;
  data: Record<string, unknown>;
  migrated: boolean;
}

/** A migration under way (schema_migration_runs), with what recovery needs to know of its schema. */
export interface MigrationRun {
  tenantId: string | null;
  schemaId: number;
  toVersion: number;
  undoTable: string;
  /** The schema's record table and current version, or null once the schema was deleted. */
  tableName: string | null;
  /** The schema's namespace and name (its records' revisions), or null once it was deleted. */
  namespace: string | null;
  name: string | null;
  version: number | null;
}

/** Advisory lock class of a schema's migration (PostgreSQL): the second key is the schema id. */
const LOCK_CLASS = 7012;

/**
 * The SQL of a batched migration (CONTRACT.md 12.1): each batch rewrites a key range of the record table
 * and keeps the previous state of those records in the run's side table (`<table>_undo`, keyed like the
 * record table), which restores them if the change fails and is dropped once the new version is stored.
 */
export class SchemaMigrationRepository {
  /** SQLite: one process serves a file, so the migrations it runs are the ones alive. */
  private readonly heldHere = new Set<number>();

  constructor(private readonly db: Database) {}

  /** Registers the run and creates its side table (empty). */
  async begin(rc: RequestContext, s: RegisteredSchema, toVersion: number, startedAt: string): Promise<string> {
    const undoTable = `${s.tableName}_undo`;
    const conn = this.db.sql(rc);
    await conn.run(this.db.query.schema.dropTableIfExists(undoTable));
    await conn.run(this.db.query.schema.createTable(undoTable, (t) => {
      t.string('tenant_id', 63).notNullable();
      t.string('id', 36).notNullable();
      t.jsonb('data').notNullable();
      t.integer('version').notNullable();
      t.string('updated_at', 30).notNullable();
      t.primary(['tenant_id', 'id']);
    }));
    await conn.run(this.db.query('schema_migration_runs').insert({
      tenant_id: s.tenantId ?? PLATFORM_SCOPE, schema_id: s.id, to_version: toVersion, undo_table: undoTable, started_at: startedAt,
    }));
    return undoTable;
  }

  /** Forgets the run: its side table is dropped (the version was stored, or the records were restored). */
  async finish(rc: RequestContext, run: Pick<MigrationRun, 'tenantId' | 'schemaId' | 'undoTable'>): Promise<void> {
    const conn = this.db.sql(rc);
    await conn.run(this.db.query.schema.dropTableIfExists(run.undoTable));
    await conn.run(this.db.query('schema_migration_runs').where({ tenant_id: run.tenantId ?? PLATFORM_SCOPE, schema_id: run.schemaId }).delete());
  }

  /** Every run registered, with its schema's table and current version. */
  async runs(rc: RequestContext, schemaId?: number): Promise<MigrationRun[]> {
    type Row = {
      tenant_id: string; schema_id: number; to_version: number; undo_table: string; table_name: string | null; version: number | null;
      namespace: string | null; name: string | null;
    };
    const rows = await this.db.sql(rc).rows<Row>(
      `SELECT r.tenant_id, r.schema_id, r.to_version, r.undo_table, s.table_name, s.version, s.namespace, s.name FROM schema_migration_runs r
        LEFT JOIN schemas s ON s.tenant_id = r.tenant_id AND s.id = r.schema_id${schemaId === undefined ? '' : ' WHERE r.schema_id = ?'}`,
      schemaId === undefined ? [] : [schemaId]);
    return rows.map((r) => ({
      tenantId: r.tenant_id === PLATFORM_SCOPE ? null : r.tenant_id,
      schemaId: Number(r.schema_id),
      toVersion: Number(r.to_version),
      undoTable: r.undo_table,
      tableName: r.table_name,
      namespace: r.namespace,
      name: r.name,
      version: r.version === null ? null : Number(r.version),
    }));
  }

  /** The key of the `size`-th record after `after`, or null when fewer are left (the last batch). */
  async boundary(rc: RequestContext, s: RegisteredSchema, after: RecordKey, size: number): Promise<RecordKey | null> {
    const own = ownTenant(s);
    const rows = await this.db.sql(rc).rows<{ tenant_id: string; id: string }>(
      `SELECT tenant_id, id FROM ${s.tableName} WHERE ${own.sql}(tenant_id, id) > (?, ?) ORDER BY tenant_id, id LIMIT 1 OFFSET ?`,
      [...own.bindings, ...after, size - 1]);
    return rows[0] ? [rows[0].tenant_id, rows[0].id] : null;
  }

  /** One batch: the records after `after` up to `upTo` (to the end when null) keep their state in the side table and are migrated. */
  async migrateRange(rc: RequestContext, s: RegisteredSchema, undoTable: string, after: RecordKey, upTo: RecordKey | null, edit: Edit): Promise<void> {
    const own = ownTenant(s);
    await this.migrateWhere(rc, s, undoTable, `${own.sql}(tenant_id, id) > (?, ?)${upTo ? ' AND (tenant_id, id) <= (?, ?)' : ''}`,
      [...own.bindings, ...after, ...(upTo ?? [])], edit);
  }

  /** Migrates the named records of one tenant; their side-table state becomes the one they had now. */
  async migrateIds(rc: RequestContext, s: RegisteredSchema, undoTable: string, tenantId: string, ids: string[], edit: Edit): Promise<void> {
    for (let i = 0; i < ids.length; i += 500) {
      const chunk = ids.slice(i, i + 500);
      await this.migrateWhere(rc, s, undoTable, `tenant_id = ? AND id IN (${chunk.map(() => '?').join(', ')})`, [tenantId, ...chunk], edit);
    }
  }

  /**
   * Records written since `since` that were not checked as they are now: not migrated as the batches
   * left them (written after their batch, or inserted), or migrated from a state written since `since`.
   */
  async late(rc: RequestContext, s: RegisteredSchema, undoTable: string, since: string): Promise<LateRecord[]> {
    const own = ownTenant(s, 'r.');
    const rows = await this.db.sql(rc).rows<{ tenant_id: string; id: string; data: unknown; migrated: number | boolean }>(
      `SELECT r.tenant_id, r.id, r.data, CASE WHEN r.version = u.version + 1 THEN 1 ELSE 0 END AS migrated
        FROM ${s.tableName} r LEFT JOIN ${undoTable} u ON u.tenant_id = r.tenant_id AND u.id = r.id
        WHERE ${own.sql}r.updated_at >= ? AND (u.id IS NULL OR r.version <> u.version + 1 OR u.updated_at >= ?)`,
      [...own.bindings, since, since]);
    return rows.map((r) => ({
      tenantId: r.tenant_id, id: r.id, data: this.db.dialect.fromJson<Record<string, unknown>>(r.data), migrated: Number(r.migrated) === 1,
    }));
  }

  /**
   * Restores the next `size` records of the side table after `after` to their previous state, unless a
   * write changed them after the migration; returns the last key restored (null when none was left).
   */
  async restoreBatch(rc: RequestContext, target: RestoreTarget, undoTable: string, after: RecordKey, size: number): Promise<RecordKey | null> {
    const { tableName } = target;
    const conn = this.db.sql(rc);
    const keys = await conn.rows<{ tenant_id: string; id: string }>(
      `SELECT tenant_id, id FROM ${undoTable} WHERE (tenant_id, id) > (?, ?) ORDER BY tenant_id, id LIMIT 1 OFFSET ?`, [...after, size - 1]);
    const upTo: RecordKey | null = keys[0] ? [keys[0].tenant_id, keys[0].id] : null;
    // The revisions the migration wrote for the records restored here go with it (their versions are written again).
    if (target.namespace !== null && target.name !== null) {
      await conn.run(this.db.query.raw(
        `DELETE FROM record_revisions WHERE (tenant_id, namespace, schema_name, record_id, version) IN (
          SELECT u.tenant_id, ?, ?, u.id, u.version + 1 FROM ${undoTable} u JOIN ${tableName} r ON r.tenant_id = u.tenant_id AND r.id = u.id
          WHERE r.version = u.version + 1 AND (u.tenant_id, u.id) > (?, ?)${upTo ? ' AND (u.tenant_id, u.id) <= (?, ?)' : ''})`,
        [target.namespace, target.name, ...after, ...(upTo ?? [])]));
    }
    await conn.run(this.db.query.raw(
      `UPDATE ${tableName} SET data = u.data, version = u.version, updated_at = u.updated_at FROM ${undoTable} u
        WHERE ${tableName}.tenant_id = u.tenant_id AND ${tableName}.id = u.id AND ${tableName}.version = u.version + 1
        AND (u.tenant_id, u.id) > (?, ?)${upTo ? ' AND (u.tenant_id, u.id) <= (?, ?)' : ''}`,
      [...after, ...(upTo ?? [])]));
    return upTo;
  }

  /**
   * Marks a migration of the schema as alive until the returned release is called; null when one is
   * already (here or, on PostgreSQL, in another process: a session advisory lock that ends with its process).
   */
  async hold(schemaId: number): Promise<(() => Promise<void>) | null> {
    if (this.db.dialect.name !== 'postgres') {
      if (this.heldHere.has(schemaId)) return null;
      this.heldHere.add(schemaId);
      return async () => { this.heldHere.delete(schemaId); };
    }
    const client = this.db.knex.client as unknown as PgPool;
    const connection = await client.acquireConnection();
    try {
      const { rows } = await connection.query('SELECT pg_try_advisory_lock($1, $2) AS held', [LOCK_CLASS, schemaId]);
      if (rows[0].held) {
        return async () => {
          try {
            await connection.query('SELECT pg_advisory_unlock($1, $2)', [LOCK_CLASS, schemaId]);
          } finally {
            await client.releaseConnection(connection);
          }
        };
      }
    } catch (err) {
      await client.releaseConnection(connection);
      throw err;
    }
    await client.releaseConnection(connection);
    return null;
  }

  /** Copies the matching records into the side table (or refreshes their state there), then migrates them. */
  private async migrateWhere(rc: RequestContext, s: RegisteredSchema, undoTable: string, where: string, bindings: unknown[], edit: Edit): Promise<void> {
    const conn = this.db.sql(rc);
    await conn.run(this.db.query.raw(
      `INSERT INTO ${undoTable} (tenant_id, id, data, version, updated_at) SELECT tenant_id, id, data, version, updated_at FROM ${s.tableName}
        WHERE ${where} ON CONFLICT (tenant_id, id) DO UPDATE SET data = excluded.data, version = excluded.version, updated_at = excluded.updated_at`,
      bindings as any[]));
    const json = this.db.dialect.jsonEdit('data', edit.set, edit.unset);
    await conn.run(this.db.query.raw(`UPDATE ${s.tableName} SET data = ${json.sql}, version = version + 1, updated_at = ? WHERE ${where}`,
      [...json.bindings, edit.now, ...bindings] as any[]));
    // Each migrated record's revision (CONTRACT.md 16.3), by the actor of the change, in the batch's transaction.
    const actor = actorOf(rc);
    const doc = this.db.dialect.jsonText('data');
    const record = `'{"id":"' || id || '"' || CASE WHEN length(${doc}) > 2 THEN ',' || substr(${doc}, 2, length(${doc}) - 2) ELSE '' END`
      + ` || ',"createdAt":"' || created_at || '","updatedAt":"' || updated_at || '","version":' || version || '}'`;
    await conn.run(this.db.query.raw(
      `INSERT INTO record_revisions (tenant_id, namespace, schema_name, record_id, version, action, at, actor_type, actor_id, actor_email, data)
        SELECT tenant_id, ?, ?, id, version, 'update', ?, ?, ?, ?, ${record} FROM ${s.tableName} WHERE ${where}`,
      [s.namespace, s.name, edit.now, actor.type, actor.id, actor.email ?? null, ...bindings] as any[]));
  }
}

/** The record table a migration restores, and its schema's namespace and name (null once it was deleted). */
export interface RestoreTarget {
  tableName: string;
  namespace: string | null;
  name: string | null;
}

/** What a migration does to each record, and the time it stamps. */
export interface Edit {
  set: Record<string, unknown>;
  unset: string[];
  now: string;
}

interface PgPool {
  acquireConnection(): Promise<{ query(sql: string, bindings: unknown[]): Promise<{ rows: Array<Record<string, unknown>> }> }>;
  releaseConnection(connection: unknown): Promise<void>;
}

/** The schema's own tenant as the first condition (a platform schema's records belong to every tenant). */
function ownTenant(s: RegisteredSchema, prefix = ''): { sql: string; bindings: string[] } {
  return s.tenantId === null ? { sql: '', bindings: [] } : { sql: `${prefix}tenant_id = ? AND `, bindings: [s.tenantId] };
}
