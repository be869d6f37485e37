import { expect } from 'chai';
import Stripe from 'stripe';
import { startReceiver, type HttpReceiver } from '../../helpers/http-receiver.js';
import { StripeStandIn } from '../../helpers/stripe-stand-in.js';
import { createTenant, startTestApp, type TestApp } from '../../helpers/test-app.js';
import { as } from '../../helpers/tokens.js';
import { waitUntil } from '../../helpers/wait.js';
import { ORDERS, Shop, Storefront, dataOf, errorOf, type Json } from './shop.js';

const WHSEC = 'whsec_standin_0123456789';
const signer = new Stripe('sk_test_signer');
/** The stand-in's usual error answer (a 500, which the package retries once). */
const API_ERROR = { status: 500, type: 'api_error', message: 'The stand-in is down' };

describe('Refunds and the cancellation of paid orders (CONTRACT 15.4)', function () {
  this.timeout(90_000);
  let t: TestApp;
  let stripe: StripeStandIn;
  let receiver: HttpReceiver;
  let shop: Shop;
  let store: Storefront;
  let products: Record<string, Json>;
  let events = 0;

  const refund = (order: Json, body: Json, role: 'editor' | 'admin' = 'admin', headers: Record<string, string> = {}) =>
    t.http.post(`${ORDERS}/${order.id}/refunds`).set(as(shop.tenant, role)).set(headers).send(body);
  const patch = (order: Json, status: string, role: 'editor' | 'admin' = 'editor') => t.http.patch(`${ORDERS}/${order.id}`).set(as(shop.tenant, role)).send({ status });
  const read = async (order: Json) => dataOf(await t.http.get(`${ORDERS}/${order.id}`).set(as(shop.tenant, 'viewer')), 200);
  const received = (name: string) => receiver.requests.map((r) => JSON.parse(r.body) as Json).filter((e) => e.event === name && e.tenantId === shop.tenant);
  const stock = async (sku: string) => (await shop.get(products[sku].id)).physicalStock as number;
  const stripeRefunds = () => stripe.calls.filter((c) => c.path === '/v1/refunds');
  /** A Stripe event signed as Stripe signs it, sent to the tenant's webhook. */
  const webhook = (type: string, object: Json) => {
    const payload = JSON.stringify({ id: `evt_${++events}`, object: 'event', type, data: { object }, created: Math.floor(Date.now() / 1000), livemode: false, api_version: '2024-06-20' });
    return t.http.post(`/api/v1/public/payments/stripe/${shop.tenant}/webhook`).set('Content-Type', 'application/json')
      .set('Stripe-Signature', signer.webhooks.generateTestHeaderString({ payload, secret: WHSEC })).send(payload);
  };
  /** A checked-out cart of 3 MUG (3 × 1190), 2 ODD (119) and 3 TRI (1189): 4878 in all. */
  const checkout = async (paymentMethod: string) => {
    const open = await store.cart({ email: 'ann@example.com', items: [{ sku: 'MUG', quantity: 3 }, { sku: 'ODD', quantity: 2 }, { sku: 'TRI', quantity: 3 }] });
    return dataOf(await store.write('post', open, 'checkout', { paymentMethod }), 201).order as Json;
  };
  const manualPaid = async () => dataOf(await patch(await checkout('bank_transfer'), 'paid'), 200);
  const cardPaid = async () => {
    const order = await checkout('stripe_card');
    const paid = await webhook('payment_intent.succeeded', { id: order.paymentIntentId, object: 'payment_intent', amount_received: 4878, currency: 'eur', status: 'succeeded' });
    expect(paid.status).to.equal(200);
    return read(order);
  };
  /** Per sku of the order: the units its `order` movements took less those `cancel` and `return` put back, never below 0 nor above what was ordered. */
  const expectLedgerHolds = async (order: Json) => {
    for (const item of order.items as Json[]) {
      await shop.expectLedgerConsistent(item.productId);
      const mine = (await shop.movements(item.productId)).filter((m) => m.orderId === order.id);
      const taken = -mine.filter((m) => m.reason === 'order').reduce((s, m) => s + m.delta, 0);
      const back = mine.filter((m) => m.reason === 'cancel' || m.reason === 'return').reduce((s, m) => s + m.delta, 0);
      expect(taken - back, item.sku).to.be.within(0, item.quantity);
    }
  };

  before(async () => {
    stripe = await StripeStandIn.start();
    [t, receiver] = await Promise.all([startTestApp({ env: { STRIPE_API_BASE: stripe.origin } }), startReceiver()]);
  });

  after(async () => {
    await t.close();
    await Promise.all([stripe.stop(), receiver.stop()]);
  });

  beforeEach(async () => {
    Object.assign(stripe, { down: false, silent: false, refundStatus: 'succeeded', failure: API_ERROR });
    stripe.calls.length = 0;
    receiver.requests.length = 0;
    shop = new Shop(t, await createTenant(t, 'refund'));
    store = new Storefront(shop);
    products = {
      MUG: await shop.product({ sku: 'MUG', priceCents: 1000, physicalStock: 10 }),
      ODD: await shop.product({ sku: 'ODD', priceCents: 50, physicalStock: 10 }),
      TRI: await shop.product({ sku: 'TRI', priceCents: 333, physicalStock: 10 }),
    };
    await t.http.put('/api/v1/erp/payment-providers/stripe').set(as(shop.tenant, 'admin')).send({ secretKey: 'sk_test_standin_0123456789', webhookSecret: WHSEC }).expect(200);
    await t.http.post('/api/v1/connectors').set(as(shop.tenant, 'admin')).send({ url: `${receiver.url}/hook`, events: ['erp.order.*'] }).expect(201);
  });

  describe('of a manual payment (recorded at once)', () => {
    it('by amount: refundedCents and paymentStatus follow, beyond what was paid 409 refund_exceeds_payment, erp.order.refunded each time', async () => {
      const order = await manualPaid();
      const first = dataOf(await refund(order, { amountCents: 1000, reason: 'scratched mug' }, 'admin', { 'X-Request-Id': `refund-${order.id}` }), 201);
      expect(first.refund).to.include({ amountCents: 1000, restock: false, reason: 'scratched mug', status: 'succeeded', providerReference: null });
      expect(first.refund.items).to.deep.equal([]);
      expect(first.order).to.include({ refundedCents: 1000, paymentStatus: 'partially_refunded', status: 'paid' });
      expect(first.order.refunds).to.deep.equal([first.refund]);
      const over = errorOf(await refund(order, { amountCents: 3879 }), 409, 'refund_exceeds_payment');
      expect(over.details[0]).to.include({ path: '/amountCents', available: 3878 });
      const rest = dataOf(await refund(order, { amountCents: 3878 }), 201);
      expect(rest.order).to.include({ refundedCents: 4878, paymentStatus: 'refunded' });
      errorOf(await refund(order, { amountCents: 1 }), 409, 'refund_exceeds_payment');
      // An order with nothing paid has nothing to refund.
      errorOf(await refund(await checkout('bank_transfer'), { amountCents: 1 }), 409, 'refund_exceeds_payment');
      await waitUntil('erp.order.refunded', async () => received('erp.order.refunded').length === 2, 10_000);
      expect(received('erp.order.refunded').map((e) => [e.payload.refundedCents, e.payload.paymentStatus])).to.have.deep.members([[1000, 'partially_refunded'], [4878, 'refunded']]);
      // Each refund is a write of the order: revisions with the refunds.
      const revisions = dataOf(await t.http.get(`/api/v1/data/erp/order/${order.id}/revisions`).set(as(shop.tenant, 'admin')), 200);
      expect(revisions.items[0]).to.deep.include({ action: 'update' });
      expect(revisions.items[0].data.refunds).to.have.length(2);
      // …and entries of the audit log, with the request that made them.
      const audit = dataOf(await t.http.get(`/api/v1/tenants/${shop.tenant}/audit-log?target=erp.order/${order.id}&action=record.updated`).set(as(shop.tenant, 'admin')), 200);
      expect(audit.items.map((e: Json) => e.requestId)).to.include(`refund-${order.id}`);
      // The administration's entry of each refund (CONTRACT 16.4), with its actor.
      const refunded = dataOf(await t.http.get(`/api/v1/tenants/${shop.tenant}/audit-log?target=erp.order/${order.id}&action=order.refunded`).set(as(shop.tenant, 'admin')), 200);
      expect(refunded.items).to.have.length(2);
      expect(refunded.items[0].actor).to.include({ type: 'user' });
    });

    it('by items: each line\'s units at round_half_up(totalCents × units ÷ quantity), its last unit what is left; a unit is refunded once (409 conflict)', async () => {
      const order = await manualPaid();
      const line = (sku: string) => (order.items as Json[]).find((i) => i.sku === sku)!;
      expect([line('ODD').totalCents, line('TRI').totalCents]).to.deep.equal([119, 1189]);
      const a = dataOf(await refund(order, { items: [{ sku: 'ODD', quantity: 1 }, { sku: 'TRI', quantity: 1 }] }), 201);
      // 119 / 2 = 59.5 → 60; 1189 / 3 = 396.33 → 396.
      expect(a.refund.items).to.deep.equal([{ sku: 'ODD', quantity: 1, amountCents: 60 }, { sku: 'TRI', quantity: 1, amountCents: 396 }]);
      expect(a.refund.amountCents).to.equal(456);
      const b = dataOf(await refund(order, { items: [{ sku: 'TRI', quantity: 1 }] }), 201);
      expect(b.refund.amountCents).to.equal(396);
      const conflict = errorOf(await refund(order, { items: [{ sku: 'TRI', quantity: 2 }] }), 409, 'conflict');
      expect(conflict.details[0]).to.include({ path: '/items/0/quantity', sku: 'TRI', available: 1 });
      const c = dataOf(await refund(order, { items: [{ sku: 'ODD', quantity: 1 }, { sku: 'TRI', quantity: 1 }] }), 201);
      expect(c.refund.items).to.deep.equal([{ sku: 'ODD', quantity: 1, amountCents: 59 }, { sku: 'TRI', quantity: 1, amountCents: 397 }]);
      expect(c.order.refundedCents).to.equal(119 + 1189);
      errorOf(await refund(order, { items: [{ sku: 'ODD', quantity: 1 }] }), 409, 'conflict');
      // An amount with items: the amount given, the units marked refunded.
      const d = dataOf(await refund(order, { amountCents: 100, items: [{ sku: 'MUG', quantity: 3 }] }), 201);
      expect(d.refund).to.include({ amountCents: 100 });
      errorOf(await refund(order, { items: [{ sku: 'MUG', quantity: 1 }] }), 409, 'conflict');
      expect(errorOf(await refund(order, { items: [{ sku: 'NOPE', quantity: 1 }] }), 400, 'validation_failed').details[0].path).to.equal('/items/0/sku');
    });

    it('restock puts the units back (movements return); restock needs items, one of amountCents and items is required (400); admin only', async () => {
      const order = await manualPaid();
      expect(await stock('MUG')).to.equal(7);
      const restocked = dataOf(await refund(order, { items: [{ sku: 'MUG', quantity: 2 }], restock: true }), 201);
      expect(restocked.refund).to.include({ restock: true, amountCents: 2380 });
      expect(await stock('MUG')).to.equal(9);
      const returns = (await shop.movements(products.MUG.id)).filter((m) => m.reason === 'return');
      expect(returns).to.have.length(1);
      expect(returns[0]).to.include({ delta: 2, orderId: order.id });
      expect(errorOf(await refund(order, { amountCents: 10, restock: true }), 400, 'validation_failed').details[0].path).to.equal('/restock');
      expect(errorOf(await refund(order, {}), 400, 'validation_failed').details[0].path).to.equal('/amountCents');
      expect(errorOf(await refund(order, { amountCents: 0 }), 400, 'validation_failed').details[0].path).to.equal('/amountCents');
      expect((await refund(order, { amountCents: 10 }, 'editor')).status).to.equal(403);
      // A restocked unit is not shipped any more: the order is fulfilled with the one MUG left.
      const fulfilled = dataOf(await patch(order, 'fulfilled'), 200);
      expect(fulfilled.fulfillments[0].items).to.deep.include({ sku: 'MUG', quantity: 1 });
      await expectLedgerHolds(order);
    });

    it('racing refunds: of the last unit one passes (409 conflict), of the last money one passes (409 refund_exceeds_payment)', async () => {
      const order = await manualPaid();
      const units = await Promise.all([1, 2, 3].map(() => refund(order, { items: [{ sku: 'ODD', quantity: 2 }] })));
      expect(units.map((r) => r.status).sort()).to.deep.equal([201, 409, 409]);
      expect(units.filter((r) => r.status === 409).map((r) => r.body.error.code)).to.deep.equal(['conflict', 'conflict']);
      const money = await Promise.all([1, 2, 3].map(() => refund(order, { amountCents: 4878 - 119 })));
      expect(money.map((r) => r.status).sort()).to.deep.equal([201, 409, 409]);
      expect(money.filter((r) => r.status === 409).map((r) => r.body.error.code)).to.deep.equal(['refund_exceeds_payment', 'refund_exceeds_payment']);
      expect(await read(order)).to.include({ refundedCents: 4878, paymentStatus: 'refunded' });
    });

    it('replays an Idempotency-Key: one refund, the same answer', async () => {
      const order = await manualPaid();
      const key = { 'Idempotency-Key': `refund-${order.id}` };
      const first = dataOf(await refund(order, { amountCents: 500 }, 'admin', key), 201);
      const again = await refund(order, { amountCents: 500 }, 'admin', key);
      expect(again.status).to.equal(201);
      expect(again.headers['idempotent-replayed']).to.equal('true');
      expect(again.body.data.refund.id).to.equal(first.refund.id);
      errorOf(await refund(order, { amountCents: 501 }, 'admin', key), 422, 'idempotency_key_reused');
      expect((await read(order)).refunds).to.have.length(1);
    });

    it('cancelling a paid order needs admin; it refunds what is left and puts back the unshipped stock (less what a refund restocked)', async () => {
      const order = await manualPaid();
      dataOf(await refund(order, { items: [{ sku: 'MUG', quantity: 1 }], restock: true }), 201);
      errorOf(await patch(order, 'cancelled', 'editor'), 403, 'forbidden');
      expect((await read(order)).status).to.equal('paid');
      const cancelled = dataOf(await patch(order, 'cancelled', 'admin'), 200);
      expect(cancelled).to.include({ status: 'cancelled', cancelReason: 'manual', refundedCents: 4878, paymentStatus: 'refunded' });
      expect(cancelled.refunds.map((r: Json) => [r.amountCents, r.status, r.reason])).to.deep.equal([[1190, 'succeeded', null], [3688, 'succeeded', 'cancellation']]);
      expect([await stock('MUG'), await stock('ODD'), await stock('TRI')]).to.deep.equal([10, 10, 10]);
      await expectLedgerHolds(order);
      // The stock of a cancelled order went back: no refund restocks it again.
      errorOf(await refund(order, { items: [{ sku: 'MUG', quantity: 1 }], restock: true }), 409, 'conflict');
      // A placed order's part payment goes back with its cancellation (an editor may cancel an order that is not paid).
      const part = await checkout('bank_transfer');
      dataOf(await t.http.post(`${ORDERS}/${part.id}/payments`).set(as(shop.tenant, 'admin')).send({ amountCents: 100 }), 201);
      expect(dataOf(await patch(part, 'cancelled', 'editor'), 200)).to.include({ status: 'cancelled', refundedCents: 100, paymentStatus: 'refunded' });
      // A partly shipped order is refunded instead.
      const shipped = await manualPaid();
      dataOf(await t.http.post(`${ORDERS}/${shipped.id}/fulfillments`).set(as(shop.tenant, 'editor')).send({ items: [{ sku: 'MUG', quantity: 1 }] }), 201);
      errorOf(await patch(shipped, 'cancelled', 'admin'), 409, 'invalid_transition');
      await waitUntil('erp.order.cancelled', async () => received('erp.order.cancelled').length === 2, 10_000);
      expect(received('erp.order.refunded').length).to.equal(3);
    });
  });

  describe('of a card payment (through Stripe)', () => {
    it('is written pending, made at Stripe with its id as idempotency key and metadata, then succeeded (201), restocked, erp.order.refunded', async () => {
      const order = await cardPaid();
      expect(order).to.include({ status: 'paid', paymentStatus: 'paid' });
      const made = dataOf(await refund(order, { items: [{ sku: 'MUG', quantity: 1 }], restock: true, reason: 'broken' }), 201);
      expect(made.refund).to.include({ status: 'succeeded', amountCents: 1190, reason: 'broken' });
      const [call] = stripeRefunds();
      expect(stripeRefunds()).to.have.length(1);
      expect(call.idempotencyKey).to.equal(made.refund.id);
      expect(call.params).to.deep.include({
        payment_intent: order.paymentIntentId, amount: '1190', reason: 'requested_by_customer',
        'metadata[tenantId]': shop.tenant, 'metadata[orderId]': order.id, 'metadata[refundId]': made.refund.id,
      });
      expect(made.refund.providerReference).to.equal([...stripe.refunds.keys()].at(-1));
      expect(made.order).to.include({ refundedCents: 1190, paymentStatus: 'partially_refunded' });
      expect(await stock('MUG')).to.equal(8);
      await waitUntil('erp.order.refunded', async () => received('erp.order.refunded').length === 1, 10_000);
      await expectLedgerHolds(order);
    });

    it('Stripe answering with errors: the refund is failed, 502 upstream_failed, nothing counted or restocked; the units may be refunded again', async () => {
      const order = await cardPaid();
      stripe.down = true;
      errorOf(await refund(order, { items: [{ sku: 'MUG', quantity: 3 }], restock: true }), 502, 'upstream_failed');
      // One retry by the package, with the same idempotency key.
      expect(new Set(stripeRefunds().map((c) => c.idempotencyKey)).size).to.equal(1);
      const after = await read(order);
      expect(after.refunds.map((r: Json) => r.status)).to.deep.equal(['failed']);
      expect(after).to.include({ refundedCents: 0, paymentStatus: 'paid' });
      expect(await stock('MUG')).to.equal(7);
      stripe.down = false;
      // A refusal Stripe does not retry (400 invalid_request_error): one call, failed all the same.
      stripe.failure = { status: 400, type: 'invalid_request_error', code: 'charge_already_refunded', message: 'Charge has already been refunded.' };
      stripe.failNext(1);
      const calls = stripeRefunds().length;
      errorOf(await refund(order, { amountCents: 10 }), 502, 'upstream_failed');
      expect(stripeRefunds().length - calls).to.equal(1);
      stripe.failure = API_ERROR;
      const made = dataOf(await refund(order, { items: [{ sku: 'MUG', quantity: 3 }], restock: true }), 201);
      expect(made.order).to.include({ refundedCents: 3570 });
      expect(made.order.refunds.map((r: Json) => r.status)).to.deep.equal(['failed', 'failed', 'succeeded']);
      expect(await stock('MUG')).to.equal(10);
      await expectLedgerHolds(order);
    });

    it('Stripe answering pending: 202, settled by charge.refunded (found by Stripe\'s id); refund.failed fails another (nothing counted)', async () => {
      const order = await cardPaid();
      stripe.refundStatus = 'pending';
      const first = await refund(order, { items: [{ sku: 'TRI', quantity: 3 }], restock: true });
      expect(first.status, JSON.stringify(first.body)).to.equal(202);
      const pending = first.body.data.refund as Json;
      expect(pending).to.include({ status: 'pending', amountCents: 1189 });
      expect(pending.providerReference).to.match(/^re_/);
      expect(first.body.data.order).to.include({ refundedCents: 0, paymentStatus: 'paid' });
      // Held while pending: the same units cannot be refunded twice, nor the money.
      errorOf(await refund(order, { items: [{ sku: 'TRI', quantity: 1 }] }), 409, 'conflict');
      errorOf(await refund(order, { amountCents: 4878 - 1189 + 1 }), 409, 'refund_exceeds_payment');
      const second = dataOf(await refund(order, { amountCents: 100 }), 202);

      const charge = { id: 'ch_1', object: 'charge', payment_intent: order.paymentIntentId, amount_refunded: 1189,
        refunds: { object: 'list', data: [{ id: pending.providerReference, object: 'refund', status: 'succeeded', amount: 1189, payment_intent: order.paymentIntentId, metadata: {} }] } };
      expect((await webhook('charge.refunded', charge)).status).to.equal(200);
      expect((await webhook('refund.failed', { id: second.refund.providerReference, object: 'refund', status: 'failed', amount: 100, payment_intent: order.paymentIntentId, metadata: {} })).status).to.equal(200);
      const after = await read(order);
      expect(after.refunds.map((r: Json) => [r.amountCents, r.status])).to.deep.equal([[1189, 'succeeded'], [100, 'failed']]);
      expect(after).to.include({ refundedCents: 1189, paymentStatus: 'partially_refunded' });
      expect(await stock('TRI')).to.equal(10);
      // Settled once: the same news again changes nothing.
      expect((await webhook('refund.updated', { ...charge.refunds.data[0], status: 'failed' })).status).to.equal(200);
      expect((await read(order)).version).to.equal(after.version);
      await waitUntil('erp.order.refunded', async () => received('erp.order.refunded').length === 1, 10_000);
      await expectLedgerHolds(order);
    });

    it('Stripe not answering: 202 pending, settled later by refund.updated (found by metadata.refundId)', async () => {
      const order = await cardPaid();
      stripe.silent = true;
      const res = await refund(order, { items: [{ sku: 'ODD', quantity: 2 }], restock: true });
      expect(res.status, JSON.stringify(res.body)).to.equal(202);
      const pending = res.body.data.refund as Json;
      expect(pending).to.include({ status: 'pending', providerReference: null, amountCents: 119 });
      expect(await stock('ODD')).to.equal(8);
      stripe.silent = false;
      const updated = { id: 're_late', object: 'refund', status: 'succeeded', amount: 119, payment_intent: order.paymentIntentId, metadata: { tenantId: shop.tenant, orderId: order.id, refundId: pending.id } };
      expect((await webhook('refund.updated', updated)).status).to.equal(200);
      const after = await read(order);
      expect(after.refunds[0]).to.include({ status: 'succeeded', providerReference: 're_late' });
      expect(after).to.include({ refundedCents: 119, paymentStatus: 'partially_refunded' });
      expect(await stock('ODD')).to.equal(10);
      await expectLedgerHolds(order);
    });

    it('cancelling a paid card order refunds it at Stripe first: Stripe down, 502 and the order as it was; Stripe up, refunded and cancelled, stock back', async () => {
      const order = await cardPaid();
      stripe.down = true;
      errorOf(await patch(order, 'cancelled', 'admin'), 502, 'upstream_failed');
      const unchanged = await read(order);
      expect(unchanged).to.include({ status: 'paid', paymentStatus: 'paid', refundedCents: 0 });
      expect(await stock('MUG')).to.equal(7);
      stripe.down = false;
      const cancelled = dataOf(await patch(order, 'cancelled', 'admin'), 200);
      expect(cancelled).to.include({ status: 'cancelled', cancelReason: 'manual', refundedCents: 4878, paymentStatus: 'refunded' });
      expect(cancelled.refunds.map((r: Json) => [r.amountCents, r.status])).to.deep.equal([[4878, 'failed'], [4878, 'succeeded']]);
      expect(stripeRefunds().at(-1)!.params).to.deep.include({ amount: '4878', 'metadata[refundId]': cancelled.refunds[1].id });
      expect([await stock('MUG'), await stock('ODD'), await stock('TRI')]).to.deep.equal([10, 10, 10]);
      await expectLedgerHolds(order);
      await waitUntil('erp.order.cancelled', async () => received('erp.order.cancelled').length === 1, 10_000);
      expect(received('erp.order.cancelled')[0].payload).to.include({ status: 'cancelled', refundedCents: 4878, paymentStatus: 'refunded' });
    });
  });
});
