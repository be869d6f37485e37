import type { CompiledSchema, RequestContext } from '../../core/pack-api.js';
import type { OrdersRepository } from './orders.repository.js';

/** A product recommended for a cart, and why. */
export interface Recommendation {
  sku: string;
  name: string;
  reason: 'bought_together' | 'best_seller';
}

export type Recommend = (carts: Array<{ key: string; skus: string[] }>, limit: number) => Promise<Map<string, Recommendation[]>>;

/**
 * Recommendations for the carts of one run (CONTRACT 11.4), asked a batch of carts at a time. Per cart: the
 * active, in-stock products not in the cart, by their co-purchase counts with the cart's products summed (an
 * order holding two of the cart's products counts for each), then sku (code points, the same on both engines);
 * filled up with the best sellers (orders holding them, then sku). What a batch needs of the database is read
 * with a few queries whatever the batch holds (sku look-up, pairs, which products can be recommended), and kept
 * for the run's later batches: each product's pairs are read once a run. A run sees the counts as they were
 * when it first needed them.
 */
export function recommender(rc: RequestContext, repository: OrdersRepository, products: CompiledSchema): Recommend {
  const idOf = new Map<string, string | null>();
  const partners = new Map<string, Array<{ id: string; orders: number }>>();
  const eligible = new Map<string, { sku: string; name: string } | null>();
  let best: Array<{ sku: string; name: string }> = [];
  let bestFor = -1;

  return async (carts, limit) => {
    const skus = [...new Set(carts.flatMap((c) => c.skus))].filter((s) => !idOf.has(s));
    if (skus.length) {
      const found = await repository.productIdsBySku(rc, products, skus);
      for (const s of skus) idOf.set(s, found.get(s) ?? null);
    }
    const ids = [...new Set(carts.flatMap((c) => c.skus).map((s) => idOf.get(s)).filter((id): id is string => !!id))].filter((id) => !partners.has(id));
    if (ids.length) for (const [id, list] of await repository.coPurchasePairs(rc, ids)) partners.set(id, list);
    const named = [...new Set(ids.flatMap((id) => partners.get(id)!.map((p) => p.id)))].filter((id) => !eligible.has(id));
    if (named.length) {
      const found = await repository.recommendable(rc, products, named);
      for (const id of named) eligible.set(id, found.get(id) ?? null);
    }
    const longest = Math.max(0, ...carts.map((c) => c.skus.length));
    if (bestFor < limit + longest) {
      bestFor = limit + longest;
      best = await repository.bestSellersByOrders(rc, products, bestFor);
    }

    const result = new Map<string, Recommendation[]>();
    for (const cart of carts) {
      const inCart = new Set(cart.skus.map((s) => idOf.get(s)).filter((id): id is string => !!id));
      const scores = new Map<string, number>();
      for (const id of inCart) {
        for (const p of partners.get(id)!) {
          if (!inCart.has(p.id) && eligible.get(p.id)) scores.set(p.id, (scores.get(p.id) ?? 0) + p.orders);
        }
      }
      const list: Recommendation[] = [...scores].map(([id, score]) => ({ score, ...eligible.get(id)! }))
        .sort((a, b) => b.score - a.score || byCodePoints(a.sku, b.sku))
        .slice(0, limit)
        .map(({ sku, name }) => ({ sku, name, reason: 'bought_together' as const }));
      const taken = new Set([...cart.skus, ...list.map((r) => r.sku)]);
      for (const b of best) {
        if (list.length >= limit) break;
        if (!taken.has(b.sku)) list.push({ sku: b.sku, name: b.name, reason: 'best_seller' });
      }
      result.set(cart.key, list);
    }
    return result;
  };
}

function byCodePoints(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
