import { Conflict, CouponInvalid, InvalidTransition, NotFound, UUID_PATTERN, ValidationFailed, newId, nowIso, type ErrorDetail, type PackContext, type Page, type RecordQuery, type RequestContext } from '../../core/pack-api.js';
import { InsufficientStock, PriceChanged } from './erp.errors.js';
import { findByRefs, parseRef, type Catalog, type Product } from './catalog.service.js';
import type { Order } from './generated/order.js';
import type { CouponRedeemer } from './coupon-redeemer.js';
import { checkOrderTransition, type OrderStatus } from './order-status.js';
import { orderLine, orderTotals } from './order-totals.js';
import { keptCents, pendingRefunds, restockedUnits, settledRefund, type Refund } from './order-parts.js';
import { OrdersRepository } from './orders.repository.js';
import { PaymentDeadlinesRepository } from './payment-deadlines.repository.js';
import { paymentDueAt, stillUnpaid } from './payment-deadline.js';
import { ProductLookups } from './product-lookups.js';
import { recommender, type Recommend } from './recommender.js';
import { shippingCharge } from './cart-pricing.js';
import type { ShippingOption } from './shipping-options.service.js';
import { lineRate, type TaxRegion } from './tax-rates.js';

export interface PlaceOrderInput {
  clientId: number;
  paymentMethod: string;
  items: Array<{ productId: number | string; quantity: number; unitPrice: number }>;
  customerRef?: string;
  couponCode?: string;
  currency?: string;
  /** A storefront checkout's order (CONTRACT 15.3): its cart, e-mail, destination (tax region) and shipping. */
  checkout?: CheckoutPart;
}

/** What a checkout adds to an order: the cart, the e-mail, the address with its region, the shipping option. */
export interface CheckoutPart {
  /** `pending_payment` for a card payment (CONTRACT 15.3), else `placed`. */
  status: 'placed' | 'pending_payment';
  cartId: string;
  email: string;
  shippingAddress: Record<string, unknown> | null;
  region: TaxRegion | null;
  option: ShippingOption | null;
}

export type { Order } from './generated/order.js';
/** A line of an order as stored. */
export type OrderItem = Order['items'][number];

/** A line of the body after merging: the product, the summed quantity, the price the client saw, where it came from. */
interface MergedLine {
  product: Product;
  quantity: number;
  unitPrice: number;
  /** Index of the first body line of this product (error paths name it). */
  index: number;
}

/**
 * Orders (CONTRACT 11.2): placement checks every line against the catalogue, then in ONE transaction takes
 * each line's stock by a conditional update (products in id order, so two orders never deadlock), redeems
 * the coupon, draws the order number and writes the order, the movements and the events. Orders are
 * `erp.order` records, written only here (the record hooks refuse other writes).
 */
export class OrdersService {
  private readonly repository: OrdersRepository;
  private readonly products: ProductLookups;
  private readonly deadlines: PaymentDeadlinesRepository;

  constructor(
    private readonly pack: PackContext,
    private readonly catalog: Catalog,
    private readonly coupons: () => CouponRedeemer | undefined,
  ) {
    this.repository = new OrdersRepository(pack.db);
    this.products = new ProductLookups(pack.records, this.repository);
    this.deadlines = new PaymentDeadlinesRepository(pack.db);
  }

  /** When a customer last placed an order that is not cancelled (ISO time), or null. */
  async lastOrderAt(rc: RequestContext, customerRef: string): Promise<string | null> {
    return (await this.lastOrderTimes(rc, [customerRef])).get(customerRef) ?? null;
  }

  /** Skus by units sold in non-cancelled orders (the stock ledger), most first, then sku. */
  async bestSellers(rc: RequestContext, limit = 10): Promise<Array<{ sku: string; quantity: number }>> {
    const sold = await this.repository.unitsSold(rc, limit);
    const products = await this.products.byIds(rc, sold.map((s) => s.productId), [], ['sku']);
    return sold.flatMap((s) => (products.has(s.productId) ? [{ sku: products.get(s.productId)!.sku as string, quantity: s.quantity }] : []))
      .sort((a, b) => b.quantity - a.quantity || bySku(a, b)).slice(0, limit);
  }

  /** Skus bought together with `sku` in non-cancelled orders (the co-purchase table), by the number of such orders, most first. */
  async coPurchases(rc: RequestContext, sku: string, limit = 10): Promise<Array<{ sku: string; orders: number }>> {
    const product = await this.pack.records.versionBy(rc, 'erp', 'product', { sku });
    if (!product) return [];
    const pairs = (await this.repository.coPurchasePairs(rc, [product.id])).get(product.id)!;
    const products = await this.products.byIds(rc, pairs.map((p) => p.id), [], ['sku']);
    return pairs.flatMap((p) => (products.has(p.id) ? [{ sku: products.get(p.id)!.sku as string, orders: p.orders }] : []))
      .sort((a, b) => b.orders - a.orders || bySku(a, b)).slice(0, limit);
  }

  /**
   * Each customer's latest order that is not cancelled (createdAt), for a batch of customers (the CRM's cart
   * recovery): the records service's grouped query, a hundred customers a query.
   */
  async lastOrderTimes(rc: RequestContext, customerRefs: string[]): Promise<Map<string, string>> {
    const times = new Map<string, string>();
    const refs = [...new Set(customerRefs)];
    for (let i = 0; i < refs.length; i += 100) {
      const groups = await this.pack.records.group(rc, 'erp', 'order', {
        by: 'customerRef', max: ['createdAt'], limit: 100,
        filter: [{ field: 'customerRef', op: 'in', value: refs.slice(i, i + 100) }, { field: 'status', op: 'ne', value: 'cancelled' }],
      });
      for (const g of groups) times.set(String(g.key), String(g.max.createdAt));
    }
    return times;
  }

  /** Which of `skus` are products of the tenant, whatever their status (the CRM's cart recovery leaves the others out). */
  async productSkus(rc: RequestContext, skus: string[]): Promise<Set<string>> {
    const found = new Set<string>();
    for (let from = 0; from < skus.length; from += 200) {
      const filter = [{ field: 'sku', op: 'in' as const, value: skus.slice(from, from + 200) }];
      const page = await this.pack.records.list(rc, 'erp', 'product', { filter, fields: ['sku'], limit: 200, count: false });
      for (const p of page.items) found.add(String(p.sku));
    }
    return found;
  }

  /**
   * Recommendations for the carts of one run (CONTRACT 11.4; the CRM's cart recovery), asked a batch of carts at
   * a time: see recommender.ts. Built per run, so that what one batch read serves the next ones.
   */
  async recommender(rc: RequestContext): Promise<Recommend> {
    return recommender(rc, this.repository, this.products);
  }

  /**
   * Places an order: one write of the sealed `erp.order` through the records service (its migration gate,
   * validation, hooks and `erp.order.created`), whose document is made inside the write's transaction: the
   * stock of each line taken, the coupon redeemed, the number drawn and the co-purchases counted, all or none.
   */
  async place(rc: RequestContext, input: PlaceOrderInput): Promise<Order> {
    const redeemer = input.couponCode !== undefined ? this.couponRedeemer(input) : null;
    const orderId = newId();
    const order = await this.pack.records.create(rc, 'erp', 'order', async (rc) => {
      const lines = await this.mergedLines(rc, input);
      const currency = this.checkCurrency(input, lines);
      this.checkPrices(lines);
      const taken = new Map<string, Product>();
      for (const line of [...lines].sort((a, b) => (a.product.id < b.product.id ? -1 : 1))) {
        const changed = await this.catalog.changeStock(rc, line.product.id, -line.quantity, 'order', {
          orderId, expect: { priceCents: line.unitPrice, active: true },
        });
        if (!changed) await this.refuseLine(rc, line);
        taken.set(line.product.id, changed!.product);
      }
      const percentOff = redeemer ? (await redeemer.redeem(rc, { code: input.couponCode!, customerRef: input.customerRef!, orderId })).percentOff : 0;
      const checkout = input.checkout;
      const region = checkout?.region ?? null;
      const items: OrderItem[] = lines.map((line) => {
        const p = taken.get(line.product.id)!;
        const base = { quantity: line.quantity, unitPriceCents: line.unitPrice, taxRateBasisPoints: lineRate(p, region) };
        return { productId: p.id, number: p.number, sku: p.sku, name: p.name, ...base, ...orderLine(base, percentOff) };
      });
      const totals = orderTotals(items);
      const shipping = shippingCharge(checkout?.option ?? null, region, totals.subtotalCents - totals.discountCents);
      const number = await this.catalog.repository.nextNumber(rc, 'order');
      await this.repository.countOrder(rc, items.map((i) => i.productId), 1);
      // An order that waits for its payment gets its deadline in this transaction (the payment timeout sweep).
      const dueAt = paymentDueAt(this.pack.config.payments, { status: checkout?.status ?? 'placed', paymentMethod: input.paymentMethod }, Date.now());
      if (dueAt) await this.deadlines.add(rc, orderId, dueAt);
      return {
        number, status: checkout?.status ?? 'placed', clientId: input.clientId, customerRef: input.customerRef ?? null, paymentMethod: input.paymentMethod,
        currency, couponCode: input.couponCode ?? null, items, ...totals,
        taxCents: totals.taxCents + shipping.taxCents, totalCents: totals.totalCents + shipping.cents + shipping.taxCents,
        cartId: checkout?.cartId ?? null, email: checkout?.email ?? null, shippingAddress: checkout?.shippingAddress ?? null,
        shippingOption: shipping.option, shippingCents: shipping.cents, shippingTaxCents: shipping.taxCents,
        paymentStatus: 'pending', fulfillmentStatus: 'unfulfilled', refundedCents: 0, cancelReason: null,
        payments: [], fulfillments: [], refunds: [],
      };
    }, { id: orderId });
    return order;
  }

  async get(rc: RequestContext, ref: string): Promise<Order> {
    const parsed = parseRef(ref);
    const [found] = parsed === null ? [] : await findByRefs(this.pack.records, rc, 'order', [parsed]);
    if (!found) throw NotFound(`No order "${ref.slice(0, 40)}"`);
    return found;
  }

  list(rc: RequestContext, query: RecordQuery): Promise<Page<Record<string, unknown>>> {
    return this.pack.records.list(rc, 'erp', 'order', query);
  }

  /**
   * Moves an order to `to` under its row lock (a read-modify-write of the records service): of two racing
   * moves the second judges the transition from where the first left it (409 invalid_transition), so the stock
   * goes back once. Cancelling is `cancel` (an order that keeps money is refunded first: RefundsService.cancel);
   * moving a placed order to `paid` records a manual payment of what is left to pay (a `pending_payment` card
   * order is paid only through its provider: 409), and `erp.order.paid` goes out with the record event. Shipping
   * (`fulfilled`) is the fulfilments' (FulfillmentsService.shipRest).
   */
  async transition(rc: RequestContext, ref: string, to: Exclude<OrderStatus, 'fulfilled'>): Promise<Order> {
    const order = await this.get(rc, ref);
    checkOrderTransition(order.status, to);
    if (to === 'cancelled') return this.cancel(rc, order.id);
    return this.pack.db.transaction(rc, async (rc) => {
      const changed = await this.pack.records.modify(rc, 'erp', 'order', order.id, (current) => {
        checkOrderTransition(current.status, to);
        if (to === 'paid' && current.status === 'pending_payment') {
          throw InvalidTransition({ from: current.status, to }, [{ path: '/status', message: 'a card payment is settled by its provider' }]);
        }
        if (to === 'paid') return { status: to, ...manualPayment(current, { amountCents: leftToPay(current), reference: null, method: current.paymentMethod }) };
        return { status: to };
      });
      if (to === 'paid') await this.publish(rc, 'erp.order.paid', changed);
      return changed;
    });
  }

  /**
   * Cancels an order by hand (`cancelReason: manual`) under its row lock, in one transaction: the unshipped
   * stock back, the coupon free, `erp.order.cancelled`. An order that shipped anything: 409 invalid_transition
   * (refund instead). `refund` settles, in the same write, the refund of what is left of the payment (CONTRACT
   * 15.4: a paid order is refunded first, then cancelled); without one, an order that still keeps money is
   * refused (409 conflict), so no money is kept for a cancelled order.
   */
  async cancel(rc: RequestContext, orderId: string, refund?: (current: Order) => Pick<Order, 'refunds' | 'refundedCents' | 'paymentStatus'>): Promise<Order> {
    return this.pack.db.transaction(rc, async (rc) => {
      const changed = await this.pack.records.modify(rc, 'erp', 'order', orderId, (current) => {
        checkCancellable(current);
        const money = refund ? refund(current) : {};
        const after = { ...current, ...money };
        if (keptCents(after) > 0 || pendingRefunds(after).length) {
          throw Conflict('A payment of this order is not refunded yet (or its refund is pending): an admin\'s cancellation refunds it first');
        }
        return { status: 'cancelled', cancelReason: 'manual', ...money };
      });
      await this.putBack(rc, [changed]);
      if (refund) await this.publish(rc, 'erp.order.refunded', changed);
      await this.publish(rc, 'erp.order.cancelled', changed);
      return changed;
    });
  }

  /**
   * Records a manual payment of an order while its payment is pending (CONTRACT 15.3; a card order, or one that
   * is paid or cancelled: 409 invalid_transition; more than is left to pay: 400). When the payments reach the
   * total the order becomes `paid` (a fulfilled order stays fulfilled) and `erp.order.paid` goes out.
   */
  async recordPayment(rc: RequestContext, ref: string, input: { amountCents: number; reference?: string; method?: string }): Promise<Order> {
    const order = await this.get(rc, ref);
    return this.pack.db.transaction(rc, async (rc) => {
      const changed = await this.pack.records.modify(rc, 'erp', 'order', order.id, (current) => {
        if (CARD_METHOD.test(current.paymentMethod) || current.status === 'cancelled' || (current.paymentStatus ?? 'pending') !== 'pending') {
          const why = CARD_METHOD.test(current.paymentMethod) ? 'a card order is paid through its provider' : `the order is ${current.status}, its payment ${current.paymentStatus ?? 'pending'}`;
          throw InvalidTransition({ from: current.paymentStatus ?? 'pending', to: 'paid' }, [{ path: '/amountCents', message: why }]);
        }
        const left = leftToPay(current);
        if (input.amountCents > left) {
          throw ValidationFailed(`${left} cents are left to pay`, [{ path: '/amountCents', message: `must be at most ${left}` }]);
        }
        const patch = manualPayment(current, { amountCents: input.amountCents, reference: input.reference ?? null, method: input.method ?? current.paymentMethod });
        if (patch.paymentStatus !== 'paid') return { payments: patch.payments };
        return { ...patch, status: current.status === 'fulfilled' ? 'fulfilled' : 'paid' };
      });
      if (changed.paymentStatus === 'paid') await this.publish(rc, 'erp.order.paid', changed);
      return changed;
    });
  }

  /**
   * Cancels an order still waiting for its card payment (`pending_payment`) for `reason`, in rc's transaction:
   * stock and coupon back, `erp.order.cancelled`. Null when the order is no longer pending (nothing changed).
   */
  async cancelUnpaid(rc: RequestContext, orderId: string, reason: 'payment_failed' | 'payment_cancelled' | 'payment_timeout'): Promise<Order | null> {
    return this.pack.db.transaction(rc, async (rc) => {
      const changed = await this.pack.records.change(rc, 'erp', 'order', orderId, { set: { status: 'cancelled', cancelReason: reason }, where: [['status', '=', 'pending_payment']] });
      if (!changed) return null;
      await this.putBack(rc, [changed]);
      await this.publish(rc, 'erp.order.cancelled', changed);
      return changed;
    });
  }

  /**
   * Cancels orders whose payment did not come in time (CONTRACT 15.3, 15.6; the payment timeout sweep), all of rc's
   * tenant in one transaction (rc's when it has one): each under its row lock (in id order), when it still waits
   * for its payment (see stillUnpaid), `payment_timeout`; then the stock of all of them back at once (a change
   * per product, a movement per order line), their coupons free, an `erp.order.cancelled` each. `then` runs last
   * in the transaction with the outcome: an order cancelled here, or null when it no longer waits (paid,
   * cancelled by a webhook or an editor first, paid in part) or is gone: nothing changed for it.
   */
  async expireMany<T>(rc: RequestContext, orderIds: readonly string[], then: (rc: RequestContext, outcome: Map<string, Order | null>) => Promise<T>): Promise<T> {
    return this.pack.db.transaction(rc, async (rc) => {
      const outcome = new Map<string, Order | null>();
      const cancelled: Order[] = [];
      for (const orderId of [...new Set(orderIds)].sort()) {
        const seen = { due: false };
        const changed = await this.modifyIfPresent(rc, orderId, (current) => {
          seen.due = stillUnpaid(current);
          return seen.due ? { status: 'cancelled', cancelReason: 'payment_timeout' } : undefined;
        });
        outcome.set(orderId, seen.due ? changed : null);
        if (seen.due && changed) cancelled.push(changed);
      }
      await this.putBack(rc, cancelled);
      for (const order of cancelled) await this.publish(rc, 'erp.order.cancelled', order);
      return then(rc, outcome);
    });
  }

  /**
   * A card payment that succeeded (Stripe's webhook, in its transaction). A `pending_payment` order whose amount
   * and currency match becomes paid with the payment recorded and `erp.order.paid`. An amount or currency that
   * differs cancels it (`amount_mismatch`: stock and coupon back); a payment of an order cancelled already is
   * recorded too; either way a `pending` refund of the whole payment is written, which the caller makes at Stripe
   * after commit (returned). A payment recorded already changes nothing. The order is the one the intent's
   * metadata names (checkout puts its id there, and Stripe signs it with the event), read by id under its lock,
   * when it was made with this intent; else the order holding the intent's id (none: null, nothing changes).
   */
  async cardPaid(rc: RequestContext, intent: { id: string; amount_received: number; currency: string; metadata?: Record<string, string> | null }): Promise<PendingRefund | null> {
    const at = nowIso();
    let outcome: 'paid' | 'mismatch' | 'late' | 'other' | null = null;
    let refund: PendingRefund | null = null;
    const settle = (current: Order) => {
      if (current.paymentIntentId !== intent.id) {
        outcome = 'other';
        return;
      }
      if ((current.payments ?? []).some((p) => p.reference === intent.id)) return;
      const payments = [...(current.payments ?? []), { provider: 'stripe' as const, method: 'stripe_card', reference: intent.id, amountCents: intent.amount_received, at }];
      const matches = intent.amount_received === current.totalCents && intent.currency === current.currency.toLowerCase();
      if (current.status === 'pending_payment' && matches) {
        outcome = 'paid';
        return { status: 'paid', paymentStatus: 'paid', paidAt: at, lastPaymentError: null, payments };
      }
      if (current.status !== 'pending_payment' && current.status !== 'cancelled') return;
      outcome = current.status === 'pending_payment' ? 'mismatch' : 'late';
      refund = { orderId: current.id, refundId: newId(), paymentIntentId: intent.id, amountCents: intent.amount_received };
      const refunds = [...(current.refunds ?? []), {
        id: refund.refundId, amountCents: refund.amountCents, items: [], restock: false, reason: outcome === 'mismatch' ? 'amount_mismatch' : 'paid_after_cancellation',
        status: 'pending', providerReference: null, createdAt: at,
      }];
      return outcome === 'mismatch' ? { status: 'cancelled', cancelReason: 'amount_mismatch', payments, refunds } : { payments, refunds };
    };
    const named = intent.metadata?.orderId;
    let changed = typeof named === 'string' && UUID_PATTERN.test(named)
      ? await this.modifyIfPresent(rc, named, settle)
      : null;
    if (!changed || outcome === 'other') {
      outcome = null;
      const order = await this.byPaymentIntent(rc, intent.id);
      if (!order) return null;
      changed = await this.pack.records.modify(rc, 'erp', 'order', order.id, settle);
    }
    if (outcome === 'paid') await this.publish(rc, 'erp.order.paid', changed);
    if (outcome === 'mismatch') {
      await this.putBack(rc, [changed]);
      await this.publish(rc, 'erp.order.cancelled', changed);
    }
    return refund;
  }

  /**
   * Settles a pending refund (the provider's answer or a webhook), in one transaction under the order's lock:
   * `succeeded` is counted in refundedCents (paymentStatus follows), its units restocked when it says so and
   * `erp.order.refunded` emitted; `failed` counts nothing. Null when the refund is not pending (nothing changes).
   */
  async settleRefund(rc: RequestContext, orderId: string, refundId: string, outcome: { status: 'succeeded' | 'failed'; providerReference: string | null }): Promise<{ order: Order; refund: Refund } | null> {
    return this.pack.db.transaction(rc, async (rc) => {
      let refund: Refund | null = null;
      const order = await this.pack.records.modify(rc, 'erp', 'order', orderId, (current) => {
        const settled = settledRefund(current, refundId, outcome);
        if (!settled) return;
        refund = settled.refund;
        return settled.patch;
      });
      if (!refund) return null;
      if (outcome.status === 'succeeded') await this.refunded(rc, order, refund);
      return { order, refund };
    });
  }

  /** What follows a succeeded refund, in rc's transaction: its units back in stock when it restocks (movements `return`), `erp.order.refunded`. */
  async refunded(rc: RequestContext, order: Order, refund: Refund): Promise<void> {
    if (refund.restock) {
      for (const item of [...refund.items].sort((a, b) => (a.sku < b.sku ? -1 : a.sku > b.sku ? 1 : 0))) {
        const line = order.items.find((i) => i.sku === item.sku)!;
        await this.catalog.changeStock(rc, line.productId, item.quantity, 'return', { orderId: order.id });
      }
    }
    await this.publish(rc, 'erp.order.refunded', order);
  }

  /** A card payment attempt that failed: the order stays pending_payment (the shopper may retry) with Stripe's message. */
  async cardFailed(rc: RequestContext, orderId: string, message: string): Promise<void> {
    await this.pack.records.change(rc, 'erp', 'order', orderId, { set: { lastPaymentError: message.slice(0, 1000) }, where: [['status', '=', 'pending_payment']] });
  }

  /** The order of a PaymentIntent (each intent is made for one order), or null: a look-up on the order's paymentIntentId index. */
  async byPaymentIntent(rc: RequestContext, paymentIntentId: string): Promise<Order | null> {
    return (await this.pack.records.findBy(rc, 'erp', 'order', { paymentIntentId })) as Order | null;
  }

  /** `records.modify` of an order that may be gone: null then (nothing changed). */
  private modifyIfPresent(rc: RequestContext, orderId: string, change: (current: Order) => Record<string, unknown> | void): Promise<Order | null> {
    return this.pack.records.modify(rc, 'erp', 'order', orderId, change).catch((err: { code?: string }) => {
      if (err.code === 'not_found') return null;
      throw err;
    });
  }

  /** Keeps the PaymentIntent created for an order. */
  async setPaymentIntent(rc: RequestContext, orderId: string, paymentIntentId: string): Promise<Order> {
    const changed = await this.pack.records.change(rc, 'erp', 'order', orderId, { set: { paymentIntentId } });
    if (!changed) throw NotFound('The order is gone');
    return changed;
  }

  /**
   * Cancelled orders' stock back (movements `cancel`, once: each status moved once), a change per product for
   * all of them, in product order, and their coupons free again.
   */
  private async putBack(rc: RequestContext, orders: readonly Order[]): Promise<void> {
    const parts = new Map<string, Array<{ orderId: string; units: number }>>();
    for (const order of orders) {
      for (const item of order.items) {
        // Units a refund restocked came back already; a product deleted since has no stock to take back.
        const units = item.quantity - restockedUnits(order, item.sku);
        if (units <= 0) continue;
        const ofProduct = parts.get(item.productId);
        if (ofProduct) ofProduct.push({ orderId: order.id, units });
        else parts.set(item.productId, [{ orderId: order.id, units }]);
      }
    }
    for (const productId of [...parts.keys()].sort()) await this.catalog.returnStock(rc, productId, parts.get(productId)!, 'cancel');
    // Cancelled orders no longer count for the recommendations (cancelled is final: never counted again); one statement per product set.
    const sets = new Map<string, { ids: string[]; orders: number }>();
    for (const order of orders) {
      const ids = [...new Set(order.items.map((i) => i.productId))].sort();
      const key = ids.join(',');
      sets.set(key, { ids, orders: (sets.get(key)?.orders ?? 0) + 1 });
    }
    for (const { ids, orders: n } of sets.values()) await this.repository.countOrder(rc, ids, -1, n);
    for (const order of orders) if (order.couponCode) await this.coupons()?.release(rc, { orderId: order.id });
  }

  /** An order event of CONTRACT 15.3 through the outbox, in rc's transaction. */
  async publish(rc: RequestContext, name: 'erp.order.paid' | 'erp.order.cancelled' | 'erp.order.fulfilled' | 'erp.order.refunded', order: Order): Promise<void> {
    await this.pack.events.publish(rc, {
      name,
      payload: {
        orderId: order.id, number: order.number, status: order.status, paymentStatus: order.paymentStatus ?? 'pending',
        fulfillmentStatus: order.fulfillmentStatus ?? 'unfulfilled', totalCents: order.totalCents, refundedCents: order.refundedCents ?? 0,
        cancelReason: order.cancelReason ?? null,
      },
    });
  }

  /** Resolves the lines' products (by number or UUID, one query) and merges lines of the same product; 400 naming unknown or archived ones. */
  private async mergedLines(rc: RequestContext, input: PlaceOrderInput): Promise<MergedLine[]> {
    const products = await this.catalog.findMany(rc, input.items.map((i) => i.productId));
    const issues: ErrorDetail[] = [];
    const merged = new Map<string, MergedLine>();
    input.items.forEach((item, index) => {
      const product = products.get(item.productId);
      if (!product || product.status !== 'active') {
        issues.push({ path: `/items/${index}/productId`, message: product ? 'the product is archived' : 'no such product' });
        return;
      }
      const line = merged.get(product.id);
      if (!line) merged.set(product.id, { product, quantity: item.quantity, unitPrice: item.unitPrice, index });
      else {
        line.quantity += item.quantity;
        if (item.unitPrice !== product.priceCents) line.unitPrice = item.unitPrice;
      }
    });
    if (issues.length) throw ValidationFailed('Some lines name no product that can be ordered', issues);
    return [...merged.values()];
  }

  /** One currency per order: the products', and the body's when it names one. */
  private checkCurrency(input: PlaceOrderInput, lines: MergedLine[]): string {
    const currency = lines[0].product.currency;
    const mixed = lines.filter((l) => l.product.currency !== currency);
    if (mixed.length) {
      throw ValidationFailed('The products of one order must share one currency', mixed.map((l) => ({
        path: `/items/${l.index}/productId`, message: `is priced in ${l.product.currency}, the order in ${currency}`,
      })));
    }
    if (input.currency !== undefined && input.currency !== currency) {
      throw ValidationFailed(`The products are priced in ${currency}`, [{ path: '/currency', message: `must be ${currency}` }]);
    }
    return currency;
  }

  /** 409 price_changed naming every line whose unitPrice is not the product's current price. */
  private checkPrices(lines: MergedLine[]): void {
    const changed = lines.filter((l) => l.unitPrice !== l.product.priceCents);
    if (changed.length) {
      throw PriceChanged(undefined, changed.map((l) => ({
        path: `/items/${l.index}/unitPrice`, message: `the price of ${l.product.sku} is ${l.product.priceCents}`, expected: l.product.priceCents,
      })));
    }
  }

  private couponRedeemer(input: PlaceOrderInput): CouponRedeemer {
    if (input.customerRef === undefined) throw CouponInvalid('a coupon needs a customerRef', [{ path: '/customerRef', message: 'is required with a couponCode' }]);
    const redeemer = this.coupons();
    if (!redeemer) throw CouponInvalid('coupons are not available', [{ path: '/couponCode', message: 'no coupon service is installed' }]);
    return redeemer;
  }

  /** Why a line's conditional update took nothing (read in the transaction): gone or archived 400, price 409, else stock 409. */
  private async refuseLine(rc: RequestContext, line: MergedLine): Promise<never> {
    const now = (await this.catalog.findMany(rc, [line.product.id])).get(line.product.id);
    if (!now || now.status !== 'active') {
      throw ValidationFailed('A line names no product that can be ordered', [{ path: `/items/${line.index}/productId`, message: now ? 'the product is archived' : 'no such product' }]);
    }
    if (now.priceCents !== line.unitPrice) {
      throw PriceChanged(undefined, [{ path: `/items/${line.index}/unitPrice`, message: `the price of ${now.sku} is ${now.priceCents}`, expected: now.priceCents }]);
    }
    throw InsufficientStock(`Not enough stock of ${now.sku}: ${now.physicalStock} left, ${line.quantity} ordered`, [{
      path: `/items/${line.index}/quantity`, message: `only ${now.physicalStock} in stock`, sku: now.sku, available: now.physicalStock,
    }]);
  }
}

/** A refund written `pending` in a transaction, to be made at the payment provider after it commits. */
export interface PendingRefund {
  orderId: string;
  refundId: string;
  paymentIntentId: string;
  amountCents: number;
}

/** A card payment method (`<processor>_card`): paid through its provider, never by hand. */
const CARD_METHOD = /_card$/;

/**
 * 409 invalid_transition unless the order may be cancelled: its status allows it and nothing of it shipped
 * (CONTRACT 15.4: a fulfilled or partly fulfilled order is refunded instead).
 */
export function checkCancellable(order: Order): void {
  checkOrderTransition(order.status, 'cancelled');
  if ((order.fulfillmentStatus ?? 'unfulfilled') !== 'unfulfilled') {
    throw InvalidTransition({ from: order.status, to: 'cancelled' }, [{ path: '/status', message: `the order is ${order.fulfillmentStatus}: refund it instead` }]);
  }
}

/** What is left to pay of an order: its total less its payments. */
function leftToPay(order: Order): number {
  return order.totalCents - (order.payments ?? []).reduce((sum, p) => sum + p.amountCents, 0);
}

/** The order's payments with a manual one added, and `paymentStatus: paid` with `paidAt` once they reach the total. */
function manualPayment(order: Order, payment: { amountCents: number; reference: string | null; method: string }): Pick<Order, 'payments' | 'paymentStatus' | 'paidAt'> {
  const at = nowIso();
  const payments = [...(order.payments ?? [])];
  if (payment.amountCents > 0) payments.push({ provider: 'manual', method: payment.method, reference: payment.reference, amountCents: payment.amountCents, at });
  const paid = payments.reduce((sum, p) => sum + p.amountCents, 0) >= order.totalCents;
  return paid ? { payments, paymentStatus: 'paid', paidAt: at } : { payments };
}

/** By sku, in code points (the same order on both engines). */
function bySku(a: { sku: string }, b: { sku: string }): number {
  return a.sku < b.sku ? -1 : a.sku > b.sku ? 1 : 0;
}
