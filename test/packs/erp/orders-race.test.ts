import { expect } from 'chai';
import { createTenant, sharedTestApp, type TestApp } from '../../helpers/test-app.js';
import { as } from '../../helpers/tokens.js';
import { ORDERS, Shop } from './shop.js';

describe('ERP orders under concurrency', function () {
  this.timeout(60_000);
  let t: TestApp;
  let shop: Shop;

  before(async () => {
    t = await sharedTestApp();
  });

  beforeEach(async () => {
    shop = new Shop(t, await createTenant(t, 'race'));
  });

  it('POST /api/v1/erp/orders: 50 concurrent orders for the last unit give exactly one 201 and 49 × 409 insufficient_stock', async () => {
    const p = await shop.product({ physicalStock: 1 });
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) =>
      shop.order([{ productId: p.number, quantity: 1, unitPrice: 1999 }], { clientId: i + 1 })));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).to.have.length(1);
    expect(statuses.filter((s) => s === 409)).to.have.length(49);
    expect(results.filter((r) => r.status === 409).every((r) => r.body.error.code === 'insufficient_stock' && r.body.error.details[0].sku === p.sku)).to.equal(true);
    expect(await shop.expectLedgerConsistent(p.id)).to.equal(0);
    const movements = await shop.movements(p.id);
    expect(movements.map((m) => m.reason)).to.deep.equal(['initial', 'order']);
    const orders = await t.http.get(ORDERS).set(as(shop.tenant, 'viewer'));
    expect(orders.body.data.pagination.total).to.equal(1);
  });

  it('POST /api/v1/erp/orders: 20 concurrent orders of two products in opposite line order neither deadlock nor fail', async () => {
    const a = await shop.product({ physicalStock: 100 });
    const b = await shop.product({ physicalStock: 100 });
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => {
      const lines = [{ productId: a.id, quantity: 2, unitPrice: 1999 }, { productId: b.id, quantity: 3, unitPrice: 1999 }];
      return shop.order(i % 2 ? lines.reverse() : lines);
    }));
    expect(results.map((r) => r.status)).to.deep.equal(Array(20).fill(201));
    expect(await shop.expectLedgerConsistent(a.id)).to.equal(60);
    expect(await shop.expectLedgerConsistent(b.id)).to.equal(40);
    const numbers = results.map((r) => r.body.data.number).sort((x, y) => x - y);
    expect(numbers).to.deep.equal(Array.from({ length: 20 }, (_, i) => i + 1));
  });

  it('orders racing stock adjustments and a cancellation keep the ledger equal to the stock', async () => {
    const p = await shop.product({ physicalStock: 30 });
    const first = (await shop.order([{ productId: p.number, quantity: 5, unitPrice: 1999 }])).body.data;
    const work = [
      ...Array.from({ length: 15 }, () => shop.order([{ productId: p.number, quantity: 2, unitPrice: 1999 }])),
      ...Array.from({ length: 5 }, () => t.http.post(`/api/v1/erp/products/${p.id}/stock-adjustments`).set(as(shop.tenant, 'admin')).send({ delta: -1, reason: 'damage' })),
      t.http.patch(`${ORDERS}/${first.id}`).set(as(shop.tenant, 'editor')).send({ status: 'cancelled' }),
    ];
    const results = await Promise.all(work);
    expect(results.every((r) => r.status < 500)).to.equal(true);
    const stock = await shop.expectLedgerConsistent(p.id);
    expect(stock).to.be.at.least(0);
  });
});
