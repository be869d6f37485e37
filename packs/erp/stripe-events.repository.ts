import type { PackContext, RequestContext } from '../../core/pack-api.js';

/** SQL of erp_stripe_events (migrations/0542-erp-stripe-events.ts). */
export class StripeEventsRepository {
  constructor(private readonly db: PackContext['db']) {}

  /** Claims a Stripe event id in rc's transaction: false when it was handled already (the primary key decides). */
  async claim(rc: RequestContext, eventId: string, type: string, now: string): Promise<boolean> {
    const rows = await this.db.sql(rc).rows(
      'INSERT INTO erp_stripe_events (tenant_id, event_id, type, handled_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING event_id',
      [rc.tenantId, eventId, type, now]);
    return rows.length > 0;
  }
}
