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
