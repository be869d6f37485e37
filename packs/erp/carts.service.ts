import { createHash, randomBytes } from 'node:crypto';
import { Conflict, CouponInvalid, NotFound, UpstreamFailed, ValidationFailed, newId, nowIso } from '../../core/pack-api.js';
import { InsufficientStock, PriceChanged } from './erp.errors.js';
import type { ErrorDetail, PackContext, RequestContext } from '../../core/pack-api.js';
import { priceCart, type CartPrice, type PricedProduct } from './cart-pricing.js';
import type { CartEventRecorder, CouponChecker } from './cart-services.js';
import { CartsRepository, type CartChange, type CartLine, type CartRow } from './carts.repository.js';
import { serves, type ShippingOption, type ShippingOptionsService } from './shipping-options.service.js';
import type { CheckoutConfig, CheckoutConfigCache } from './checkout-config.js';
import type { TaxRegion } from './tax-rates.js';
import type { Order, OrdersService } from './orders.service.js';
import type { PaymentProvidersService } from './payment-providers.service.js';
import type { StripePayments } from './stripe-payments.js';

/** A cart expires this long after its last change (CONTRACT 15.2). */
export const CART_LIFETIME_MS = 7 * 24 * 3600_000;
/** The most units of one sku a cart holds. */
export const MAX_QUANTITY = 10_000;
/** The most lines of a cart (one per sku): what one product query by sku reads. */
export const MAX_LINES = 100;

export interface CartItemInput {
  sku: string;
  quantity: number;
}

export interface CartInput {
  currency?: string;
  customerRef?: string;
  email?: string;
  items?: CartItemInput[];
}

export type CartAnswer = {
  id: string;
  status: 'open' | 'completed' | 'expired';
  currency: string;
  customerRef: string | null;
  email: string | null;
  shippingAddress: Record<string, unknown> | null;
  couponCode: string | null;
  order: CartOrder | null;
  expiresAt: string;
  createdAt: string;
  updatedAt: string;
} & CartPrice;

/** The order of a completed cart, as its answer shows it. */
export interface CartOrder {
  id: string;
  number: number;
  status: string;
  paymentStatus: string;
  clientSecret: string | null;
}

/** The body of a checkout (CONTRACT 15.3). */
export interface CheckoutInput {
  paymentMethod: 'stripe_card' | 'bank_transfer' | 'cash_on_delivery';
  email?: string;
  clientId?: number;
  expectedTotalCents?: number;
}

/** A checkout's answer: the order placed and how it is to be paid. */
export interface CheckoutAnswer {
  order: Order;
  payment: { provider: 'manual'; method: string; status: 'pending' } | { provider: 'stripe'; paymentIntentId: string; clientSecret: string | null; status: string };
}

/** The smallest card payment Stripe takes (CONTRACT 15.3). */
const MIN_CARD_CENTS = 50;

/** What the CRM learns of a cart: one event per line change of a cart with a customerRef. */
interface CartEvent {
  customerRef: string;
  eventType: 'cart.item_added' | 'cart.item_removed';
  sku: string;
  quantity: number;
}

/** The secret of a cart as stored: its SHA-256 (the token has 256 random bits, so no salt or stretching). */
export function tokenHash(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/**
 * Server-side carts of storefronts (CONTRACT 15.2), in the ERP pack's own tables: found by id and secret
 * token (a wrong or missing token is the same 404 as no cart), priced at every read from the live
 * catalogue, regions and options. A change of an open cart is one conditional UPDATE of its row first (open,
 * unexpired, the token's), which also holds the row until the change commits: line changes that follow are
 * serialised per cart. A cart takes no stock. A cart with a customerRef tells the CRM (`crm.events`) what
 * changed, after the change commits.
 */
export class CartsService {
  readonly repository: CartsRepository;

  constructor(
    private readonly pack: PackContext,
    private readonly config: CheckoutConfigCache,
    private readonly options: ShippingOptionsService,
    private readonly orders: OrdersService,
    private readonly providers: PaymentProvidersService,
    private readonly stripe: StripePayments,
    private readonly coupons: () => CouponChecker | undefined,
    private readonly events: () => CartEventRecorder | undefined,
  ) {
    this.repository = new CartsRepository(pack.db);
  }

  /** A new cart; its token is in this answer only. */
  async create(rc: RequestContext, input: CartInput): Promise<CartAnswer & { token: string }> {
    const currency = input.currency ?? 'EUR';
    const merged = new Map<string, { quantity: number; index: number }>();
    (input.items ?? []).forEach((item, index) => {
      const line = merged.get(item.sku);
      if (line) line.quantity += item.quantity;
      else merged.set(item.sku, { quantity: item.quantity, index });
    });
    const products = await this.products(rc, [...merged.keys()]);
    const issues: ErrorDetail[] = [];
    for (const [sku, line] of merged) {
      const issue = lineIssue(products.get(sku), sku, currency, line.quantity, `/items/${line.index}`);
      if (issue) issues.push(issue);
    }
    if (issues.length) throw ValidationFailed('An item of the cart cannot be added', issues);
    for (const [sku, line] of merged) assertInStock(products.get(sku)!, line.quantity, `/items/${line.index}/quantity`);

    const token = randomBytes(32).toString('base64url');
    const now = nowIso();
    const cart: CartRow = {
      id: newId(), status: 'open', currency, customerRef: input.customerRef ?? null, email: input.email ?? null,
      shippingAddress: null, shippingOptionId: null, couponCode: null, couponPercentOff: null, orderId: null, clientSecret: null,
      createdAt: now, updatedAt: now, expiresAt: expiry(now),
    };
    const lines = [...merged].map(([sku, line]) => ({ sku, quantity: line.quantity }));
    await this.pack.db.transaction(rc, (rc) => this.repository.insert(rc, cart, tokenHash(token), lines));
    if (cart.customerRef) await this.tell(rc, lines.map((l) => ({ customerRef: cart.customerRef!, eventType: 'cart.item_added', ...l })));
    return { ...(await this.answer(rc, cart, lines, products)), token };
  }

  /** The cart priced now; 404 not_found for a missing or wrong token or an unknown cart. */
  async read(rc: RequestContext, id: string, token: string | undefined): Promise<CartAnswer> {
    const found = token ? await this.repository.read(rc, id, tokenHash(token)) : null;
    if (!found) throw noCart();
    return this.answer(rc, found.cart, found.lines);
  }

  /** Adds units to the line of a sku (a new line when there is none). */
  async addItem(rc: RequestContext, id: string, token: string | undefined, item: CartItemInput): Promise<CartAnswer> {
    const product = (await this.products(rc, [item.sku])).get(item.sku);
    const events = await this.change(rc, id, token, async (rc, cart) => {
      const lines = await this.repository.lines(rc, id);
      const before = lines.find((l) => l.sku === item.sku)?.quantity ?? 0;
      if (!before && lines.length >= MAX_LINES) {
        throw ValidationFailed(`A cart holds at most ${MAX_LINES} lines`, [{ path: '/sku', message: `the cart has ${MAX_LINES} lines already` }]);
      }
      const issue = lineIssue(product, item.sku, cart.currency, before + item.quantity, '');
      if (issue) throw ValidationFailed('The item cannot be added', [issue]);
      assertInStock(product!, before + item.quantity, '/quantity');
      await this.repository.setLine(rc, id, item.sku, before + item.quantity);
      return lineEvents(cart.customerRef, item.sku, before, before + item.quantity);
    });
    return this.afterChange(rc, id, token!, events);
  }

  /** Sets the quantity of a line of the cart; 0 removes it. */
  async setQuantity(rc: RequestContext, id: string, token: string | undefined, sku: string, quantity: number): Promise<CartAnswer> {
    const product = quantity > 0 ? (await this.products(rc, [sku])).get(sku) : undefined;
    const events = await this.change(rc, id, token, async (rc, cart) => {
      const before = (await this.repository.lines(rc, id)).find((l) => l.sku === sku)?.quantity ?? 0;
      if (!before) throw NotFound(`The cart has no line of the sku "${sku.slice(0, 64)}"`);
      if (quantity > 0) {
        const issue = lineIssue(product, sku, cart.currency, quantity, '');
        if (issue) throw ValidationFailed('The quantity cannot be set', [issue]);
        assertInStock(product!, quantity, '/quantity');
      }
      await this.repository.setLine(rc, id, sku, quantity);
      return lineEvents(cart.customerRef, sku, before, quantity);
    });
    return this.afterChange(rc, id, token!, events);
  }

  /** Sets the shipping address; a chosen option that does not serve its country is dropped. */
  async setAddress(rc: RequestContext, id: string, token: string | undefined, address: Record<string, unknown>): Promise<CartAnswer> {
    await this.change(rc, id, token, async (rc, cart) => {
      const change: CartChange = { shippingAddress: address };
      if (cart.shippingOptionId) {
        const option = await this.options.find(rc, cart.shippingOptionId);
        if (!option || !serves(option, cart.currency, address.country as string)) change.shippingOptionId = null;
      }
      await this.repository.touch(rc, id, tokenHash(token!), cart.updatedAt, cart.expiresAt, change);
      return [];
    });
    return this.read(rc, id, token);
  }

  /** Chooses a shipping option: one of the cart's currency that serves the address's country, else 400 at /id. */
  async setShippingOption(rc: RequestContext, id: string, token: string | undefined, optionId: string): Promise<CartAnswer> {
    await this.change(rc, id, token, async (rc, cart) => {
      const option = await this.options.find(rc, optionId);
      const country = (cart.shippingAddress?.country as string | undefined) ?? null;
      let problem: string | null = null;
      if (!option || !option.active) problem = 'must be an active shipping option of the shop';
      else if (option.currency !== cart.currency) problem = `the option is priced in ${option.currency}, the cart in ${cart.currency}`;
      else if (country === null) problem = 'set the shipping address first: an option serves the countries it lists';
      else if (!serves(option, cart.currency, country)) problem = `the option does not ship to ${country}`;
      if (problem) throw ValidationFailed('The shipping option does not fit the cart', [{ path: '/id', message: problem }]);
      await this.repository.touch(rc, id, tokenHash(token!), cart.updatedAt, cart.expiresAt, { shippingOptionId: optionId });
      return [];
    });
    return this.read(rc, id, token);
  }

  /**
   * Puts a coupon on the cart, checked (not redeemed) as an order would be (11.4): the cart's customerRef must
   * be the coupon's; 409 coupon_invalid otherwise. Without the CRM (its module or its pack): 404 not_found.
   */
  async setCoupon(rc: RequestContext, id: string, token: string | undefined, code: string): Promise<CartAnswer> {
    const coupons = await this.couponService(rc);
    await this.change(rc, id, token, async (rc, cart) => {
      if (!cart.customerRef) throw CouponInvalid('the cart has no customerRef (a coupon is bound to a customer)', [{ path: '/code', message: 'set the cart\'s customerRef first' }]);
      const coupon = await coupons.check(rc, { code, customerRef: cart.customerRef });
      await this.repository.touch(rc, id, tokenHash(token!), cart.updatedAt, cart.expiresAt, { couponCode: coupon.code, couponPercentOff: coupon.percentOff });
      return [];
    });
    return this.read(rc, id, token);
  }

  async removeCoupon(rc: RequestContext, id: string, token: string | undefined): Promise<CartAnswer> {
    await this.change(rc, id, token, async (rc, cart) => {
      await this.repository.touch(rc, id, tokenHash(token!), cart.updatedAt, cart.expiresAt, { couponCode: null, couponPercentOff: null });
      return [];
    });
    return this.read(rc, id, token);
  }

  /**
   * Sets the e-mail address and the customer reference. A new customerRef on a cart with lines records one
   * `cart.item_added` per line for it; a coupon that does not hold for the new customer is taken off.
   */
  async patch(rc: RequestContext, id: string, token: string | undefined, input: { email?: string | null; customerRef?: string | null }): Promise<CartAnswer> {
    const events = await this.change(rc, id, token, async (rc, cart) => {
      const change: CartChange = {};
      if (input.email !== undefined) change.email = input.email;
      const newRef = input.customerRef !== undefined && input.customerRef !== cart.customerRef;
      if (newRef) {
        change.customerRef = input.customerRef;
        if (cart.couponCode && !(await this.couponHolds(rc, cart.couponCode, input.customerRef ?? null))) {
          change.couponCode = null;
          change.couponPercentOff = null;
        }
      }
      await this.repository.touch(rc, id, tokenHash(token!), cart.updatedAt, cart.expiresAt, change);
      if (!newRef || !input.customerRef) return [];
      const customerRef = input.customerRef;
      return (await this.repository.lines(rc, id)).map((l): CartEvent => ({ customerRef, eventType: 'cart.item_added', sku: l.sku, quantity: l.quantity }));
    });
    return this.afterChange(rc, id, token!, events);
  }

  /**
   * Checks the cart out (CONTRACT 15.3) in ONE transaction: the cart's row is held first (a completed or
   * expired cart is 409, so a cart is checked out once), then it is priced, its total compared with
   * `expectedTotalCents`, and the order placed through the orders service (the one write path of /erp/orders:
   * stock taken line by line, the coupon redeemed again, 409 insufficient_stock or coupon_invalid leaving
   * nothing written), the cart marked completed and `checkout.completed` recorded for its customer.
   */
  async checkout(rc: RequestContext, id: string, token: string | undefined, input: CheckoutInput): Promise<CheckoutAnswer> {
    const card = input.paymentMethod === 'stripe_card';
    const keys = card ? await this.providers.stripeKeys(rc) : null;
    if (card && !keys?.enabled) {
      throw ValidationFailed('Card payments are not enabled for this shop', [{ path: '/paymentMethod', message: 'stripe_card needs Stripe to be enabled' }]);
    }
    const { order, customerRef } = await this.placeOrder(rc, id, token, input);
    if (!keys) return { order, payment: { provider: 'manual', method: input.paymentMethod, status: 'pending' } };
    // The order is committed (pending_payment) before Stripe is called; a failure cancels it in a second transaction.
    let intent;
    try {
      intent = await this.stripe.createIntent(keys.secretKey, order, rc.tenantId!);
    } catch (err) {
      this.pack.logger.warn({ err, orderId: order.id }, 'creating a PaymentIntent failed: the order is cancelled');
      await this.pack.db.transaction(rc, async (rc) => {
        await this.orders.cancelUnpaid(rc, order.id, 'payment_failed');
        await this.repository.reopen(rc, id, order.id);
      });
      throw UpstreamFailed('The payment provider could not be reached: the order is cancelled and the cart is open again');
    }
    const placed = await this.orders.setPaymentIntent(rc, order.id, intent.id);
    await this.repository.setClientSecret(rc, id, order.id, intent.clientSecret);
    // A card checkout is completed once its payment can start (a failed one reopened the cart: nothing to tell).
    if (customerRef) await this.recordCheckout(rc, customerRef, order.id);
    return { order: placed, payment: { provider: 'stripe', paymentIntentId: intent.id, clientSecret: intent.clientSecret, status: intent.status } };
  }

  /** The checkout's transaction (see checkout): the order placed from the cart and the cart completed; the cart's customerRef. */
  private async placeOrder(rc: RequestContext, id: string, token: string | undefined, input: CheckoutInput): Promise<{ order: Order; customerRef: string | null }> {
    const card = input.paymentMethod === 'stripe_card';
    return this.change(rc, id, token, async (rc, cart) => {
      const lines = [...await this.repository.lines(rc, id)].sort((a, b) => (a.sku < b.sku ? -1 : a.sku > b.sku ? 1 : 0));
      // One after the other: a transaction's statements share one connection.
      const products = await this.products(rc, lines.map((l) => l.sku));
      const config = await this.config.of(rc);
      const { region, option } = await this.destination(rc, cart, config);
      const email = input.email ?? cart.email;

      const issues: ErrorDetail[] = [];
      if (!lines.length) issues.push({ path: '/items', message: 'the cart has no items' });
      lines.forEach((line, index) => {
        const issue = lineIssue(products.get(line.sku), line.sku, cart.currency, line.quantity, `/items/${index}`);
        if (issue) issues.push(issue);
      });
      if (!email) issues.push({ path: '/email', message: 'is required, in the body or on the cart' });
      if ([...config.options.values()].some((o) => o.active && o.currency === cart.currency)) {
        if (!cart.shippingAddress) issues.push({ path: '/shippingAddress', message: 'set the cart\'s shipping address first' });
        if (!option) issues.push({ path: '/shippingOption', message: 'choose a shipping option that ships to the address first' });
      }
      if (issues.length) throw ValidationFailed('The cart cannot be checked out yet', issues);

      const price = priceCart(lines, products, { percentOff: cart.couponPercentOff ?? 0, region, option });
      if (input.expectedTotalCents !== undefined && input.expectedTotalCents !== price.totalCents) {
        throw PriceChanged(`The cart's total is ${price.totalCents}, not ${input.expectedTotalCents}`,
          [{ path: '/expectedTotalCents', message: `the cart's total is ${price.totalCents}`, expected: price.totalCents }]);
      }
      if (card && price.totalCents < MIN_CARD_CENTS) {
        throw ValidationFailed(`A card payment is at least ${MIN_CARD_CENTS} cents`, [{ path: '/paymentMethod', message: `the total is ${price.totalCents} cents` }]);
      }
      const order = await this.orders.place(rc, {
        clientId: input.clientId ?? 1, paymentMethod: input.paymentMethod, currency: cart.currency,
        items: lines.map((l) => {
          const product = products.get(l.sku)!;
          return { productId: product.id, quantity: l.quantity, unitPrice: product.priceCents };
        }),
        ...(cart.customerRef ? { customerRef: cart.customerRef } : {}),
        ...(cart.couponCode ? { couponCode: cart.couponCode } : {}),
        checkout: { status: card ? 'pending_payment' : 'placed', cartId: cart.id, email: email!, shippingAddress: cart.shippingAddress, region, option },
      });
      await this.repository.complete(rc, id, order.id);
      if (cart.customerRef && !card) {
        const { trx: _trx, afterCommit: _afterCommit, whenDone: _whenDone, heldGates: _heldGates, ...outside } = rc;
        const customerRef = cart.customerRef;
        rc.afterCommit!(() => this.recordCheckout(outside, customerRef, order.id));
      }
      return { order, customerRef: cart.customerRef };
    });
  }

  /**
   * Runs a change of an open cart in one transaction, after the conditional update that marks the change and
   * holds the cart's row; 404 for no such cart (or a wrong token), 409 conflict for a completed or expired one.
   */
  private async change<T>(rc: RequestContext, id: string, token: string | undefined, fn: (rc: RequestContext, cart: CartRow) => Promise<T>): Promise<T> {
    if (!token) throw noCart();
    const hash = tokenHash(token);
    const now = nowIso();
    return this.pack.db.transaction(rc, async (rc) => {
      const cart = await this.repository.touch(rc, id, hash, now, expiry(now));
      if (!cart) {
        if (await this.repository.exists(rc, id, hash)) throw Conflict('The cart is completed or expired: it cannot change any more');
        throw noCart();
      }
      return fn(rc, cart);
    });
  }

  /** Tells the CRM what changed, then answers the cart as it is now. */
  private async afterChange(rc: RequestContext, id: string, token: string, events: CartEvent[]): Promise<CartAnswer> {
    await this.tell(rc, events);
    return this.read(rc, id, token);
  }

  /** Records the cart events with the CRM (section 11.3) when it is there and licensed; a failure is logged. */
  private async tell(rc: RequestContext, events: CartEvent[]): Promise<void> {
    const recorder = this.events();
    if (!events.length || !recorder || !(await this.pack.tenants.isModuleEnabled(rc, rc.tenantId!, 'crm'))) return;
    for (const e of events) {
      try {
        await recorder.record(rc, { eventType: e.eventType, customerRef: e.customerRef, eventData: { sku: e.sku, quantity: e.quantity } }, { bot: false });
      } catch (err) {
        this.pack.logger.warn({ err, eventType: e.eventType }, 'recording a cart event failed');
      }
    }
  }

  /**
   * `checkout.completed { orderId }` for the cart's customer (with the CRM there and licensed), outside any
   * transaction (the CRM records its events on its own) and before the checkout answers: once a manual checkout
   * commits, once a card checkout's PaymentIntent exists (never for one whose payment could not start); a failure
   * is logged.
   */
  private async recordCheckout(rc: RequestContext, customerRef: string, orderId: string): Promise<void> {
    const recorder = this.events();
    if (!recorder || !(await this.pack.tenants.isModuleEnabled(rc, rc.tenantId!, 'crm'))) return;
    try {
      await recorder.record(rc, { eventType: 'checkout.completed', customerRef, eventData: { orderId } }, { bot: false });
    } catch (err) {
      this.pack.logger.warn({ err, eventType: 'checkout.completed' }, 'recording a checkout event failed');
    }
  }

  private async couponService(rc: RequestContext): Promise<CouponChecker> {
    const coupons = this.coupons();
    if (!coupons || !(await this.pack.tenants.isModuleEnabled(rc, rc.tenantId!, 'crm'))) throw NotFound('Coupons need the crm module');
    return coupons;
  }

  private async couponHolds(rc: RequestContext, code: string, customerRef: string | null): Promise<boolean> {
    const coupons = this.coupons();
    if (!coupons || customerRef === null) return false;
    return coupons.check(rc, { code, customerRef }).then(() => true, () => false);
  }

  /** The tenant's products of these skus, in one query through the records service. */
  private async products(rc: RequestContext, skus: string[]): Promise<Map<string, PricedProduct>> {
    const found = new Map<string, PricedProduct>();
    if (!skus.length) return found;
    for (const p of await this.pack.records.findAllBy(rc, 'erp', 'product', 'sku', skus)) found.set(p.sku, p);
    return found;
  }

  /** The cart answer: priced from the products (read in one query unless given), its region and option (kept per tenant). */
  private async answer(rc: RequestContext, cart: CartRow, lines: CartLine[], known?: Map<string, PricedProduct>): Promise<CartAnswer> {
    if (cart.status === 'completed' && cart.orderId) return this.completedAnswer(rc, cart, cart.orderId, known);
    const [products, config] = await Promise.all([known ?? this.products(rc, lines.map((l) => l.sku)), this.config.of(rc)]);
    const { region, option } = await this.destination(rc, cart, config);
    const price = priceCart(lines, products, { percentOff: cart.couponPercentOff ?? 0, region, option });
    const expired = cart.status === 'open' && cart.expiresAt <= nowIso();
    return {
      id: cart.id, status: expired ? 'expired' : cart.status, currency: cart.currency, customerRef: cart.customerRef, email: cart.email,
      items: price.items, shippingAddress: cart.shippingAddress, shippingOption: price.shippingOption, couponCode: cart.couponCode,
      subtotalCents: price.subtotalCents, discountCents: price.discountCents, shippingCents: price.shippingCents,
      taxCents: price.taxCents, totalCents: price.totalCents, order: null,
      expiresAt: cart.expiresAt, createdAt: cart.createdAt, updatedAt: cart.updatedAt,
    };
  }

  /** The tax region of the cart's destination and its chosen shipping option while it still applies (else null). */
  private async destination(rc: RequestContext, cart: CartRow, config: CheckoutConfig): Promise<{ region: TaxRegion | null; option: ShippingOption | null }> {
    const country = (cart.shippingAddress?.country as string | undefined) ?? null;
    const region = country ? config.regions.get(country) ?? null : null;
    const optionId = cart.shippingOptionId;
    const option = optionId ? config.options.get(optionId) ?? (config.complete ? null : await this.options.find(rc, optionId)) : null;
    // An option changed or removed since it was chosen no longer applies.
    return { region, option: option && serves(option, cart.currency, country) ? option : null };
  }

  /** A completed cart shows its order's lines and amounts (the stock available now beside them) and the order. */
  private async completedAnswer(rc: RequestContext, cart: CartRow, orderId: string, known?: Map<string, PricedProduct>): Promise<CartAnswer> {
    const order = await this.pack.records.get(rc, 'erp', 'order', orderId);
    const products = known ?? await this.products(rc, order.items.map((i) => i.sku));
    const items = order.items.map((i) => {
      const p = products.get(i.sku);
      return {
        sku: i.sku, productNumber: i.number, name: i.name, quantity: i.quantity, unitPriceCents: i.unitPriceCents, taxRateBasisPoints: i.taxRateBasisPoints,
        discountCents: i.discountCents, netCents: i.netCents, taxCents: i.taxCents, totalCents: i.totalCents,
        availableStock: p && p.status === 'active' ? p.physicalStock : 0,
      };
    });
    return {
      id: cart.id, status: 'completed', currency: cart.currency, customerRef: cart.customerRef, email: cart.email,
      items, shippingAddress: cart.shippingAddress, shippingOption: order.shippingOption ?? null, couponCode: cart.couponCode,
      subtotalCents: order.subtotalCents, discountCents: order.discountCents, shippingCents: order.shippingCents ?? 0,
      taxCents: order.taxCents, totalCents: order.totalCents,
      order: { id: order.id, number: order.number, status: order.status, paymentStatus: order.paymentStatus ?? 'pending', clientSecret: order.status === 'pending_payment' ? cart.clientSecret : null },
      expiresAt: cart.expiresAt, createdAt: cart.createdAt, updatedAt: cart.updatedAt,
    };
  }
}

function expiry(now: string): string {
  return new Date(Date.parse(now) + CART_LIFETIME_MS).toISOString();
}

function noCart(): never {
  throw NotFound('No such cart');
}

/** Why a line cannot hold this quantity of the product (unknown or archived sku, other currency, too many), or null. */
function lineIssue(product: PricedProduct | undefined, sku: string, currency: string, quantity: number, at: string): ErrorDetail | null {
  if (!product || product.status !== 'active') return { path: `${at}/sku`, message: `no active product has the sku "${sku}"` };
  if (product.currency !== currency) return { path: `${at}/sku`, message: `the product is priced in ${product.currency}, the cart in ${currency}` };
  if (quantity > MAX_QUANTITY) return { path: `${at}/quantity`, message: `a line holds at most ${MAX_QUANTITY} units (this would make ${quantity})` };
  return null;
}

function assertInStock(product: PricedProduct, quantity: number, path: string): void {
  if (quantity <= product.physicalStock) return;
  throw InsufficientStock(`Only ${product.physicalStock} of ${product.sku} are available`,
    [{ path, message: `must be at most ${product.physicalStock}`, sku: product.sku, available: product.physicalStock }]);
}

function lineEvents(customerRef: string | null, sku: string, before: number, after: number): CartEvent[] {
  if (!customerRef || before === after) return [];
  return after > before
    ? [{ customerRef, eventType: 'cart.item_added', sku, quantity: after - before }]
    : [{ customerRef, eventType: 'cart.item_removed', sku, quantity: before - after }];
}
