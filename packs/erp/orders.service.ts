import { CouponInvalid, InsufficientStock, NotFound, PriceChanged, ValidationFailed, newId, nowIso, toIssues, type CompiledSchema, type ErrorDetail, type PackContext, type Page, type RecordQuery, type RequestContext } from '../../core/pack-api.js';
import { parseRef, type Catalog, type Product } from './catalog.service.js';
import type { CouponRedeemer } from './coupon-redeemer.js';
import { checkOrderTransition, type OrderStatus } from './order-status.js';
import { orderLine, orderTotals } from './order-totals.js';
import { OrdersRepository } from './orders.repository.js';
import { recommender, type Recommend } from './recommender.js';

export interface PlaceOrderInput {
  clientId: number;
  paymentMethod: string;
  items: Array<{ productId: number | string; quantity: number; unitPrice: number }>;
  customerRef?: string;
  couponCode?: string;
  currency?: string;
}

export interface OrderItem {
  productId: string;
  number: number;
  sku: string;
  name: string;
  quantity: number;
  unitPriceCents: number;
  taxRateBasisPoints: number;
  discountCents: number;
  netCents: number;
  taxCents: number;
  totalCents: number;
}

export interface Order {
  id: string;
  number: number;
  status: OrderStatus;
  clientId: number;
  customerRef: string | null;
  paymentMethod: string;
  currency: string;
  couponCode: string | null;
  items: OrderItem[];
  subtotalCents: number;
  discountCents: number;
  taxCents: number;
  totalCents: number;
  createdAt: string;
  updatedAt: string;
  version: number;
}

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

  constructor(
    private readonly pack: PackContext,
    private readonly catalog: Catalog,
    private readonly coupons: () => CouponRedeemer | undefined,
  ) {
    this.repository = new OrdersRepository(pack.db);
  }

  /** When a customer last placed an order that is not cancelled (ISO time), or null. */
  async lastOrderAt(rc: RequestContext, customerRef: string): Promise<string | null> {
    return this.repository.lastOrderAt(rc, await this.schema(rc), customerRef);
  }

  /** Skus by units sold in non-cancelled orders, most first. */
  async bestSellers(rc: RequestContext, limit = 10): Promise<Array<{ sku: string; quantity: number }>> {
    return this.repository.bestSellers(rc, await this.catalog.schema(rc), limit);
  }

  /** Skus bought together with `sku` in non-cancelled orders, by the number of such orders, most first. */
  async coPurchases(rc: RequestContext, sku: string, limit = 10): Promise<Array<{ sku: string; orders: number }>> {
    return this.repository.coPurchases(rc, await this.catalog.schema(rc), sku, limit);
  }

  /** Each customer's latest order that is not cancelled (createdAt), for a batch of customers (the CRM's cart recovery). */
  async lastOrderTimes(rc: RequestContext, customerRefs: string[]): Promise<Map<string, string>> {
    if (!customerRefs.length) return new Map();
    return this.repository.lastOrderTimes(rc, await this.schema(rc), customerRefs);
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
    return recommender(rc, this.repository, await this.catalog.schema(rc));
  }

  schema(rc: RequestContext): Promise<CompiledSchema> {
    return this.pack.schemas.resolve(rc, 'erp', 'order');
  }

  async place(rc: RequestContext, input: PlaceOrderInput): Promise<Order> {
    const redeemer = input.couponCode !== undefined ? this.couponRedeemer(input) : null;
    const orderId = newId();
    const schema = await this.schema(rc);
    return this.pack.db.transaction(rc, async (rc) => {
      const lines = await this.mergedLines(rc, input);
      const currency = this.checkCurrency(input, lines);
      this.checkPrices(lines);
      const taken = new Map<string, Product>();
      for (const line of [...lines].sort((a, b) => (a.product.id < b.product.id ? -1 : 1))) {
        const changed = await this.catalog.changeStock(rc, line.product.id, -line.quantity, 'order', {
          orderId, expect: { priceCents: line.unitPrice, active: true }, before: line.product,
        });
        if (!changed) await this.refuseLine(rc, line);
        taken.set(line.product.id, changed!.product);
      }
      const percentOff = redeemer ? (await redeemer.redeem(rc, { code: input.couponCode!, customerRef: input.customerRef!, orderId })).percentOff : 0;
      const items: OrderItem[] = lines.map((line) => {
        const p = taken.get(line.product.id)!;
        const base = { quantity: line.quantity, unitPriceCents: line.unitPrice, taxRateBasisPoints: p.taxRateBasisPoints };
        return { productId: p.id, number: p.number, sku: p.sku, name: p.name, ...base, ...orderLine(base, percentOff) };
      });
      const number = await this.catalog.repository.nextNumber(rc, 'order');
      const data = {
        number, status: 'placed' as const, clientId: input.clientId, customerRef: input.customerRef ?? null, paymentMethod: input.paymentMethod,
        currency, couponCode: input.couponCode ?? null, items, ...orderTotals(items),
      };
      if (!schema.validate(data)) throw ValidationFailed('The order does not match erp.order', toIssues(schema.validate.errors));
      const order = (await this.pack.records.repository.insert(rc, schema, orderId, data, nowIso())) as unknown as Order;
      await this.repository.countOrder(rc, items.map((i) => i.productId), 1);
      await this.pack.events.publish(rc, {
        name: 'erp.order.created',
        payload: { namespace: 'erp', schema: 'order', id: orderId, record: order, previous: null },
      });
      return order;
    });
  }

  async get(rc: RequestContext, ref: string): Promise<Order> {
    const parsed = parseRef(ref);
    const [found] = parsed === null ? [] : await this.catalog.repository.findByRefs(rc, await this.schema(rc), [parsed]);
    if (!found) throw NotFound(`No order "${ref.slice(0, 40)}"`);
    return found as unknown as Order;
  }

  list(rc: RequestContext, query: RecordQuery): Promise<Page<Record<string, unknown>>> {
    return this.pack.records.list(rc, 'erp', 'order', query);
  }

  /**
   * Moves an order to `to`. The status changes by one conditional update on the status read, so of two
   * racing cancellations one wins and the other answers 409 invalid_transition: the stock goes back once.
   */
  async transition(rc: RequestContext, ref: string, to: OrderStatus): Promise<Order> {
    const order = await this.get(rc, ref);
    checkOrderTransition(order.status, to);
    return this.pack.db.transaction(rc, async (rc) => {
      let previous = order;
      let updated: Order | null;
      while (!(updated = (await this.pack.records.changeWhere(rc, 'erp', 'order', order.id,
        { set: { status: to }, where: [['status', '=', previous.status]] }, nowIso())) as unknown as Order | null)) {
        // Another request moved the order first: judge the transition from where it is now.
        previous = await this.get(rc, order.id);
        checkOrderTransition(previous.status, to);
      }
      if (to === 'cancelled') {
        for (const item of [...updated.items].sort((a, b) => (a.productId < b.productId ? -1 : 1))) {
          // A product deleted since has no stock to take back.
          await this.catalog.changeStock(rc, item.productId, item.quantity, 'cancel', { orderId: order.id });
        }
        // A cancelled order no longer counts for the recommendations (cancelled is final: it never counts again).
        await this.repository.countOrder(rc, updated.items.map((i) => i.productId), -1);
      }
      await this.pack.events.publish(rc, {
        name: 'erp.order.updated',
        payload: { namespace: 'erp', schema: 'order', id: order.id, record: updated, previous },
      });
      return updated;
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
