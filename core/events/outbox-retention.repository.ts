import type { Database } from '../db/database.js';

/** Deletes what the outbox no longer needs, one tenant and one bounded batch at a time. */
export class OutboxRetentionRepository {
  constructor(private readonly db: Database) {}

  /** Tenants that may have outbox rows ('' holds platform-level events). */
  async tenantIds(): Promise<string[]> {
    const rows = await this.db.knex('tenants').select('id');
    return ['', ...rows.map((r: { id: string }) => r.id)];
  }

  /** Deletes up to `limit` finished deliveries (and their attempts) last changed before `cutoff`; returns how many. */
  async deleteFinishedDeliveries(tenantId: string, cutoff: string, limit: number): Promise<number> {
    return this.db.knex.transaction(async (trx) => {
      const ids = (await trx('outbox_deliveries').select('id')
        .where('tenant_id', tenantId).whereNot('status', 'pending').where('updated_at', '<', cutoff).limit(limit))
        .map((r: { id: string }) => r.id);
      if (!ids.length) return 0;
      await trx('outbox_attempts').where('tenant_id', tenantId).whereIn('delivery_id', ids).delete();
      await trx('outbox_deliveries').where('tenant_id', tenantId).whereIn('id', ids).delete();
      return ids.length;
    });
  }

  /** Deletes up to `limit` events that occurred before `cutoff` and have no delivery left; returns how many. */
  async deleteSettledEvents(tenantId: string, cutoff: string, limit: number): Promise<number> {
    const ids = (await this.db.knex('outbox_events as e').select('e.id')
      .where('e.tenant_id', tenantId).where('e.occurred_at', '<', cutoff)
      .whereNotExists((q) => q.select(this.db.knex.raw('1')).from('outbox_deliveries as d')
        .whereRaw('d.tenant_id = e.tenant_id').whereRaw('d.event_id = e.id'))
      .limit(limit))
      .map((r: { id: string }) => r.id);
    if (!ids.length) return 0;
    await this.db.knex('outbox_events').where('tenant_id', tenantId).whereIn('id', ids).delete();
    return ids.length;
  }
}
