import { createHmac, timingSafeEqual } from 'node:crypto';
import { expect } from 'chai';
import { Webhook } from 'standardwebhooks';
import { startReceiver, type HttpReceiver, type ReceivedRequest } from '../../helpers/http-receiver.js';
import { createTenant, sharedTestApp, type TestApp } from '../../helpers/test-app.js';
import { as } from '../../helpers/tokens.js';
import { waitUntil } from '../../helpers/wait.js';
import { ORDERS, PRODUCTS, Shop, type Json } from './shop.js';

const SIGNING_SECRET = 'test-signing-secret-0123456789abcdefghij';

function verified(req: ReceivedRequest): Json {
  const header = String(req.headers['x-platform-signature']);
  const parts = Object.fromEntries(header.split(',').map((p) => p.split('=') as [string, string]));
  const expected = createHmac('sha256', SIGNING_SECRET).update(`${parts.t}.${req.body}`).digest('hex');
  expect(timingSafeEqual(Buffer.from(expected), Buffer.from(parts.v1)), 'X-Platform-Signature').to.equal(true);
  new Webhook(`whsec_${Buffer.from(SIGNING_SECRET).toString('base64')}`).verify(req.body, {
    'webhook-id': String(req.headers['webhook-id']),
    'webhook-timestamp': String(req.headers['webhook-timestamp']),
    'webhook-signature': String(req.headers['webhook-signature']),
  });
  return JSON.parse(req.body) as Json;
}

describe('ERP commerce events at a real receiver', function () {
  this.timeout(20_000);
  let t: TestApp;
  let receiver: HttpReceiver;
  let shop: Shop;

  before(async () => {
    t = await sharedTestApp();
    receiver = await startReceiver();
  });

  after(async () => {
    await receiver.stop();
  });

  beforeEach(async () => {
    receiver.requests.length = 0;
    shop = new Shop(t, await createTenant(t, 'evt'));
    const res = await t.http.post('/api/v1/connectors').set(as(shop.tenant, 'admin')).send({ url: `${receiver.url}/hook`, events: ['erp.*'] });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
  });

  const received = (name: string) => receiver.requests.map(verified).filter((e) => e.event === name && e.tenantId === shop.tenant);

  it('signs erp.inventory.updated on creation, stock, price, tax rate and status changes, but not on a name change', async () => {
    const p = await shop.product({ physicalStock: 3 });
    await t.http.patch(`${PRODUCTS}/${p.id}`).set(as(shop.tenant, 'editor')).send({ name: 'Renamed' }).expect(200);
    await t.http.patch(`${PRODUCTS}/${p.id}`).set(as(shop.tenant, 'editor')).send({ priceCents: 2500 }).expect(200);
    await t.http.patch(`${PRODUCTS}/${p.id}`).set(as(shop.tenant, 'editor')).send({ taxRateBasisPoints: 700 }).expect(200);
    await t.http.post(`${PRODUCTS}/${p.id}/stock-adjustments`).set(as(shop.tenant, 'admin')).send({ delta: 2, reason: 'restock' }).expect(201);
    await t.http.patch(`${PRODUCTS}/${p.id}`).set(as(shop.tenant, 'editor')).send({ status: 'archived' }).expect(200);
    await waitUntil('events', async () => received('erp.inventory.updated').length >= 5, 10_000);
    const payloads = received('erp.inventory.updated').map((e) => e.payload).sort((a, b) => a.version - b.version);
    expect(payloads).to.have.length(5);
    expect(payloads[0]).to.deep.equal({
      productId: p.id, number: p.number, sku: p.sku, physicalStock: 3, priceCents: 1999, currency: 'EUR', taxRateBasisPoints: 1900, status: 'active', version: 1,
    });
    expect(payloads.map((x) => [x.version, x.physicalStock, x.priceCents, x.taxRateBasisPoints, x.status])).to.deep.equal([
      [1, 3, 1999, 1900, 'active'], [3, 3, 2500, 1900, 'active'], [4, 3, 2500, 700, 'active'], [5, 5, 2500, 700, 'active'], [6, 5, 2500, 700, 'archived'],
    ]);
  });

  it('signs erp.order.created, erp.product.updated and erp.inventory.updated for an order, and erp.order.updated for its cancellation', async () => {
    const p = await shop.product({ physicalStock: 3 });
    await waitUntil('events', async () => received('erp.product.created').length === 1, 10_000);
    const order = (await shop.order([{ productId: p.number, quantity: 2, unitPrice: 1999 }])).body.data;
    await waitUntil('events', async () => received('erp.order.created').length === 1 && received('erp.inventory.updated').length === 2
      && received('erp.product.updated').length === 1, 10_000);
    const created = received('erp.order.created')[0];
    expect(created.payload).to.deep.include({ namespace: 'erp', schema: 'order', id: order.id, previous: null });
    expect(created.payload.record).to.deep.equal(order);
    const stock = received('erp.inventory.updated').find((e) => e.payload.version === 2)!;
    expect(stock.payload).to.include({ productId: p.id, physicalStock: 1 });
    const updated = received('erp.product.updated')[0];
    expect(updated.payload.record).to.include({ physicalStock: 1, version: 2 });
    expect(updated.payload.previous).to.deep.equal(p);

    await t.http.patch(`${ORDERS}/${order.id}`).set(as(shop.tenant, 'editor')).send({ status: 'cancelled' }).expect(200);
    await waitUntil('events', async () => received('erp.order.updated').length === 1 && received('erp.inventory.updated').length === 3, 10_000);
    const cancelled = received('erp.order.updated')[0];
    expect(cancelled.payload.record.status).to.equal('cancelled');
    expect(cancelled.payload.previous.status).to.equal('placed');
    expect(received('erp.inventory.updated').find((e) => e.payload.version === 3)!.payload.physicalStock).to.equal(3);
  });

  it('raises no event for an order refused for stock', async () => {
    const p = await shop.product({ physicalStock: 1 });
    await waitUntil('events', async () => received('erp.inventory.updated').length === 1, 10_000);
    const res = await shop.order([{ productId: p.number, quantity: 2, unitPrice: 1999 }]);
    expect(res.status).to.equal(409);
    await shop.order([{ productId: p.number, quantity: 1, unitPrice: 1999 }]).then((r) => expect(r.status).to.equal(201));
    await waitUntil('events', async () => received('erp.order.created').length === 1, 10_000);
    await new Promise((r) => setTimeout(r, 300));
    expect(received('erp.order.created')).to.have.length(1);
    expect(received('erp.inventory.updated')).to.have.length(2);
  });
});
