import type { Database } from '../db/database.js';
import { counterStatements, type CounterWrite } from '../db/dialects/dialect.js';
import { newId } from '../base/ids.js';
import { systemContext, type RequestContext } from '../base/request-context.js';

/** Counter rows of one tenant's schema beyond which a read folds them into one (in the background). */
const FOLD_AT = 64;
/** Counter rows folded per pass. */
const FOLD_BATCH = 1000;
/** count=estimated: the planner's estimate is taken above this many rows, else the exact count. */
export const ESTIMATE_ABOVE = 10_000;
/** The id of a tenant's schema's shared counter row (every other row is an addition of its own). */
const SHARED = '';

/**
 * Exact totals of a tenant's records per schema, kept in the write transaction: each record written or
 * deleted adds +n or -n to the tenant's counter of the schema in record_counts, as a counter write queued
 * with the record's own (core/db/dialects/dialect.ts, CounterWrite): group commit sums a group's additions
 * per counter into one statement. On SQLite they go into the counter's one shared row; on PostgreSQL into
 * rows of their own (no hot row that concurrent writers wait for), which a read folds into the shared row
 * once there are more than FOLD_AT. A total is the sum of the counter's rows.
 */
export class TotalsRepository {
  private readonly folding = new Set<string>();

  constructor(private readonly db: Database) {}

  /** Queues `delta` for the tenant's records of a schema; commits or rolls back with rc's transaction. */
  add(rc: RequestContext, schemaId: number, delta: number): Promise<void> {
    return this.db.writeAtCommit(rc, counterOf(rc.tenantId!, schemaId, delta));
  }

  /** The exact number of the tenant's records of a schema. */
  async exact(rc: RequestContext, schemaId: number): Promise<number> {
    const [row] = await this.db.sql(rc).rows<{ n: number | string | null; parts: number | string }>(
      'SELECT sum(n) AS n, count(*) AS parts FROM record_counts WHERE tenant_id = ? AND schema_id = ?', [rc.tenantId!, schemaId]);
    if (Number(row.parts) > FOLD_AT && !rc.trx) {
      this.fold(rc.tenantId!, schemaId).catch((err) => rc.logger?.warn({ err }, 'folding record counts failed'));
    }
    return Number(row.n ?? 0);
  }

  /** The number of records of a schema over every tenant that holds some (a schema being deleted). */
  async ofSchema(rc: RequestContext, schemaId: number, tenantId: string | null): Promise<number> {
    const [row] = await this.db.sql(rc).rows<{ n: number | string | null }>(
      `SELECT sum(n) AS n FROM record_counts WHERE ${tenantId ? 'tenant_id = ? AND ' : ''}schema_id = ?`, [...(tenantId ? [tenantId] : []), schemaId]);
    return Number(row?.n ?? 0);
  }

  /**
   * Adds up to FOLD_BATCH of a counter's own rows into its shared row: exactly the rows read are deleted
   * (locked on PostgreSQL, so two processes folding at once never count a row twice; SQLite's write
   * transaction excludes every other writer).
   */
  private async fold(tenantId: string, schemaId: number): Promise<void> {
    const key = `${tenantId}\u0000${schemaId}`;
    if (this.folding.has(key)) return;
    this.folding.add(key);
    try {
      await this.db.transaction(systemContext(tenantId), async (rc) => {
        const lock = this.db.dialect.name === 'postgres' ? ' FOR UPDATE' : '';
        const rows = await this.db.sql(rc).rows<{ id: string; n: number | string }>(
          `SELECT id, n FROM record_counts WHERE tenant_id = ? AND schema_id = ? AND id <> ? ORDER BY id LIMIT ${FOLD_BATCH}${lock}`, [tenantId, schemaId, SHARED]);
        if (!rows.length) return;
        const sum = rows.reduce((acc, r) => acc + Number(r.n), 0);
        const sql = this.db.sql(rc);
        await sql.run(this.db.query('record_counts').where({ tenant_id: tenantId, schema_id: schemaId }).whereIn('id', rows.map((r) => r.id)).delete());
        const [upsert] = counterStatements([counterOf(tenantId, schemaId, sum)], 'shared');
        await sql.rows(upsert.sql, upsert.bindings);
      });
    } finally {
      this.folding.delete(key);
    }
  }
}

function counterOf(tenantId: string, schemaId: number, add: number): CounterWrite {
  return { table: 'record_counts', key: { tenant_id: tenantId, schema_id: schemaId, id: SHARED }, column: 'n', add, fresh: { column: 'id', value: newId } };
}
