import type { Knex } from 'knex';
import type { Database } from '../db/database.js';
import { idsBefore } from '../base/ids.js';
import { systemContext } from '../base/request-context.js';

/** Deletes what the outbox no longer needs, one tenant and one bounded batch at a time. */
export class OutboxRetentionRepository {
  constructor(private readonly db: Database) {}

  /** Tenants that may have outbox rows ('' holds platform-level events). */
  async tenantIds(): Promise<string[]> {
    const rows = await this.db.sql(null).run(this.db.query('tenants').select('id'));
    return ['', ...rows.map((r: { id: string }) => r.id)];
  }

  /**
   * Deletes up to `limit` finished deliveries (and their attempts) last changed before `cutoff`; returns how
   * many. One write transaction (BEGIN IMMEDIATE on SQLite); the delete re-checks the status, since a retry
   * may have queued a selected delivery again in between.
   */
  async deleteFinishedDeliveries(tenantId: string, cutoff: string, limit: number): Promise<number> {
    return this.db.transaction(systemContext(tenantId), async (rc) => {
      const conn = this.db.sql(rc);
      const finished = (q: Knex.QueryBuilder) => q.where('tenant_id', tenantId).whereNot('status', 'pending').where('updated_at', '<', cutoff);
      const ids = (await conn.run(finished(this.db.query('outbox_deliveries').select('id')).limit(limit)))
        .map((r: { id: string }) => r.id);
      if (!ids.length) return 0;
      const deleted = await conn.run(finished(this.db.query('outbox_deliveries')).whereIn('id', ids).delete());
      const still = this.db.query('outbox_deliveries').select('id').where('tenant_id', tenantId).whereIn('id', ids);
      await conn.run(this.db.query('outbox_attempts').where('tenant_id', tenantId).whereIn('delivery_id', ids).whereNotIn('delivery_id', still).delete());
      return deleted;
    });
  }

  /** Deletes up to `limit` events that occurred before `cutoff` and have no delivery left; returns how many. */
  async deleteSettledEvents(tenantId: string, cutoff: string, limit: number): Promise<number> {
    const ids = (await this.db.sql(null).run(this.db.query('outbox_events as e').select('e.id')
      // The id range uses the primary key (ids start with their time); occurred_at is the rule itself.
      .where('e.tenant_id', tenantId).where('e.id', '<', idsBefore(cutoff)).where('e.occurred_at', '<', cutoff)
      .whereNotExists((q) => q.select(this.db.query.raw('1')).from('outbox_deliveries as d')
        .whereRaw('d.tenant_id = e.tenant_id').whereRaw('d.event_id = e.id'))
      .limit(limit)))
      .map((r: { id: string }) => r.id);
    if (!ids.length) return 0;
    await this.db.sql(null).run(this.db.query('outbox_events').where('tenant_id', tenantId).whereIn('id', ids).delete());
    return ids.length;
  }
}
