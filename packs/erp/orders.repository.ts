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
}

/** The order of movement `m` was not cancelled (no `cancel` movement of it). */
const NOT_CANCELLED = "NOT EXISTS (SELECT 1 FROM erp_stock_movements c WHERE c.tenant_id = m.tenant_id AND c.order_id = m.order_id AND c.reason = 'cancel')";
