import { expect } from 'chai';
import { systemContext } from '../../../core/base/request-context.js';
import { createTenant, sharedTestApp, type TestApp } from '../../helpers/test-app.js';
import { as } from '../../helpers/tokens.js';
import { ORDERS, Shop, dataOf, errorOf, type Json } from './shop.js';

const SALES = '/api/v1/erp/reports/sales-by-day';
const LOW_STOCK = '/api/v1/erp/reports/low-stock';

describe('ERP reports (CONTRACT 15.5)', () => {
  let t: TestApp;
  let tenant: string;
  let shop: Shop;

  before(async () => {
    t = await sharedTestApp();
  });

  beforeEach(async () => {
    tenant = await createTenant(t, 'rep');
    shop = new Shop(t, tenant);
  });

  /** Places an order of `quantity` × a 1000-cent product (tax 19 %: 1190 each) and dates it `createdAt`. */
  async function orderAt(productNumber: number, quantity: number, createdAt: string, refundedCents = 0): Promise<Json> {
    const order = dataOf(await shop.order([{ productId: productNumber, quantity, unitPrice: 1000 }]), 201);
    const kernel = t.app.kernel;
    const rc = systemContext(tenant);
    const { tableName } = await kernel.schemas.resolve(rc, 'erp', 'order');
    // Orders are placed now; the report reads the stored time, so the test moves it (and the refunds the order had).
    await kernel.db.sql(rc).rows(`UPDATE ${tableName} SET created_at = ?, data = ${kernel.db.dialect.jsonSet('data', 'refundedCents', '?', 'integer')} WHERE tenant_id = ? AND id = ?`,
      [createdAt, refundedCents, tenant, order.id]);
    return order;
  }

  const sales = (query: Json) => t.http.get(SALES).query(query).set(as(tenant, 'viewer'));

  it('lists every day of the period with the orders, gross, refunded and net cents of that day, cancelled orders left out', async () => {
    const p = await shop.product({ priceCents: 1000, physicalStock: 100 });
    await orderAt(p.number, 1, '2026-03-02T10:00:00.000Z');
    await orderAt(p.number, 2, '2026-03-02T23:30:00.000Z', 500);
    const cancelled = await orderAt(p.number, 5, '2026-03-02T12:00:00.000Z');
    expect((await t.http.patch(`${ORDERS}/${cancelled.id}`).set(as(tenant, 'editor')).send({ status: 'cancelled' })).status).to.equal(200);
    await orderAt(p.number, 3, '2026-03-04T08:00:00.000Z');
    await orderAt(p.number, 1, '2026-03-06T08:00:00.000Z'); // after the period

    const res = await sales({ from: '2026-03-01', to: '2026-03-05' });
    const { items } = dataOf(res, 200);
    expect(items).to.deep.equal([
      { day: '2026-03-01', currency: 'EUR', orders: 0, grossCents: 0, refundedCents: 0, netCents: 0 },
      { day: '2026-03-02', currency: 'EUR', orders: 2, grossCents: 3570, refundedCents: 500, netCents: 3070 },
      { day: '2026-03-03', currency: 'EUR', orders: 0, grossCents: 0, refundedCents: 0, netCents: 0 },
      { day: '2026-03-04', currency: 'EUR', orders: 1, grossCents: 3570, refundedCents: 0, netCents: 3570 },
      { day: '2026-03-05', currency: 'EUR', orders: 0, grossCents: 0, refundedCents: 0, netCents: 0 },
    ]);
  });

  it('counts days in the tenant\'s timezone from its site config', async () => {
    const p = await shop.product({ priceCents: 1000, physicalStock: 100 });
    await orderAt(p.number, 1, '2026-07-01T22:30:00.000Z'); // 2 July 00:30 in Berlin (summer time, +2)
    await orderAt(p.number, 1, '2026-07-01T21:00:00.000Z'); // 1 July 23:00 in Berlin
    const admin = as(tenant, 'admin');
    expect((await t.http.patch(`/api/v1/tenants/${tenant}/site-config`).set(admin).send({ timezone: 'Europe/Berlin' })).status).to.equal(200);
    const { items } = dataOf(await sales({ from: '2026-07-01', to: '2026-07-02' }), 200);
    expect(items.map((i: Json) => [i.day, i.orders])).to.deep.equal([['2026-07-01', 1], ['2026-07-02', 1]]);
    expect((await t.http.patch(`/api/v1/tenants/${tenant}/site-config`).set(admin).send({ timezone: 'UTC' })).status).to.equal(200);
    const utc = dataOf(await sales({ from: '2026-07-01', to: '2026-07-02' }), 200).items;
    expect(utc.map((i: Json) => [i.day, i.orders])).to.deep.equal([['2026-07-01', 2], ['2026-07-02', 0]]);
  });

  it('defaults to the last 30 days, ending today, in one query however many orders', async () => {
    const p = await shop.product({ priceCents: 1000, physicalStock: 1000 });
    const today = new Date().toISOString().slice(0, 10);
    await orderAt(p.number, 1, new Date().toISOString());
    const few = await sales({});
    const { items } = dataOf(few, 200);
    expect(items).to.have.length(30);
    expect(items[29]).to.include({ day: today, orders: 1, grossCents: 1190 });
    expect(items[0].day).to.equal(new Date(Date.now() - 29 * 86400000).toISOString().slice(0, 10));
    for (let i = 0; i < 20; i++) await orderAt(p.number, 1, new Date(Date.now() - i * 86400000).toISOString());
    const many = await sales({});
    expect(dataOf(many, 200).items[29].orders).to.equal(2);
    expect(Number(many.headers['x-query-count'])).to.equal(Number(few.headers['x-query-count']));
  });

  it('lists each currency of the period on every day', async () => {
    const eur = await shop.product({ priceCents: 1000, physicalStock: 10 });
    const usd = await shop.product({ priceCents: 1000, physicalStock: 10, currency: 'USD' });
    await orderAt(eur.number, 1, '2026-05-01T10:00:00.000Z');
    await orderAt(usd.number, 2, '2026-05-02T10:00:00.000Z');
    const { items } = dataOf(await sales({ from: '2026-05-01', to: '2026-05-02' }), 200);
    expect(items.map((i: Json) => [i.day, i.currency, i.grossCents])).to.deep.equal([
      ['2026-05-01', 'EUR', 1190], ['2026-05-01', 'USD', 0], ['2026-05-02', 'EUR', 0], ['2026-05-02', 'USD', 2380],
    ]);
  });

  it('refuses more than 366 days, a period that ends before it starts, and a bad date (400)', async () => {
    expect(errorOf(await sales({ from: '2025-01-01', to: '2026-01-02' }), 400, 'validation_failed').details[0].path).to.equal('/to');
    expect(dataOf(await sales({ from: '2025-01-01', to: '2026-01-01' }), 200).items).to.have.length(366);
    expect(errorOf(await sales({ from: '2026-02-02', to: '2026-02-01' }), 400, 'validation_failed').details[0].path).to.equal('/from');
    errorOf(await sales({ from: '2026-13-01' }), 400, 'validation_failed');
    errorOf(await sales({ from: 'yesterday' }), 400, 'validation_failed');
  });

  it('lists active products whose stock is below `below` (default 5), the lowest first', async () => {
    const a = await shop.product({ physicalStock: 4 });
    const b = await shop.product({ physicalStock: 0 });
    await shop.product({ physicalStock: 5 });
    await shop.product({ physicalStock: 1, status: 'archived' });
    const res = await t.http.get(LOW_STOCK).set(as(tenant, 'viewer'));
    expect(dataOf(res, 200).items).to.deep.equal([
      { id: b.id, number: b.number, sku: b.sku, name: b.name, availableStock: 0 },
      { id: a.id, number: a.number, sku: a.sku, name: a.name, availableStock: 4 },
    ]);
    const below = dataOf(await t.http.get(LOW_STOCK).query({ below: 1 }).set(as(tenant, 'viewer')), 200).items;
    expect(below.map((p: Json) => p.sku)).to.deep.equal([b.sku]);
    errorOf(await t.http.get(LOW_STOCK).query({ below: 'many' }).set(as(tenant, 'viewer')), 400, 'validation_failed');
  });
});
