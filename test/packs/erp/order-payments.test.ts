import { expect } from 'chai';
import { startReceiver, type HttpReceiver } from '../../helpers/http-receiver.js';
import { createTenant, sharedTestApp, type TestApp } from '../../helpers/test-app.js';
import { as } from '../../helpers/tokens.js';
import { waitUntil } from '../../helpers/wait.js';
import { ORDERS, Shop, Storefront, dataOf, errorOf, type Json } from './shop.js';

const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000).toISOString();

describe('Manual payments and cancellation of orders (CONTRACT 15.3)', function () {
  this.timeout(30_000);
  let t: TestApp;
  let receiver: HttpReceiver;
  let shop: Shop;
  let store: Storefront;
  const patch = (order: Json, status: string, role: 'editor' | 'admin' = 'editor') =>
    t.http.patch(`${ORDERS}/${order.id}`).set(as(shop.tenant, role)).send({ status });
  const pay = (order: Json, body: Json, role: 'editor' | 'admin' = 'admin', headers: Record<string, string> = {}) =>
    t.http.post(`${ORDERS}/${order.id}/payments`).set(as(shop.tenant, role)).set(headers).send(body);
  const received = (name: string) => receiver.requests.map((r) => JSON.parse(r.body) as Json).filter((e) => e.event === name && e.tenantId === shop.tenant);
  /** A checked-out cart of `quantity` MUGs at 1000 net (1190 with tax) paid by bank transfer. */
  const checkedOut = async (quantity: number, cart: Json = {}) => {
    const open = await store.cart({ email: 'ann@example.com', items: [{ sku: 'MUG', quantity }], ...cart });
    return dataOf(await store.write('post', open, 'checkout', { paymentMethod: 'bank_transfer' }), 201).order as Json;
  };

  before(async () => {
    [t, receiver] = await Promise.all([sharedTestApp(), startReceiver()]);
  });

  after(() => receiver.stop());

  beforeEach(async () => {
    receiver.requests.length = 0;
    shop = new Shop(t, await createTenant(t, 'pay'));
    store = new Storefront(shop);
    await t.http.post('/api/v1/connectors').set(as(shop.tenant, 'admin')).send({ url: `${receiver.url}/hook`, events: ['erp.order.*'] }).expect(201);
  });

  describe('PATCH /erp/orders/{id} { status: "paid" }', () => {
    it('records a manual payment of what is left, paymentStatus paid, and emits erp.order.paid', async () => {
      await shop.product({ sku: 'MUG', priceCents: 1000, physicalStock: 5 });
      const order = await checkedOut(2);
      const paid = dataOf(await patch(order, 'paid'), 200);
      expect(paid).to.include({ status: 'paid', paymentStatus: 'paid', totalCents: 2380 });
      expect(paid.paidAt).to.be.a('string');
      expect(paid.payments).to.have.length(1);
      expect(paid.payments[0]).to.include({ provider: 'manual', method: 'bank_transfer', reference: null, amountCents: 2380 });
      await waitUntil('erp.order.paid', async () => received('erp.order.paid').length === 1, 10_000);
      expect(received('erp.order.paid')[0].payload).to.deep.equal({
        orderId: order.id, number: order.number, status: 'paid', paymentStatus: 'paid', fulfillmentStatus: 'unfulfilled',
        totalCents: 2380, refundedCents: 0, cancelReason: null,
      });
    });
  });

  describe('POST /erp/orders/{id}/payments', () => {
    it('records part payments; the order becomes paid when they reach the total; then 409 invalid_transition', async () => {
      await shop.product({ sku: 'MUG', priceCents: 1000, physicalStock: 5 });
      const order = await checkedOut(1);
      const part = dataOf(await pay(order, { amountCents: 190, reference: 'TRF-1' }), 201);
      expect(part).to.include({ status: 'placed', paymentStatus: 'pending' });
      expect(part.payments[0]).to.include({ provider: 'manual', reference: 'TRF-1', amountCents: 190, method: 'bank_transfer' });
      expect(errorOf(await pay(order, { amountCents: 1001 }), 400, 'validation_failed').details[0].path).to.equal('/amountCents');
      const rest = dataOf(await pay(order, { amountCents: 1000, method: 'cash' }), 201);
      expect(rest).to.include({ status: 'paid', paymentStatus: 'paid' });
      expect(rest.payments.map((p: Json) => [p.amountCents, p.method])).to.deep.equal([[190, 'bank_transfer'], [1000, 'cash']]);
      errorOf(await pay(order, { amountCents: 1 }), 409, 'invalid_transition');
      await waitUntil('erp.order.paid', async () => received('erp.order.paid').length === 1, 10_000);
    });

    it('needs admin, refuses a card order and a cancelled one (409 invalid_transition), replays an Idempotency-Key', async () => {
      const mug = await shop.product({ sku: 'MUG', priceCents: 1000, physicalStock: 5 });
      const order = await checkedOut(1);
      expect((await pay(order, { amountCents: 100 }, 'editor')).status).to.equal(403);
      const key = { 'Idempotency-Key': 'pay-1' };
      const first = dataOf(await pay(order, { amountCents: 100 }, 'admin', key), 201);
      const again = await pay(order, { amountCents: 100 }, 'admin', key);
      expect(again.headers['idempotent-replayed']).to.equal('true');
      expect(again.body.data.payments).to.deep.equal(first.payments);
      const card = dataOf(await shop.order([{ productId: mug.number, quantity: 1, unitPrice: 1000 }]), 201);
      errorOf(await pay(card, { amountCents: 100 }), 409, 'invalid_transition');
      dataOf(await patch(order, 'cancelled'), 200);
      errorOf(await pay(order, { amountCents: 100 }), 409, 'invalid_transition');
    });
  });

  describe('cancellation', () => {
    it('puts the stock back once, frees the coupon (redeemedAt and orderId null) and emits erp.order.cancelled with cancelReason manual', async () => {
      const mug = await shop.product({ sku: 'MUG', priceCents: 1000, physicalStock: 5 });
      await t.http.post('/api/v1/crm/events').set(as(shop.tenant, 'editor'))
        .send({ customerRef: 'ann', eventType: 'cart.item_added', eventData: { sku: 'MUG', quantity: 1 }, occurredAt: minutesAgo(120) }).expect(201);
      const recovered = await t.http.post('/api/v1/crm/recover-abandoned-carts').set(as(shop.tenant, 'admin')).send({}).expect(200);
      const code = (recovered.body.data.recovered as Json[]).find((c) => c.customerRef === 'ann')!.coupon.code as string;
      const open = await store.cart({ customerRef: 'ann', email: 'ann@example.com', items: [{ sku: 'MUG', quantity: 2 }] });
      dataOf(await store.write('put', open, 'coupon', { code }), 200);
      const order = dataOf(await store.write('post', open, 'checkout', { paymentMethod: 'cash_on_delivery' }), 201).order as Json;
      const coupons = async () => (await t.http.get('/api/v1/crm/coupons?customerRef=ann').set(as(shop.tenant, 'admin')).expect(200)).body.data.items[0] as Json;
      expect(await coupons()).to.include({ orderId: order.id });

      const results = await Promise.all([patch(order, 'cancelled'), patch(order, 'cancelled')]);
      expect(results.map((r) => r.status).sort()).to.deep.equal([200, 409]);
      const cancelled = results.find((r) => r.status === 200)!.body.data as Json;
      expect(cancelled).to.include({ status: 'cancelled', cancelReason: 'manual' });
      expect(await shop.expectLedgerConsistent(mug.id)).to.equal(5);
      expect((await shop.movements(mug.id)).filter((m) => m.reason === 'cancel')).to.have.length(1);
      expect(await coupons()).to.include({ code, redeemedAt: null, orderId: null });
      // The freed coupon serves another order.
      const again = await store.cart({ customerRef: 'ann', email: 'ann@example.com', items: [{ sku: 'MUG', quantity: 1 }] });
      dataOf(await store.write('put', again, 'coupon', { code }), 200);
      dataOf(await store.write('post', again, 'checkout', { paymentMethod: 'bank_transfer' }), 201);

      await waitUntil('erp.order.cancelled', async () => received('erp.order.cancelled').length === 1, 10_000);
      expect(received('erp.order.cancelled')[0].payload).to.include({ orderId: order.id, status: 'cancelled', cancelReason: 'manual', paymentStatus: 'pending' });
    });
  });
});
