import { expect } from 'chai';
import { startReceiver, type HttpReceiver } from '../../helpers/http-receiver.js';
import { createTenant, sharedTestApp, type TestApp } from '../../helpers/test-app.js';
import { as } from '../../helpers/tokens.js';
import { waitUntil } from '../../helpers/wait.js';
import { ORDERS, Shop, Storefront, dataOf, errorOf, type Json } from './shop.js';

describe('Fulfilments of orders (CONTRACT 15.4)', function () {
  this.timeout(30_000);
  let t: TestApp;
  let receiver: HttpReceiver;
  let shop: Shop;
  let store: Storefront;
  const ship = (order: Json, body: Json, role: 'viewer' | 'editor' = 'editor', headers: Record<string, string> = {}) =>
    t.http.post(`${ORDERS}/${order.id}/fulfillments`).set(as(shop.tenant, role)).set(headers).send(body);
  const patch = (order: Json, status: string, role: 'editor' | 'admin' = 'editor') => t.http.patch(`${ORDERS}/${order.id}`).set(as(shop.tenant, role)).send({ status });
  const read = async (order: Json) => dataOf(await t.http.get(`${ORDERS}/${order.id}`).set(as(shop.tenant, 'viewer')), 200);
  const received = (name: string) => receiver.requests.map((r) => JSON.parse(r.body) as Json).filter((e) => e.event === name && e.tenantId === shop.tenant);
  /** A checked-out cart of 3 MUGs and 2 CUPs paid with `method`. */
  const checkedOut = async (method: 'bank_transfer' | 'cash_on_delivery') => {
    const open = await store.cart({ email: 'ann@example.com', items: [{ sku: 'MUG', quantity: 3 }, { sku: 'CUP', quantity: 2 }] });
    return dataOf(await store.write('post', open, 'checkout', { paymentMethod: method }), 201).order as Json;
  };
  const paidOrder = async () => dataOf(await patch(await checkedOut('bank_transfer'), 'paid'), 200);

  before(async () => {
    [t, receiver] = await Promise.all([sharedTestApp(), startReceiver()]);
  });

  after(() => receiver.stop());

  beforeEach(async () => {
    receiver.requests.length = 0;
    shop = new Shop(t, await createTenant(t, 'ship'));
    store = new Storefront(shop);
    await shop.product({ sku: 'MUG', priceCents: 1000, physicalStock: 10 });
    await shop.product({ sku: 'CUP', priceCents: 500, physicalStock: 10 });
    await t.http.post('/api/v1/connectors').set(as(shop.tenant, 'admin')).send({ url: `${receiver.url}/hook`, events: ['erp.order.*'] }).expect(201);
  });

  it('ships a paid order in parcels with carrier and tracking; fulfillmentStatus follows; the last parcel fulfils it and emits erp.order.fulfilled', async () => {
    const order = await paidOrder();
    const first = dataOf(await ship(order, { items: [{ sku: 'MUG', quantity: 2 }], carrier: 'DHL', trackingNumber: '00340434', trackingUrl: 'https://dhl.example/track/00340434' }), 201);
    expect(first.fulfillment).to.include({ carrier: 'DHL', trackingNumber: '00340434', trackingUrl: 'https://dhl.example/track/00340434' });
    expect(first.fulfillment.items).to.deep.equal([{ sku: 'MUG', quantity: 2 }]);
    expect(first.fulfillment.id).to.match(/^[0-9a-f-]{36}$/);
    expect(first.order).to.include({ status: 'paid', fulfillmentStatus: 'partially_fulfilled' });
    // Partly shipped: no cancellation (refund instead).
    errorOf(await patch(order, 'cancelled', 'admin'), 409, 'invalid_transition');
    const last = dataOf(await ship(order, { items: [{ sku: 'CUP', quantity: 2 }, { sku: 'MUG', quantity: 1 }] }), 201);
    expect(last.fulfillment).to.include({ carrier: null, trackingNumber: null, trackingUrl: null });
    expect(last.order).to.include({ status: 'fulfilled', fulfillmentStatus: 'fulfilled' });
    const stored = await read(order);
    expect(stored.fulfillments.map((f: Json) => f.id)).to.deep.equal([first.fulfillment.id, last.fulfillment.id]);
    errorOf(await ship(order, { items: [{ sku: 'MUG', quantity: 1 }] }), 409, 'invalid_transition');
    await waitUntil('erp.order.fulfilled', async () => received('erp.order.fulfilled').length === 1, 10_000);
    expect(received('erp.order.fulfilled')[0].payload).to.deep.equal({
      orderId: order.id, number: order.number, status: 'fulfilled', paymentStatus: 'paid', fulfillmentStatus: 'fulfilled',
      totalCents: order.totalCents, refundedCents: 0, cancelReason: null,
    });
    // Each parcel is a write of the order through the records service: a revision each.
    const revisions = dataOf(await t.http.get(`/api/v1/data/erp/order/${order.id}/revisions`).set(as(shop.tenant, 'admin')), 200);
    expect(revisions.items.slice(0, 2).map((r: Json) => [r.action, r.data.fulfillments.length])).to.deep.equal([['update', 2], ['update', 1]]);
  });

  it('refuses more units than are left unshipped (409 conflict naming the item), unknown skus (400), other statuses (409 invalid_transition) and viewers (403)', async () => {
    const unpaid = await checkedOut('bank_transfer');
    errorOf(await ship(unpaid, { items: [{ sku: 'MUG', quantity: 1 }] }), 409, 'invalid_transition');
    const order = dataOf(await patch(unpaid, 'paid'), 200);
    const conflict = errorOf(await ship(order, { items: [{ sku: 'CUP', quantity: 1 }, { sku: 'MUG', quantity: 4 }] }), 409, 'conflict');
    expect(conflict.details[0]).to.include({ path: '/items/1/quantity', sku: 'MUG', available: 3 });
    // The same sku twice counts as one line.
    errorOf(await ship(order, { items: [{ sku: 'MUG', quantity: 2 }, { sku: 'MUG', quantity: 2 }] }), 409, 'conflict');
    expect(errorOf(await ship(order, { items: [{ sku: 'NOPE', quantity: 1 }] }), 400, 'validation_failed').details[0].path).to.equal('/items/0/sku');
    expect(errorOf(await ship(order, { items: [] }), 400, 'validation_failed').details[0].path).to.equal('/items');
    expect((await ship(order, { items: [{ sku: 'MUG', quantity: 1 }] }, 'viewer')).status).to.equal(403);
    expect((await read(order)).fulfillments).to.deep.equal([]);
    const cancelled = await checkedOut('bank_transfer');
    dataOf(await patch(cancelled, 'cancelled'), 200);
    errorOf(await ship(cancelled, { items: [{ sku: 'MUG', quantity: 1 }] }), 409, 'invalid_transition');
  });

  it('ships a placed cash-on-delivery order, which is fulfilled unpaid and can then be paid', async () => {
    const order = await checkedOut('cash_on_delivery');
    const shipped = dataOf(await ship(order, { items: [{ sku: 'MUG', quantity: 3 }, { sku: 'CUP', quantity: 2 }] }), 201);
    expect(shipped.order).to.include({ status: 'fulfilled', fulfillmentStatus: 'fulfilled', paymentStatus: 'pending' });
    const paid = dataOf(await t.http.post(`${ORDERS}/${order.id}/payments`).set(as(shop.tenant, 'admin')).send({ amountCents: order.totalCents }), 201);
    expect(paid).to.include({ status: 'fulfilled', paymentStatus: 'paid' });
  });

  it('PATCH { status: "fulfilled" } ships every unit left in one fulfilment', async () => {
    const order = await paidOrder();
    dataOf(await ship(order, { items: [{ sku: 'MUG', quantity: 1 }] }), 201);
    const fulfilled = dataOf(await patch(order, 'fulfilled'), 200);
    expect(fulfilled).to.include({ status: 'fulfilled', fulfillmentStatus: 'fulfilled' });
    expect(fulfilled.fulfillments).to.have.length(2);
    expect(fulfilled.fulfillments[1].items).to.deep.equal([{ sku: 'CUP', quantity: 2 }, { sku: 'MUG', quantity: 2 }]);
    errorOf(await patch(order, 'fulfilled'), 409, 'invalid_transition');
  });

  it('a unit refunded with restock before it shipped is not asked for again once a later parcel ships the rest', async () => {
    const order = await paidOrder();
    dataOf(await ship(order, { items: [{ sku: 'MUG', quantity: 1 }] }), 201);
    const refunded = dataOf(await t.http.post(`${ORDERS}/${order.id}/refunds`).set(as(shop.tenant, 'admin'))
      .send({ items: [{ sku: 'CUP', quantity: 1 }], restock: true }), 201).order;
    expect(refunded.fulfillmentStatus).to.equal('partially_fulfilled');
    const fulfilled = dataOf(await patch(order, 'fulfilled'), 200);
    expect(fulfilled.fulfillments[1].items).to.deep.equal([{ sku: 'CUP', quantity: 1 }, { sku: 'MUG', quantity: 2 }]);
    expect(fulfilled).to.include({ status: 'fulfilled', fulfillmentStatus: 'fulfilled' });
    errorOf(await ship(order, { items: [{ sku: 'CUP', quantity: 1 }] }), 409, 'invalid_transition');
  });

  it('parallel parcels of the last units: the database lets exactly the units there are through', async () => {
    const order = await paidOrder();
    const results = await Promise.all(Array.from({ length: 6 }, () => ship(order, { items: [{ sku: 'MUG', quantity: 1 }] })));
    expect(results.map((r) => r.status).sort()).to.deep.equal([201, 201, 201, 409, 409, 409]);
    for (const r of results.filter((x) => x.status === 409)) expect(r.body.error.code).to.equal('conflict');
    const last = await Promise.all([ship(order, { items: [{ sku: 'CUP', quantity: 2 }] }), ship(order, { items: [{ sku: 'CUP', quantity: 2 }] })]);
    expect(last.map((r) => r.status).sort()).to.deep.equal([201, 409]);
    const stored = await read(order);
    expect(stored).to.include({ status: 'fulfilled', fulfillmentStatus: 'fulfilled' });
    expect(stored.fulfillments).to.have.length(4);
    await waitUntil('erp.order.fulfilled', async () => received('erp.order.fulfilled').length === 1, 10_000);
  });

  it('replays an Idempotency-Key: the same parcel is not shipped twice', async () => {
    const order = await paidOrder();
    const key = { 'Idempotency-Key': `ship-${order.id}` };
    const first = dataOf(await ship(order, { items: [{ sku: 'MUG', quantity: 1 }] }, 'editor', key), 201);
    const again = await ship(order, { items: [{ sku: 'MUG', quantity: 1 }] }, 'editor', key);
    expect(again.status).to.equal(201);
    expect(again.headers['idempotent-replayed']).to.equal('true');
    expect(again.body.data.fulfillment.id).to.equal(first.fulfillment.id);
    expect((await read(order)).fulfillments).to.have.length(1);
  });
});
