import { expect } from 'chai';
import type { TestApp } from '../../helpers/test-app.js';
import { as } from '../../helpers/tokens.js';

export const PRODUCTS = '/api/v1/erp/products';
export const ORDERS = '/api/v1/erp/orders';

export type Json = Record<string, any>;

/** A shop of one tenant, driven through HTTP as a client would. */
export class Shop {
  private counter = 0;

  constructor(readonly t: TestApp, readonly tenant: string) {}

  async product(extra: Json = {}): Promise<Json> {
    const sku = `SKU-${++this.counter}-${Math.random().toString(36).slice(2, 7)}`;
    const res = await this.t.http.post(PRODUCTS).set(as(this.tenant, 'editor')).send({ sku, name: `Product ${sku}`, priceCents: 1999, physicalStock: 10, ...extra });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body.data;
  }

  get(id: string | number): Promise<Json> {
    return this.t.http.get(`${PRODUCTS}/${id}`).set(as(this.tenant, 'viewer')).then((r) => {
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      return r.body.data;
    });
  }

  order(items: Json[], extra: Json = {}, headers: Record<string, string> = {}) {
    return this.t.http.post(ORDERS).set(as(this.tenant, 'editor')).set(headers).send({ clientId: 7, paymentMethod: 'stripe_card', items, ...extra });
  }

  async movements(id: string | number): Promise<Json[]> {
    const res = await this.t.http.get(`${PRODUCTS}/${id}/stock-movements?limit=200`).set(as(this.tenant, 'viewer'));
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body.data.items;
  }

  /** The sum of a product's movements equals its physicalStock; returns the stock. */
  async expectLedgerConsistent(id: string): Promise<number> {
    const [product, movements] = await Promise.all([this.get(id), this.movements(id)]);
    const sum = movements.reduce((s, m) => s + m.delta, 0);
    expect(sum, 'sum of movements').to.equal(product.physicalStock);
    return product.physicalStock;
  }
}

/** A storefront of the shop's tenant: its carts behind their tokens (no credentials), and the admin's checkout set-up. */
export class Storefront {
  constructor(readonly shop: Shop) {}

  private get http() {
    return this.shop.t.http;
  }

  cartsPath(): string {
    return `/api/v1/public/tenant/${this.shop.tenant}/carts`;
  }

  /** A new cart (201 expected): its answer with the token. */
  async cart(body: Json = {}): Promise<Json> {
    const res = await this.http.post(this.cartsPath()).send(body);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body.data;
  }

  read(cart: Json) {
    return this.http.get(`${this.cartsPath()}/${cart.id}`).set('X-Cart-Token', cart.token);
  }

  /** A write to the cart's `sub`-resource with its token, e.g. put(cart, 'shipping-address', { country: 'DE' }). */
  write(method: 'post' | 'put' | 'patch', cart: Json, sub: string, body: Json, headers: Record<string, string> = {}) {
    return this.http[method](`${this.cartsPath()}/${cart.id}${sub ? `/${sub}` : ''}`).set('X-Cart-Token', cart.token).set(headers).send(body);
  }

  async region(country: string, body: Json): Promise<void> {
    await this.http.put(`/api/v1/erp/tax-regions/${country}`).set(as(this.shop.tenant, 'admin')).send(body).expect(200);
  }

  async shippingOption(body: Json): Promise<Json> {
    return (await this.http.post('/api/v1/erp/shipping-options').set(as(this.shop.tenant, 'admin')).send(body).expect(201)).body.data;
  }

  async orderCount(): Promise<number> {
    return (await this.http.get(ORDERS).set(as(this.shop.tenant, 'viewer')).expect(200)).body.data.pagination.total;
  }
}

/** The answer's data after checking its status. */
export function dataOf(res: { status: number; body: Json }, status: number): Json {
  expect(res.status, JSON.stringify(res.body)).to.equal(status);
  return res.body.data;
}

/** The answer's error after checking its status and code. */
export function errorOf(res: { status: number; body: Json }, status: number, code: string): Json {
  expect(res.status, JSON.stringify(res.body)).to.equal(status);
  expect(res.body.error.code).to.equal(code);
  return res.body.error;
}
