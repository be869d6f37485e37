import type { PackContext, RequestContext } from '../../core/pack-api.js';
import { CART_EVENT_TYPES, CHECKOUT_COMPLETED, type CartEventRow } from './cart.js';

const TYPES = [...CART_EVENT_TYPES, CHECKOUT_COMPLETED];
const IN_TYPES = TYPES.map(() => '?').join(', ');

/** SQL of the cart recovery: customers' cart events in batches (never all at once), and recovered carts. */
export class CartRecoveryRepository {
  constructor(private readonly db: PackContext['db']) {}

  /** The next `limit` customers (by customerRef, after `after`) that have cart events. */
  async customersWithCartEvents(rc: RequestContext, after: string | null, limit: number): Promise<string[]> {
    const rows = await this.db.sql(rc).rows<{ customer_ref: string }>(
      `SELECT DISTINCT customer_ref FROM crm_events WHERE tenant_id = ? AND event_type IN (?, ?)${after === null ? '' : ' AND customer_ref > ?'} `
      + 'ORDER BY customer_ref LIMIT ?',
      [rc.tenantId, ...CART_EVENT_TYPES, ...(after === null ? [] : [after]), limit]);
    return rows.map((r) => r.customer_ref);
  }

  /** The cart and checkout.completed events of these customers, by customer in time order. */
  async cartEvents(rc: RequestContext, customerRefs: string[]): Promise<Map<string, CartEventRow[]>> {
    const rows = await this.db.sql(rc).rows<{ id: string; customer_ref: string; event_type: string; event_data: unknown; occurred_at: string; bot: boolean | number }>(
      `SELECT id, customer_ref, event_type, event_data, occurred_at, bot FROM crm_events WHERE tenant_id = ? AND customer_ref IN (${customerRefs.map(() => '?').join(', ')}) `
      + `AND event_type IN (${IN_TYPES}) ORDER BY customer_ref, occurred_at, id`,
      [rc.tenantId, ...customerRefs, ...TYPES]);
    const byCustomer = new Map<string, CartEventRow[]>();
    for (const r of rows) {
      let list = byCustomer.get(r.customer_ref);
      if (!list) byCustomer.set(r.customer_ref, (list = []));
      list.push({ id: r.id, eventType: r.event_type, eventData: this.db.dialect.fromJson(r.event_data), occurredAt: r.occurred_at, bot: r.bot === true || r.bot === 1 });
    }
    return byCustomer;
  }

  /** Which of these carts (customer and last cart event) were recovered already. */
  async recovered(rc: RequestContext, carts: Array<{ customerRef: string; lastEventId: string }>): Promise<Set<string>> {
    if (!carts.length) return new Set();
    const rows = await this.db.sql(rc).rows<{ customer_ref: string; last_event_id: string }>(
      `SELECT customer_ref, last_event_id FROM crm_recovered_carts WHERE tenant_id = ? AND last_event_id IN (${carts.map(() => '?').join(', ')})`,
      [rc.tenantId, ...carts.map((c) => c.lastEventId)]);
    return new Set(rows.map((r) => cartKey(r.customer_ref, r.last_event_id)));
  }

  /**
   * Claims carts for recovery by inserting their keys; returns the customers whose claim landed. A cart recovered
   * already (by another run, in any process) is left out: the primary key decides.
   */
  async claim(rc: RequestContext, carts: Array<{ customerRef: string; lastEventId: string; couponCode: string }>, now: string): Promise<Set<string>> {
    const won = new Set<string>();
    for (let i = 0; i < carts.length; i += CLAIM_CHUNK) {
      const chunk = carts.slice(i, i + CLAIM_CHUNK);
      const rows = await this.db.sql(rc).rows<{ customer_ref: string }>(
        `INSERT INTO crm_recovered_carts (tenant_id, customer_ref, last_event_id, recovered_at, coupon_code) VALUES ${chunk.map(() => '(?, ?, ?, ?, ?)').join(', ')} `
        + 'ON CONFLICT (tenant_id, customer_ref, last_event_id) DO NOTHING RETURNING customer_ref',
        chunk.flatMap((c) => [rc.tenantId, c.customerRef, c.lastEventId, now, c.couponCode]));
      for (const r of rows) won.add(r.customer_ref);
    }
    return won;
  }
}

/** Rows per claiming statement (5 parameters each, far below either engine's limit). */
const CLAIM_CHUNK = 500;

export function cartKey(customerRef: string, lastEventId: string): string {
  return `${customerRef}\u0000${lastEventId}`;
}
