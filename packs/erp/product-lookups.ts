import type { DataRecord, PackContext, RecordQuery, RequestContext } from '../../core/pack-api.js';
import type { OrdersRepository } from './orders.repository.js';

/** Values an `in` filter holds at most (the list query's limit), and so ids or skus a list query asks for. */
const PER_QUERY = 100;

/**
 * What ERP reads of its products by many ids or skus (the recommender, best sellers, co-purchases), through the
 * records service's typed query: a list query per hundred, with `filter` and `fields` added.
 */
export class ProductLookups {
  constructor(private readonly records: PackContext['records'], private readonly orders: OrdersRepository) {}

  /** The products with these ids that also match `filter`, with `fields` (and id), by id. */
  async byIds(rc: RequestContext, ids: string[], filter: NonNullable<RecordQuery['filter']> = [], fields?: string[]): Promise<Map<string, DataRecord>> {
    return this.byField(rc, 'id', ids, filter, fields, (p) => p.id);
  }

  /** Product ids of these skus (absent: no such product). */
  async idsBySku(rc: RequestContext, skus: string[]): Promise<Map<string, string>> {
    const found = await this.byField(rc, 'sku', skus, [], ['sku'], (p) => p.sku as string);
    return new Map([...found].map(([sku, p]) => [sku, p.id]));
  }

  /** Which of these products can be recommended (active, in stock), with their sku and name. */
  async recommendable(rc: RequestContext, ids: string[]): Promise<Map<string, { sku: string; name: string }>> {
    const found = await this.byIds(rc, ids, [{ field: 'status', op: 'eq', value: 'active' }, { field: 'physicalStock', op: 'gt', value: 0 }], ['sku', 'name']);
    return new Map([...found].map(([id, p]) => [id, { sku: p.sku as string, name: p.name as string }]));
  }

  /**
   * Active, in-stock products by the number of non-cancelled orders holding them (the co-purchase table's pairs of a
   * product with itself), then sku: the table read a page at a time until the `limit`-th is known.
   */
  async bestSellersByOrders(rc: RequestContext, limit: number): Promise<Array<{ sku: string; name: string }>> {
    const page = 500;
    const found: Array<{ orders: number; sku: string; name: string }> = [];
    for (let offset = 0; ; offset += page) {
      const rows = await this.orders.mostOrdered(rc, page, offset);
      const eligible = await this.recommendable(rc, rows.map((r) => r.productId));
      for (const r of rows) {
        const product = eligible.get(r.productId);
        if (product) found.push({ orders: r.orders, ...product });
      }
      found.sort((a, b) => b.orders - a.orders || (a.sku < b.sku ? -1 : a.sku > b.sku ? 1 : 0));
      const last = rows[rows.length - 1];
      // Done when the table is read, or the next rows hold fewer orders than the limit-th found.
      if (rows.length < page || (found.length >= limit && last.orders < found[limit - 1].orders)) break;
    }
    return found.slice(0, limit).map(({ sku, name }) => ({ sku, name }));
  }

  private async byField(
    rc: RequestContext, field: 'id' | 'sku', values: string[], filter: NonNullable<RecordQuery['filter']>, fields: string[] | undefined, key: (p: DataRecord) => string,
  ): Promise<Map<string, DataRecord>> {
    const found = new Map<string, DataRecord>();
    const unique = [...new Set(values)];
    for (let i = 0; i < unique.length; i += PER_QUERY) {
      const value = unique.slice(i, i + PER_QUERY);
      const query: RecordQuery = { filter: [{ field, op: 'in', value }, ...filter], limit: PER_QUERY, count: false, ...(fields ? { fields } : {}) };
      const { items } = await this.records.list(rc, 'erp', 'product', query);
      for (const p of items) found.set(key(p), p);
    }
    return found;
  }
}
