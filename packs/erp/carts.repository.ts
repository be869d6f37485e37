import type { PackContext, RequestContext } from '../../core/pack-api.js';

type Database = PackContext['db'];

/** A cart's row as the service uses it. */
export interface CartRow {
  id: string;
  status: 'open' | 'completed';
  currency: string;
  customerRef: string | null;
  email: string | null;
  shippingAddress: Record<string, unknown> | null;
  shippingOptionId: string | null;
  couponCode: string | null;
  couponPercentOff: number | null;
  orderId: string | null;
  /** The client secret of the order's PaymentIntent (a card checkout), shown while the order waits for its payment. */
  clientSecret: string | null;
  createdAt: string;
  updatedAt: string;
  expiresAt: string;
}

export interface CartLine {
  sku: string;
  quantity: number;
}

interface Row {
  id: string;
  status: 'open' | 'completed';
  currency: string;
  customer_ref: string | null;
  email: string | null;
  shipping_address: string | null;
  shipping_option_id: string | null;
  coupon_code: string | null;
  coupon_percent_off: number | string | null;
  order_id: string | null;
  client_secret: string | null;
  created_at: string;
  updated_at: string;
  expires_at: string;
}

/** The cart columns a write may set (column names come from here, never from a request). */
export interface CartChange {
  customerRef?: string | null;
  email?: string | null;
  shippingAddress?: Record<string, unknown> | null;
  shippingOptionId?: string | null;
  couponCode?: string | null;
  couponPercentOff?: number | null;
}

const CHANGE_COLUMNS: Record<keyof CartChange, string> = {
  customerRef: 'customer_ref', email: 'email', shippingAddress: 'shipping_address',
  shippingOptionId: 'shipping_option_id', couponCode: 'coupon_code', couponPercentOff: 'coupon_percent_off',
};

const CART_COLUMNS = 'c.id, c.status, c.currency, c.customer_ref, c.email, c.shipping_address, c.shipping_option_id, c.coupon_code, '
  + 'c.coupon_percent_off, c.order_id, c.client_secret, c.created_at, c.updated_at, c.expires_at';

/** SQL of erp_carts and erp_cart_items (migrations/0540-erp-carts.ts). */
export class CartsRepository {
  constructor(private readonly db: Database) {}

  async insert(rc: RequestContext, cart: CartRow, tokenHash: string, lines: CartLine[]): Promise<void> {
    await this.db.sql(rc).run(this.db.query('erp_carts').insert({
      tenant_id: rc.tenantId, id: cart.id, token_hash: tokenHash, status: cart.status, currency: cart.currency,
      customer_ref: cart.customerRef, email: cart.email, shipping_address: null, shipping_option_id: null,
      coupon_code: null, coupon_percent_off: null, order_id: null,
      created_at: cart.createdAt, updated_at: cart.updatedAt, expires_at: cart.expiresAt,
    }));
    if (lines.length) {
      await this.db.sql(rc).run(this.db.query('erp_cart_items').insert(
        lines.map((l) => ({ tenant_id: rc.tenantId, cart_id: cart.id, sku: l.sku, quantity: l.quantity }))));
    }
  }

  /** The cart with this id and token hash and its lines, in one statement; null when there is none. */
  async read(rc: RequestContext, id: string, tokenHash: string): Promise<{ cart: CartRow; lines: CartLine[] } | null> {
    const rows = await this.db.sql(rc).rows<Row & { sku: string | null; quantity: number | string | null }>(
      `SELECT ${CART_COLUMNS}, i.sku, i.quantity FROM erp_carts c `
      + 'LEFT JOIN erp_cart_items i ON i.tenant_id = c.tenant_id AND i.cart_id = c.id '
      + 'WHERE c.tenant_id = ? AND c.id = ? AND c.token_hash = ?',
      [rc.tenantId, id, tokenHash]);
    if (!rows.length) return null;
    const lines = rows.filter((r) => r.sku !== null).map((r) => ({ sku: r.sku!, quantity: Number(r.quantity) }));
    return { cart: toCart(rows[0]), lines };
  }

  /**
   * Marks a change of an open, unexpired cart (its expiry moves to `expiresAt`) and applies `change`, in one
   * conditional statement: in rc's transaction it also holds the cart's row until the end, so the line
   * changes that follow are serialised per cart. Null when the cart is missing, has another token, is
   * completed or expired: nothing was changed.
   */
  async touch(rc: RequestContext, id: string, tokenHash: string, now: string, expiresAt: string, change: CartChange = {}): Promise<CartRow | null> {
    const sets = ['updated_at = ?', 'expires_at = ?'];
    const values: unknown[] = [now, expiresAt];
    for (const [key, column] of Object.entries(CHANGE_COLUMNS) as Array<[keyof CartChange, string]>) {
      if (!(key in change)) continue;
      sets.push(`${column} = ?`);
      const value = change[key];
      values.push(key === 'shippingAddress' && value !== null ? JSON.stringify(value) : value ?? null);
    }
    const rows = await this.db.sql(rc).rows<Row>(
      `UPDATE erp_carts SET ${sets.join(', ')} WHERE tenant_id = ? AND id = ? AND token_hash = ? AND status = 'open' AND expires_at > ? `
      + `RETURNING ${CART_COLUMNS.replaceAll('c.', '')}`,
      [...values, rc.tenantId, id, tokenHash, now]);
    return rows[0] ? toCart(rows[0]) : null;
  }

  /** Whether the cart exists with this token (to tell 404 from 409 after a refused change). */
  async exists(rc: RequestContext, id: string, tokenHash: string): Promise<boolean> {
    const rows = await this.db.sql(rc).rows('SELECT 1 AS one FROM erp_carts WHERE tenant_id = ? AND id = ? AND token_hash = ?', [rc.tenantId, id, tokenHash]);
    return rows.length > 0;
  }

  /** Marks a cart (held by rc's transaction) completed by this order. */
  async complete(rc: RequestContext, id: string, orderId: string): Promise<void> {
    await this.db.sql(rc).run(this.db.query('erp_carts').where({ tenant_id: rc.tenantId, id }).update({ status: 'completed', order_id: orderId }));
  }

  /** Keeps the client secret of the PaymentIntent of the cart's order (a card checkout). */
  async setClientSecret(rc: RequestContext, id: string, orderId: string, clientSecret: string | null): Promise<void> {
    await this.db.sql(rc).run(this.db.query('erp_carts').where({ tenant_id: rc.tenantId, id, order_id: orderId }).update({ client_secret: clientSecret }));
  }

  /** Opens a cart completed by this order again (its card payment could not start): no order, its coupon kept. */
  async reopen(rc: RequestContext, id: string, orderId: string): Promise<void> {
    await this.db.sql(rc).run(this.db.query('erp_carts').where({ tenant_id: rc.tenantId, id, order_id: orderId }).update({ status: 'open', order_id: null, client_secret: null }));
  }

  async lines(rc: RequestContext, cartId: string): Promise<CartLine[]> {
    const rows = await this.db.sql(rc).rows<{ sku: string; quantity: number | string }>(
      'SELECT sku, quantity FROM erp_cart_items WHERE tenant_id = ? AND cart_id = ?', [rc.tenantId, cartId]);
    return rows.map((r) => ({ sku: r.sku, quantity: Number(r.quantity) }));
  }

  /** Sets a line's quantity (inserting the line), or removes it at 0. */
  async setLine(rc: RequestContext, cartId: string, sku: string, quantity: number): Promise<void> {
    const where = { tenant_id: rc.tenantId, cart_id: cartId, sku };
    if (quantity === 0) {
      await this.db.sql(rc).run(this.db.query('erp_cart_items').where(where).delete());
      return;
    }
    await this.db.sql(rc).run(this.db.query('erp_cart_items').insert({ ...where, quantity }).onConflict(['tenant_id', 'cart_id', 'sku']).merge(['quantity']));
  }
}

function toCart(r: Row): CartRow {
  return {
    id: r.id, status: r.status, currency: r.currency, customerRef: r.customer_ref, email: r.email,
    shippingAddress: r.shipping_address === null ? null : JSON.parse(r.shipping_address) as Record<string, unknown>,
    shippingOptionId: r.shipping_option_id, couponCode: r.coupon_code,
    couponPercentOff: r.coupon_percent_off === null ? null : Number(r.coupon_percent_off),
    orderId: r.order_id, clientSecret: r.client_secret, createdAt: r.created_at, updatedAt: r.updated_at, expiresAt: r.expires_at,
  };
}
