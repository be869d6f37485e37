import type { CompiledSchema, PackContext, RequestContext } from '../../core/pack-api.js';

/**
 * What other packs read of the orders (the CRM: reminders, recommendations), over non-cancelled orders. The
 * stock ledger holds one `order` movement per order line and one `cancel` movement per line of a cancelled
 * order, so order lines are read from it, on its (tenant_id, order_id) index.
 */
export class OrdersRepository {
  constructor(private readonly db: PackContext['db']) {}

  /** When a customer last placed an order that is not cancelled, or null. */
  async lastOrderAt(rc: RequestContext, orders: CompiledSchema, customerRef: string): Promise<string | null> {
    const d = this.db.dialect;
    const rows = await this.db.sql(rc).rows<{ at: string | null }>(
      `SELECT max(created_at) AS at FROM ${orders.tableName} WHERE tenant_id = ? AND ${d.jsonField('customerRef', 'string')} = ? `
      + `AND ${d.jsonField('status', 'string')} <> 'cancelled'`, [rc.tenantId!, customerRef]);
    return rows[0]?.at ?? null;
  }

  /** Skus by units sold in non-cancelled orders, most first. */
  async bestSellers(rc: RequestContext, products: CompiledSchema, limit: number): Promise<Array<{ sku: string; quantity: number }>> {
    const d = this.db.dialect;
    const rows = await this.db.sql(rc).rows<{ sku: string; quantity: number | string }>(
      `SELECT ${d.jsonField('sku', 'string', 'p.data')} AS sku, -sum(m.delta) AS quantity FROM erp_stock_movements m `
      + `JOIN ${products.tableName} p ON p.tenant_id = m.tenant_id AND p.id = m.product_id `
      + `WHERE m.tenant_id = ? AND m.reason = 'order' AND ${NOT_CANCELLED} `
      + 'GROUP BY p.id, sku ORDER BY quantity DESC, sku LIMIT ?', [rc.tenantId!, limit]);
    return rows.map((r) => ({ sku: r.sku, quantity: Number(r.quantity) }));
  }

  /** Other skus bought in the same non-cancelled orders as `sku`, with how many orders had both, most first. */
  async coPurchases(rc: RequestContext, products: CompiledSchema, sku: string, limit: number): Promise<Array<{ sku: string; orders: number }>> {
    const d = this.db.dialect;
    const skuOf = (alias: string) => d.jsonField('sku', 'string', `${alias}.data`);
    const rows = await this.db.sql(rc).rows<{ sku: string; orders: number | string }>(
      `SELECT ${skuOf('p')} AS sku, cp.orders FROM ${products.tableName} s `
      + 'CROSS JOIN erp_co_purchases cp CROSS JOIN ' + products.tableName + ' p '
      + `WHERE s.tenant_id = ? AND ${skuOf('s')} = ? AND cp.tenant_id = s.tenant_id AND cp.product_id = s.id AND cp.other_id <> s.id `
      + 'AND cp.orders > 0 AND p.tenant_id = cp.tenant_id AND p.id = cp.other_id ORDER BY cp.orders DESC, sku LIMIT ?',
      [rc.tenantId!, sku, limit]);
    return rows.map((r) => ({ sku: r.sku, orders: Number(r.orders) }));
  }

  /**
   * Counts a placed order (`delta` 1) or a cancelled one (-1) in the co-purchase table: every ordered pair of its
   * products, each product with itself included. One statement, queued in the caller's transaction (it runs
   * before COMMIT). Placement upserts in key order; two orders sharing a pair share its product, whose stock row
   * they already take in turn, so the counts neither deadlock nor lose an update.
   */
  async countOrder(rc: RequestContext, productIds: string[], delta: 1 | -1): Promise<void> {
    const ids = [...new Set(productIds)].sort();
    if (!ids.length) return;
    const t = rc.tenantId!;
    if (delta < 0) {
      const list = ids.map(() => '?').join(', ');
      await this.db.writeAtCommit(rc, {
        sql: `UPDATE erp_co_purchases SET orders = orders - 1 WHERE tenant_id = ? AND product_id IN (${list}) AND other_id IN (${list})`,
        bindings: [t, ...ids, ...ids],
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

  /** Each customer's latest order that is not cancelled (createdAt), for a batch of customers, in one query. */
  async lastOrderTimes(rc: RequestContext, orders: CompiledSchema, customerRefs: string[]): Promise<Map<string, string>> {
    const d = this.db.dialect;
    const customer = d.jsonField('customerRef', 'string');
    const rows = await this.db.sql(rc).rows<{ customer_ref: string; at: string }>(
      `SELECT ${customer} AS customer_ref, max(created_at) AS at FROM ${orders.tableName} WHERE tenant_id = ? `
      + `AND ${customer} IN (${customerRefs.map(() => '?').join(', ')}) AND ${d.jsonField('status', 'string')} <> 'cancelled' GROUP BY ${customer}`,
      [rc.tenantId!, ...customerRefs]);
    return new Map(rows.map((r) => [r.customer_ref, r.at]));
  }

  /** Product ids of these skus (absent: no such product), on the sku index. */
  async productIdsBySku(rc: RequestContext, products: CompiledSchema, skus: string[]): Promise<Map<string, string>> {
    const d = this.db.dialect;
    const sku = d.jsonField('sku', 'string');
    const idOf = new Map<string, string>();
    for (const chunk of chunks(skus)) {
      const found = await this.db.sql(rc).rows<{ id: string; sku: string }>(
        `SELECT id, ${sku} AS sku FROM ${products.tableName} WHERE tenant_id = ? AND ${sku} IN (${chunk.map(() => '?').join(', ')})`, [rc.tenantId!, ...chunk]);
      for (const r of found) idOf.set(r.sku, r.id);
    }
    return idOf;
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

  /** Which of these products can be recommended (active, in stock), with their sku and name. */
  async recommendable(rc: RequestContext, products: CompiledSchema, ids: string[]): Promise<Map<string, { sku: string; name: string }>> {
    const d = this.db.dialect;
    const eligible = new Map<string, { sku: string; name: string }>();
    for (const chunk of chunks(ids)) {
      const rows = await this.db.sql(rc).rows<{ id: string; sku: string; name: string }>(
        `SELECT id, ${d.jsonField('sku', 'string')} AS sku, ${d.jsonField('name', 'string')} AS name FROM ${products.tableName} WHERE tenant_id = ? `
        + `AND id IN (${chunk.map(() => '?').join(', ')}) AND ${d.jsonField('status', 'string')} = 'active' AND ${d.jsonField('physicalStock', 'integer')} > 0`,
        [rc.tenantId!, ...chunk]);
      for (const r of rows) eligible.set(r.id, { sku: r.sku, name: r.name });
    }
    return eligible;
  }

  /** Active, in-stock products by the number of non-cancelled orders holding them (the co-purchase table's pairs of a product with itself), then sku. */
  async bestSellersByOrders(rc: RequestContext, products: CompiledSchema, limit: number): Promise<Array<{ sku: string; name: string }>> {
    const d = this.db.dialect;
    const rows = await this.db.sql(rc).rows<{ sku: string; name: string }>(
      `SELECT ${d.jsonField('sku', 'string', 'p.data')} AS sku, ${d.jsonField('name', 'string', 'p.data')} AS name FROM erp_co_purchases cp `
      + `CROSS JOIN ${products.tableName} p WHERE cp.tenant_id = ? AND cp.product_id = cp.other_id AND cp.orders > 0 `
      + `AND p.tenant_id = cp.tenant_id AND p.id = cp.product_id `
      + `AND ${d.jsonField('status', 'string', 'p.data')} = 'active' AND ${d.jsonField('physicalStock', 'integer', 'p.data')} > 0 `
      + `ORDER BY cp.orders DESC, sku LIMIT ?`,
      [rc.tenantId!, limit]);
    return rows;
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
