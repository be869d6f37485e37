import type { CompiledSchema, Database, RequestContext } from '../../core/pack-api.js';

/**
 * What other packs read of the orders (the CRM: reminders, recommendations), over non-cancelled orders. The
 * stock ledger holds one `order` movement per order line and one `cancel` movement per line of a cancelled
 * order, so order lines are read from it, on its (tenant_id, order_id) index.
 */
export class OrdersRepository {
  constructor(private readonly db: Database) {}

  /** When a customer last placed an order that is not cancelled, or null. */
  async lastOrderAt(rc: RequestContext, orders: CompiledSchema, customerRef: string): Promise<string | null> {
    const d = this.db.dialect;
    const rows = await d.rows<{ at: string | null }>(this.db.conn(rc),
      `SELECT max(created_at) AS at FROM ${orders.tableName} WHERE tenant_id = ? AND ${d.jsonField('customerRef', 'string')} = ? `
      + `AND ${d.jsonField('status', 'string')} <> 'cancelled'`, [rc.tenantId!, customerRef]);
    return rows[0]?.at ?? null;
  }

  /** Skus by units sold in non-cancelled orders, most first. */
  async bestSellers(rc: RequestContext, products: CompiledSchema, limit: number): Promise<Array<{ sku: string; quantity: number }>> {
    const d = this.db.dialect;
    const rows = await d.rows<{ sku: string; quantity: number | string }>(this.db.conn(rc),
      `SELECT ${d.jsonField('sku', 'string', 'p.data')} AS sku, -sum(m.delta) AS quantity FROM erp_stock_movements m `
      + `JOIN ${products.tableName} p ON p.tenant_id = m.tenant_id AND p.id = m.product_id `
      + `WHERE m.tenant_id = ? AND m.reason = 'order' AND ${NOT_CANCELLED} `
      + 'GROUP BY p.id, sku ORDER BY quantity DESC, sku LIMIT ?', [rc.tenantId!, limit]);
    return rows.map((r) => ({ sku: r.sku, quantity: Number(r.quantity) }));
  }

  /** Other skus bought in the same non-cancelled orders as `sku`, with how many orders had both, most first. */
  async coPurchases(rc: RequestContext, products: CompiledSchema, sku: string, limit: number): Promise<Array<{ sku: string; orders: number }>> {
    const d = this.db.dialect;
    const rows = await d.rows<{ sku: string; orders: number | string }>(this.db.conn(rc),
      `SELECT ${d.jsonField('sku', 'string', 'p.data')} AS sku, count(DISTINCT m.order_id) AS orders FROM erp_stock_movements m `
      + `JOIN erp_stock_movements x ON x.tenant_id = m.tenant_id AND x.order_id = m.order_id AND x.reason = 'order' AND x.product_id <> m.product_id `
      + `JOIN ${products.tableName} xp ON xp.tenant_id = x.tenant_id AND xp.id = x.product_id `
      + `JOIN ${products.tableName} p ON p.tenant_id = m.tenant_id AND p.id = m.product_id `
      + `WHERE m.tenant_id = ? AND m.reason = 'order' AND ${d.jsonField('sku', 'string', 'xp.data')} = ? AND ${NOT_CANCELLED} `
      + 'GROUP BY p.id, sku ORDER BY orders DESC, sku LIMIT ?', [rc.tenantId!, sku, limit]);
    return rows.map((r) => ({ sku: r.sku, orders: Number(r.orders) }));
  }

  /** Each customer's latest order that is not cancelled (createdAt), for a batch of customers, in one query. */
  async lastOrderTimes(rc: RequestContext, orders: CompiledSchema, customerRefs: string[]): Promise<Map<string, string>> {
    const d = this.db.dialect;
    const customer = d.jsonField('customerRef', 'string');
    const rows = await d.rows<{ customer_ref: string; at: string }>(this.db.conn(rc),
      `SELECT ${customer} AS customer_ref, max(created_at) AS at FROM ${orders.tableName} WHERE tenant_id = ? `
      + `AND ${customer} IN (${customerRefs.map(() => '?').join(', ')}) AND ${d.jsonField('status', 'string')} <> 'cancelled' GROUP BY ${customer}`,
      [rc.tenantId!, ...customerRefs]);
    return new Map(rows.map((r) => [r.customer_ref, r.at]));
  }

  /**
   * Products bought together with carts: per cart (`key`), the active, in-stock products not in the cart, by the
   * number of non-cancelled orders holding them and at least one of the cart's skus, then sku; at most `limit`
   * per cart. One look-up of the batch's skus, then one indexed query per cart (a single query over the whole
   * batch, with the carts as a VALUES list, was planned far worse on SQLite: 30 s for 500 carts).
   */
  async boughtTogether(rc: RequestContext, products: CompiledSchema, carts: Array<{ key: string; skus: string[] }>, limit: number): Promise<Array<{ key: string; sku: string; name: string }>> {
    const d = this.db.dialect;
    const sku = (alias: string) => d.jsonField('sku', 'string', `${alias}.data`);
    const t = rc.tenantId!;
    // The carts' skus as product ids first (one look-up on the sku index), so that the ledger is read by product id.
    const skus = [...new Set(carts.flatMap((c) => c.skus))];
    if (!skus.length) return [];
    const found = await d.rows<{ id: string; sku: string }>(this.db.conn(rc),
      `SELECT id, ${sku('p')} AS sku FROM ${products.tableName} p WHERE tenant_id = ? AND ${sku('p')} IN (${skus.map(() => '?').join(', ')})`, [t, ...skus]);
    const idOf = new Map(found.map((r) => [r.sku, r.id]));
    const result: Array<{ key: string; sku: string; name: string }> = [];
    for (const cart of carts) {
      const ids = cart.skus.filter((s) => idOf.has(s)).map((s) => idOf.get(s)!);
      if (!ids.length) continue;
      // The orders holding any of the cart's products (through the ledger's product index), then their other lines.
      // CROSS JOIN keeps that order on SQLite (its planner would otherwise scan the ledger for every order).
      const rows = await d.rows<{ sku: string; name: string }>(this.db.conn(rc),
        `SELECT ${sku('p')} AS sku, ${d.jsonField('name', 'string', 'p.data')} AS name FROM `
        + `(SELECT DISTINCT m.order_id FROM erp_stock_movements m WHERE m.tenant_id = ? AND m.product_id IN (${ids.map(() => '?').join(', ')}) `
        + `AND m.reason = 'order' AND ${NOT_CANCELLED}) co `
        + `CROSS JOIN erp_stock_movements x CROSS JOIN ${products.tableName} p `
        + "WHERE x.tenant_id = ? AND x.order_id = co.order_id AND x.reason = 'order' AND p.tenant_id = x.tenant_id AND p.id = x.product_id "
        + `AND x.product_id NOT IN (${ids.map(() => '?').join(', ')}) `
        + `AND ${d.jsonField('status', 'string', 'p.data')} = 'active' AND ${d.jsonField('physicalStock', 'integer', 'p.data')} > 0 `
        + `GROUP BY x.product_id, sku, name ORDER BY count(*) DESC, sku LIMIT ?`,
        [t, ...ids, t, ...ids, limit]);
      for (const r of rows) result.push({ key: cart.key, sku: r.sku, name: r.name });
    }
    return result;
  }

  /** Active, in-stock products by the number of non-cancelled orders holding them, then sku. */
  async bestSellersByOrders(rc: RequestContext, products: CompiledSchema, limit: number): Promise<Array<{ sku: string; name: string }>> {
    const d = this.db.dialect;
    const rows = await d.rows<{ sku: string; name: string }>(this.db.conn(rc),
      `SELECT ${d.jsonField('sku', 'string', 'p.data')} AS sku, ${d.jsonField('name', 'string', 'p.data')} AS name FROM `
      + `(SELECT m.product_id, count(DISTINCT m.order_id) AS n FROM erp_stock_movements m WHERE m.tenant_id = ? AND m.reason = 'order' AND ${NOT_CANCELLED} GROUP BY m.product_id) c `
      + `JOIN ${products.tableName} p ON p.tenant_id = ? AND p.id = c.product_id `
      + `WHERE ${d.jsonField('status', 'string', 'p.data')} = 'active' AND ${d.jsonField('physicalStock', 'integer', 'p.data')} > 0 `
      + `ORDER BY c.n DESC, sku LIMIT ?`,
      [rc.tenantId!, rc.tenantId!, limit]);
    return rows;
  }
}

/** The order of movement `m` was not cancelled (no `cancel` movement of it). */
const NOT_CANCELLED = "NOT EXISTS (SELECT 1 FROM erp_stock_movements c WHERE c.tenant_id = m.tenant_id AND c.order_id = m.order_id AND c.reason = 'cancel')";
