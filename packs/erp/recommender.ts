import type { RequestContext } from '../../core/pack-api.js';
import type { OrdersRepository } from './orders.repository.js';
import type { ProductLookups } from './product-lookups.js';

/** A product recommended for a cart, and why. */
export interface Recommendation {
  sku: string;
  name: string;
  reason: 'bought_together' | 'best_seller';
}

export type Recommend = (carts: Array<{ key: string; skus: string[] }>, limit: number) => Promise<Map<string, Recommendation[]>>;

/**
 * Recommendations for the carts of one run (CONTRACT 11.4), asked a batch of carts at a time. Per cart: the
 * active, in-stock products not in the cart, by the number of orders holding them and at least one of the cart's
 * products, then sku (code points, the same on both engines). That number is the sum of the product's pair counts
 * with the cart's products, less what orders holding several of the cart's products added more than once: for the
 * carts whose products were bought together, those orders are found in the orders of each product and their
 * products, read from the ledger once a run (two statements a batch at most, for what the run has not read yet);
 * filled up with the best sellers (orders holding them, then sku). What a batch needs of the database is read
 * with a few queries whatever the batch holds (sku look-up, pairs, which products can be recommended), and kept
 * for the run's later batches: each product's pairs are read once a run. A run sees the counts as they were
 * when it first needed them.
 */
export function recommender(rc: RequestContext, repository: OrdersRepository, products: ProductLookups): Recommend {
  const idOf = new Map<string, string | null>();
  // Products as small numbers, so that a cart's sums are an array indexed by product.
  const numberOf = new Map<string, number>();
  const info: Array<{ sku: string; name: string } | null | undefined> = [];
  const partners: Array<{ others: Int32Array; orders: Float64Array } | undefined> = [];
  const number = (id: string) => {
    let n = numberOf.get(id);
    if (n === undefined) numberOf.set(id, (n = numberOf.size));
    return n;
  };
  let scores = new Float64Array(0);
  /** Orders (not cancelled) holding a product, and products of an order: read once a run, as carts need them. */
  const ordersOf = new Map<string, string[]>();
  const productsOf = new Map<string, string[]>();
  let best: Array<{ sku: string; name: string }> = [];
  let bestFor = -1;

  return async (carts, limit) => {
    const skus = [...new Set(carts.flatMap((c) => c.skus))].filter((s) => !idOf.has(s));
    if (skus.length) {
      const found = await products.idsBySku(rc, skus);
      for (const s of skus) idOf.set(s, found.get(s) ?? null);
    }
    const ids = [...new Set(carts.flatMap((c) => c.skus).map((s) => idOf.get(s)).filter((id): id is string => !!id))].filter((id) => partners[number(id)] === undefined);
    const named = new Set<string>();
    if (ids.length) {
      for (const [id, list] of await repository.coPurchasePairs(rc, ids)) {
        partners[number(id)] = { others: Int32Array.from(list, (p) => number(p.id)), orders: Float64Array.from(list, (p) => p.orders) };
        for (const p of list) if (info[number(p.id)] === undefined) named.add(p.id);
      }
    }
    if (named.size) {
      const found = await products.recommendable(rc, [...named]);
      for (const id of named) info[number(id)] = found.get(id) ?? null;
    }
    const longest = Math.max(0, ...carts.map((c) => c.skus.length));
    if (bestFor < limit + longest) {
      bestFor = limit + longest;
      best = await products.bestSellersByOrders(rc, bestFor);
    }
    // Carts whose sums count some orders more than once: two of their products were bought together.
    const together = carts.map((cart) => [...new Set(cart.skus.map((s) => idOf.get(s)).filter((id): id is string => !!id))])
      .map((ids, i) => ({ key: carts[i].key, ids }))
      .filter(({ ids }) => ids.length > 1 && ids.some((id) => {
        const { others } = partners[number(id)]!;
        return ids.some((other) => other !== id && others.includes(number(other)));
      }));
    const overcounts = await overcountsOf(together);
    if (scores.length < numberOf.size) scores = new Float64Array(numberOf.size * 2);

    const result = new Map<string, Recommendation[]>();
    for (const cart of carts) {
      const inCart = new Set(cart.skus.map((s) => idOf.get(s)).filter((id): id is string => !!id).map(number));
      const touched: number[] = [];
      for (const n of inCart) {
        const { others, orders } = partners[n]!;
        for (let i = 0; i < others.length; i++) {
          const o = others[i];
          if (scores[o] === 0) touched.push(o);
          scores[o] += orders[i];
        }
      }
      for (const [id, extra] of overcounts.get(cart.key) ?? []) {
        const o = numberOf.get(id);
        if (o !== undefined && scores[o] > 0) scores[o] -= extra;
      }
      // The first `limit` by score, then sku, of the products that can be recommended and are not in the cart.
      const top: Array<{ score: number; sku: string; name: string }> = [];
      for (const o of touched) {
        const score = scores[o];
        scores[o] = 0;
        const product = info[o];
        if (!product || inCart.has(o)) continue;
        const entry = { score, ...product };
        let at = top.length;
        while (at > 0 && before(entry, top[at - 1])) at--;
        if (at < limit) {
          top.splice(at, 0, entry);
          if (top.length > limit) top.pop();
        }
      }
      const list: Recommendation[] = top.map(({ sku, name }) => ({ sku, name, reason: 'bought_together' as const }));
      const taken = new Set([...cart.skus, ...list.map((r) => r.sku)]);
      for (const b of best) {
        if (list.length >= limit) break;
        if (!taken.has(b.sku)) list.push({ sku: b.sku, name: b.name, reason: 'best_seller' });
      }
      result.set(cart.key, list);
    }
    return result;
  };

  /**
   * Per cart and product: how many times the summed pair counts counted an order more than once (an order
   * holding k of the cart's products and the product counted k times, once is right).
   */
  async function overcountsOf(carts: Array<{ key: string; ids: string[] }>): Promise<Map<string, Map<string, number>>> {
    const result = new Map<string, Map<string, number>>();
    if (!carts.length) return result;
    const products = [...new Set(carts.flatMap((c) => c.ids))].filter((id) => !ordersOf.has(id));
    if (products.length) for (const [id, orders] of await repository.ordersHolding(rc, products)) ordersOf.set(id, orders);
    const held = carts.map(({ key, ids }) => {
      const times = new Map<string, number>();
      for (const id of ids) for (const order of ordersOf.get(id)!) times.set(order, (times.get(order) ?? 0) + 1);
      return { key, several: [...times].filter(([, k]) => k > 1) };
    });
    const orders = [...new Set(held.flatMap((h) => h.several.map(([order]) => order)))].filter((o) => !productsOf.has(o));
    if (orders.length) for (const [order, list] of await repository.productsOf(rc, orders)) productsOf.set(order, list);
    for (const { key, several } of held) {
      const extra = new Map<string, number>();
      for (const [order, k] of several) for (const product of productsOf.get(order)!) extra.set(product, (extra.get(product) ?? 0) + k - 1);
      result.set(key, extra);
    }
    return result;
  }
}

/** a ranks before b: a higher score, then the lower sku (code points, the same on both engines). */
function before(a: { score: number; sku: string }, b: { score: number; sku: string }): boolean {
  return a.score > b.score || (a.score === b.score && a.sku < b.sku);
}
