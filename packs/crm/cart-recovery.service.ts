import { nowIso } from '../../core/pack-api.js';
import type { PackContext, RequestContext } from '../../core/pack-api.js';
import { cartSkus, deriveCart } from './cart.js';
import { cartKey, CartRecoveryRepository } from './cart-recovery.repository.js';
import { cartMessage, type AiStatus } from './cart-message.js';
import { couponCode, type CouponsService } from './coupons.service.js';
import type { CustomerContactsService } from './customer-contacts.service.js';

/** What the recovery needs to know of the orders (the ERP pack's `erp.orders` provides it). */
export interface OrderHistory {
  /** The createdAt of each customer's latest order that is not cancelled (customers without one are absent). */
  lastOrderTimes(rc: RequestContext, customerRefs: string[]): Promise<Map<string, string>>;
  /**
   * Recommendations for the carts of one run: the function answers, for a batch of carts (by key), at most
   * `limit` active, in-stock products not in the cart each: first those bought together with the cart's skus
   * (orders not cancelled), then the best sellers; by count, then sku. Products in no order never appear. Its
   * queries are per batch, never per cart, and what it read serves the run's later batches.
   */
  recommender(rc: RequestContext): Promise<(carts: Array<{ key: string; skus: string[] }>, limit: number) => Promise<Map<string, Recommendation[]>>>;
  /** Which of `skus` are products of the tenant (any status): a cart leaves the others out (CONTRACT 13). */
  productSkus(rc: RequestContext, skus: string[]): Promise<Set<string>>;
}

type Recommend = Awaited<ReturnType<OrderHistory['recommender']>>;

export interface Recommendation {
  sku: string;
  name: string;
  reason: 'bought_together' | 'best_seller';
}

export interface RecoveryOptions {
  olderThanMinutes: number;
  maxAgeDays: number;
  dryRun: boolean;
  coupon: { percentOff: number; expiresInDays: number };
  useAi: boolean;
}

export const RECOVERY_DEFAULTS: RecoveryOptions = {
  olderThanMinutes: 60, maxAgeDays: 7, dryRun: false, coupon: { percentOff: 10, expiresInDays: 7 }, useAi: false,
};

export type SkipReason = 'ordered' | 'empty' | 'bot' | 'too_old' | 'not_old_enough' | 'already_recovered';

export interface RecoveredCart {
  customerRef: string;
  items: Array<{ sku: string; quantity: number }>;
  lastActivityAt: string;
  coupon: { code: string; percentOff: number; expiresAt: string } | null;
  recommendations: Recommendation[];
  message: string;
}

export interface RecoveryResult {
  recovered: RecoveredCart[];
  skipped: Array<{ customerRef: string; reason: SkipReason }>;
  /** `off` without use_ai; `unavailable` with use_ai and no LLM configured; `used`, or `failed` (template kept). */
  ai: AiStatus;
}

/** Customers read per batch: their events are in memory together, never all of a tenant's. */
const BATCH = 500;
const RECOMMENDATIONS = 3;

/**
 * Abandoned-cart recovery (CONTRACT 11.4). Carts come from the customers' cart events, read a batch of
 * customers at a time; the last orders and the recommendations come from the ERP's order history. A cart
 * (customer and last cart event) is recovered once: claiming it is an insert on its key, so concurrent runs
 * in any process never make two coupons for it. A batch's claims, coupons and `crm.cart.abandoned` events are
 * one transaction.
 */
export class CartRecoveryService {
  private readonly repository: CartRecoveryRepository;

  constructor(
    private readonly pack: PackContext,
    private readonly coupons: CouponsService,
    private readonly history: () => OrderHistory,
    private readonly contacts: CustomerContactsService,
  ) {
    this.repository = new CartRecoveryRepository(pack.db);
  }

  async run(rc: RequestContext, options: RecoveryOptions): Promise<RecoveryResult> {
    const now = Date.now();
    const llm = this.pack.config.llm;
    const ai: AiStatus = !options.useAi ? 'off' : llm.baseUrl && llm.model ? 'used' : 'unavailable';
    const result: RecoveryResult = { recovered: [], skipped: [], ai };
    const history = this.history();
    const recommend = await history.recommender(rc);
    for (let after: string | null = null; ;) {
      const customers = await this.repository.customersWithCartEvents(rc, after, BATCH);
      if (!customers.length) break;
      after = customers[customers.length - 1];
      const [events, lastOrders] = await Promise.all([this.repository.cartEvents(rc, customers), history.lastOrderTimes(rc, customers)]);
      const products = await history.productSkus(rc, cartSkus(events.values()));
      const isProduct = (sku: string) => products.has(sku);

      const candidates: Candidate[] = [];
      for (const customerRef of customers) {
        const cart = deriveCart(events.get(customerRef) ?? [], lastOrders.get(customerRef) ?? null, isProduct);
        if (cart.kind === 'none') continue;
        const age = now - Date.parse(cart.lastEvent.occurredAt);
        const reason: SkipReason | null = cart.kind !== 'cart' ? cart.kind
          : cart.bot ? 'bot'
            : age >= options.maxAgeDays * 86400_000 ? 'too_old'
              : age <= options.olderThanMinutes * 60_000 ? 'not_old_enough'
                : null;
        if (reason) result.skipped.push({ customerRef, reason });
        else if (cart.kind === 'cart') candidates.push({ customerRef, lastEventId: cart.lastEvent.id, lastActivityAt: cart.lastEvent.occurredAt, items: cart.items });
      }

      const done = await this.repository.recovered(rc, candidates);
      const fresh = candidates.filter((cart) => {
        if (!done.has(cartKey(cart.customerRef, cart.lastEventId))) return true;
        result.skipped.push({ customerRef: cart.customerRef, reason: 'already_recovered' });
        return false;
      });
      if (fresh.length) await this.recover(rc, fresh, options, recommend, result);
    }
    const byCustomer = (a: { customerRef: string }, b: { customerRef: string }) => (a.customerRef < b.customerRef ? -1 : a.customerRef > b.customerRef ? 1 : 0);
    result.recovered.sort(byCustomer);
    result.skipped.sort(byCustomer);
    return result;
  }

  /**
   * A batch of carts: recommendations (one question to the run's recommender), messages (before any transaction:
   * an LLM may take seconds), then, unless dryRun, one transaction that claims the carts, stores the coupons of
   * those it claimed, raises their events and queues the reminder mails of customers who take them. A cart
   * another run claimed meanwhile is `already_recovered`.
   */
  private async recover(rc: RequestContext, carts: Candidate[], options: RecoveryOptions, recommend: Recommend, result: RecoveryResult): Promise<void> {
    const recommendations = await recommend(carts.map((c) => ({ key: c.customerRef, skus: c.items.map((i) => i.sku) })), RECOMMENDATIONS);
    const expiresAt = new Date(Date.now() + options.coupon.expiresInDays * 86400_000).toISOString();
    const prepared: Array<{ cart: Candidate; recovered: RecoveredCart }> = [];
    for (const cart of carts) {
      const coupon = options.dryRun ? null : { code: couponCode(), percentOff: options.coupon.percentOff, expiresAt };
      const recs = recommendations.get(cart.customerRef) ?? [];
      const { message, ai } = await cartMessage(this.pack, { items: cart.items, coupon, recommendations: recs }, options.useAi);
      if (ai === 'failed') result.ai = ai;
      prepared.push({ cart, recovered: { customerRef: cart.customerRef, items: cart.items, lastActivityAt: cart.lastActivityAt, coupon, recommendations: recs, message } });
    }
    if (options.dryRun) {
      result.recovered.push(...prepared.map((p) => p.recovered));
      return;
    }
    const claimed = await this.pack.db.transaction(rc, async (rc) => {
      const now = nowIso();
      const won = await this.repository.claim(rc, prepared.map(({ cart, recovered }) => ({ customerRef: cart.customerRef, lastEventId: cart.lastEventId, couponCode: recovered.coupon!.code })), now);
      const mine = prepared.map((p) => p.recovered).filter((r) => won.has(r.customerRef));
      // One statement for the batch's coupons, multi-row statements for its events.
      await this.coupons.issueMany(rc, mine.map((r) => ({ ...r.coupon!, customerRef: r.customerRef })));
      await this.pack.events.publishMany(rc, mine.map(({ lastActivityAt: _at, ...payload }) => ({ name: 'crm.cart.abandoned', payload })));
      // The reminder mails of customers who take them: claimed with the cart, so a cart is mailed once.
      await this.contacts.remind(rc, mine);
      return won;
    });
    for (const { recovered } of prepared) {
      if (claimed.has(recovered.customerRef)) result.recovered.push(recovered);
      else result.skipped.push({ customerRef: recovered.customerRef, reason: 'already_recovered' });
    }
  }
}

interface Candidate {
  customerRef: string;
  lastEventId: string;
  lastActivityAt: string;
  items: RecoveredCart['items'];
}
