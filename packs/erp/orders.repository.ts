import type { PackContext, RequestContext } from '../../core/pack-api.js';

/**
 * What other packs read of the orders (the CRM: reminders, recommendations), over non-cancelled orders. The
 * stock ledger holds one `order` movement per order line and one `cancel` movement per line of a cancelled
 * order, so order lines are read from it, on its (tenant_id, order_id) index.
 */
export class OrdersRepository {
  constructor(private readonly db: PackContext['db']) {}

  /**
   * Counts a placed order (`delta` 1) or cancelled ones (-1, `orders` of them with these products) in the co-purchase table: every ordered pair of its
   * products, each product with itself included. One statement, queued in the caller's transaction (it runs
   * before COMMIT). Placement upserts in key order; two orders sharing a pair share its product, whose stock row
   * they already take in turn, so the counts neither deadlock nor lose an update.
   */
  async countOrder(rc: RequestContext, productIds: string[], delta: 1 | -1, orders = 1): Promise<void> {
    const ids = [...new Set(productIds)].sort();
    if (!ids.length) return;
    const t = rc.tenantId!;
    if (delta < 0) {
      const list = ids.map(() => '?').join(', ');
      await this.db.writeAtCommit(rc, {
        sql: `UPDATE erp_co_purchases SET orders = orders - ? WHERE tenant_id = ? AND product_id IN (${list}) AND other_id IN (${list})`,
        bindings: [orders, t, ...ids, ...ids],
      });
      return;
    }
    // In key order, at most PAIRS_PER_STATEMENT pairs a statement (an order of 200 products has 40,000 pairs).
    let bindings: unknown[] = [];
    for (const a of ids) {
      for (const b of ids) {
        bindings.push(t, a, b, 1);
        if (bindings.length === 4 * PAIRS_PER_STATEMENT) {
          await this.db.writeAtCommit(rc, { sql: countPairsSql(PAIRS_PER_STATEMENT), bindings });
          bindings = [];
        }
      }
    }
    if (bindings.length) await this.db.writeAtCommit(rc, { sql: countPairsSql(bindings.length / 4), bindings });
  }

  /** Units sold per product in non-cancelled orders (the ledger's `order` movements), most first, down to the `limit`-th product's count (ties kept). */
  async unitsSold(rc: RequestContext, limit: number): Promise<Array<{ productId: string; quantity: number }>> {
    const sold = `SELECT m.product_id, -sum(m.delta) AS quantity FROM erp_stock_movements m WHERE m.tenant_id = ? AND m.reason = 'order' AND ${NOT_CANCELLED} GROUP BY m.product_id`;
    const top = await this.db.sql(rc).rows<{ quantity: number | string }>(`${sold} ORDER BY quantity DESC LIMIT 1 OFFSET ?`, [rc.tenantId!, Math.max(0, limit - 1)]);
    const least = top.length ? Number(top[0].quantity) : 0;
    const rows = await this.db.sql(rc).rows<{ product_id: string; quantity: number | string }>(
      `SELECT product_id, quantity FROM (${sold}) s WHERE quantity >= ? ORDER BY quantity DESC`, [rc.tenantId!, least]);
    return rows.map((r) => ({ productId: r.product_id, quantity: Number(r.quantity) }));
  }

  /** A page of products by the number of non-cancelled orders holding them (the pairs of a product with itself), most first. */
  async mostOrdered(rc: RequestContext, limit: number, offset: number): Promise<Array<{ productId: string; orders: number }>> {
    const rows = await this.db.sql(rc).rows<{ product_id: string; orders: number | string }>(
      'SELECT product_id, orders FROM erp_co_purchases WHERE tenant_id = ? AND product_id = other_id AND orders > 0 ORDER BY orders DESC, product_id LIMIT ? OFFSET ?',
      [rc.tenantId!, limit, offset]);
    return rows.map((r) => ({ productId: r.product_id, orders: Number(r.orders) }));
  }

  /** The co-purchase pairs of these products with others (orders > 0), by product, on the primary key. */
  async coPurchasePairs(rc: RequestContext, productIds: string[]): Promise<Map<string, Array<{ id: string; orders: number }>>> {
    const partners = new Map<string, Array<{ id: string; orders: number }>>(productIds.map((id) => [id, []]));
    for (const chunk of chunks(productIds)) {
      const pairs = await this.db.sql(rc).rows<{ product_id: string; other_id: string; orders: number | string }>(
        `SELECT product_id, other_id, orders FROM erp_co_purchases WHERE tenant_id = ? AND product_id IN (${chunk.map(() => '?').join(', ')}) `
        + 'AND other_id <> product_id AND orders > 0', [rc.tenantId!, ...chunk]);
      for (const r of pairs) partners.get(r.product_id)!.push({ id: r.other_id, orders: Number(r.orders) });
    }
    return partners;
  }

  /** The orders, not cancelled, holding each of these products (the ledger's `order` movements), by product. */
  async ordersHolding(rc: RequestContext, productIds: string[]): Promise<Map<string, string[]>> {
    const found = new Map<string, string[]>(productIds.map((id) => [id, []]));
    for (const chunk of chunks(productIds)) {
      const rows = await this.db.sql(rc).rows<{ product_id: string; order_id: string }>(
        `SELECT m.product_id, m.order_id FROM erp_stock_movements m WHERE m.tenant_id = ? AND m.product_id IN (${chunk.map(() => '?').join(', ')}) `
        + "AND m.reason = 'order' AND NOT EXISTS (SELECT 1 FROM erp_stock_movements c WHERE c.tenant_id = m.tenant_id AND c.order_id = m.order_id AND c.reason = 'cancel')",
        [rc.tenantId!, ...chunk]);
      for (const r of rows) found.get(r.product_id)!.push(r.order_id);
    }
    return found;
  }

  /** The products of each of these orders (the ledger's `order` movements), by order. */
  async productsOf(rc: RequestContext, orderIds: string[]): Promise<Map<string, string[]>> {
    const found = new Map<string, string[]>(orderIds.map((id) => [id, []]));
    for (const chunk of chunks(orderIds)) {
      const rows = await this.db.sql(rc).rows<{ order_id: string; product_id: string }>(
        `SELECT order_id, product_id FROM erp_stock_movements WHERE tenant_id = ? AND order_id IN (${chunk.map(() => '?').join(', ')}) AND reason = 'order'`,
        [rc.tenantId!, ...chunk]);
      for (const r of rows) found.get(r.order_id)!.push(r.product_id);
    }
    return found;
  }
}

/** Pairs per co-purchase upsert: 4 bound parameters each, within SQLite's 32,766 a statement. */
const PAIRS_PER_STATEMENT = 5000;
/** The co-purchase upsert of `pairs` pairs, built once per count (the same text finds its prepared statement at once). */
const pairsSql: string[] = [];
function countPairsSql(pairs: number): string {
  return pairsSql[pairs] ??= `INSERT INTO erp_co_purchases (tenant_id, product_id, other_id, orders) VALUES ${new Array<string>(pairs).fill('(?, ?, ?, ?)').join(', ')} `
    + 'ON CONFLICT (tenant_id, product_id, other_id) DO UPDATE SET orders = erp_co_purchases.orders + 1';
}

/** Bound parameters per IN list (SQLite allows 32,766 a statement). */
const CHUNK = 1000;

function chunks<T>(items: T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += CHUNK) out.push(items.slice(i, i + CHUNK));
  return out;
}

/** The order of movement `m` was not cancelled (no `cancel` movement of it). */
const NOT_CANCELLED = "NOT EXISTS (SELECT 1 FROM erp_stock_movements c WHERE c.tenant_id = m.tenant_id AND c.order_id = m.order_id AND c.reason = 'cancel')";
