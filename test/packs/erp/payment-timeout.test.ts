import { expect } from 'chai';
import Stripe from 'stripe';
import { ConfigError, loadConfig } from '../../../config/index.js';
import { startReceiver, type HttpReceiver } from '../../helpers/http-receiver.js';
import { StripeStandIn } from '../../helpers/stripe-stand-in.js';
import { createTenant, startTestApp, testEnvironment, type TestApp } from '../../helpers/test-app.js';
import { as, superadmin } from '../../helpers/tokens.js';
import { waitUntil } from '../../helpers/wait.js';
import { ORDERS, Shop, Storefront, dataOf, errorOf, type Json } from './shop.js';

const WHSEC = 'whsec_standin_0123456789';
const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000).toISOString();

/**
 * The payment timeout (CONTRACT 15.3, 15.6, 15.7): unpaid card orders after PAYMENT_TIMEOUT_MINUTES (0.02 here:
 * 1.2 s), bank transfers after MANUAL_PAYMENT_TIMEOUT_DAYS (0.00002: 1.7 s), cancelled by the service on its own
 * (its sweep runs every second with such timeouts), racing Stripe's webhook and an editor's PATCH.
 */
describe('Payment timeout (CONTRACT 15.3, 15.6)', function () {
  this.timeout(90_000);
  let t: TestApp;
  let stripe: StripeStandIn;
  let receiver: HttpReceiver;
  let shop: Shop;
  let store: Storefront;
  const signer = new Stripe('sk_test_signer');
  let eventCounter = 0;

  const enableStripe = () => t.http.put('/api/v1/erp/payment-providers/stripe').set(as(shop.tenant, 'admin'))
    .send({ secretKey: 'sk_test_standin_0123456789', webhookSecret: WHSEC }).expect(200);
  const checkout = async (paymentMethod: string, items: Json[], cart: Json = {}) => {
    const made = await store.cart({ email: 'ann@example.com', items, ...cart });
    return { cart: made, res: await store.write('post', made, 'checkout', { paymentMethod }) };
  };
  const placed = async (paymentMethod: string, items: Json[], cart: Json = {}) => dataOf((await checkout(paymentMethod, items, cart)).res, 201).order as Json;
  const orderNow = async (order: Json) => (await t.http.get(`${ORDERS}/${order.id}`).set(as(shop.tenant, 'viewer')).expect(200)).body.data as Json;
  const cancelMovements = async (productId: string, orderId: string) => (await shop.movements(productId)).filter((m) => m.reason === 'cancel' && m.orderId === orderId);
  const sweep = () => t.app.packs.find((p) => p.definition.name === 'erp')!.context.use('erp.paymentTimeouts').sweepOnce();
  const event = (type: string, object: Json, created = Math.floor(Date.now() / 1000)) =>
    JSON.stringify({ id: `evt_${++eventCounter}_${Math.random().toString(36).slice(2, 8)}`, object: 'event', type, data: { object }, created, livemode: false, api_version: '2024-06-20' });
  const send = (payload: string) => t.http.post(`/api/v1/public/payments/stripe/${shop.tenant}/webhook`).set('Content-Type', 'application/json')
    .set('Stripe-Signature', signer.webhooks.generateTestHeaderString({ payload, secret: WHSEC })).send(payload);
  const succeeded = (order: Json) => ({ id: order.paymentIntentId, object: 'payment_intent', amount_received: order.totalCents, currency: 'eur', status: 'succeeded' });
  const intentCancels = (order: Json) => stripe.calls.filter((c) => c.path === `/v1/payment_intents/${order.paymentIntentId}/cancel`);
  // A coupon of the CRM for a customer (an abandoned cart recovered), and the customer's coupons.
  const couponFor = async (customerRef: string) => {
    await t.http.post('/api/v1/crm/events').set(as(shop.tenant, 'editor'))
      .send({ customerRef, eventType: 'cart.item_added', eventData: { sku: 'MUG', quantity: 1 }, occurredAt: minutesAgo(120) }).expect(201);
    const res = await t.http.post('/api/v1/crm/recover-abandoned-carts').set(as(shop.tenant, 'admin')).send({}).expect(200);
    return (res.body.data.recovered as Json[]).find((c) => c.customerRef === customerRef)!.coupon as { code: string };
  };
  const coupons = async (customerRef: string) => (await t.http.get(`/api/v1/crm/coupons?customerRef=${customerRef}`).set(as(shop.tenant, 'admin')).expect(200)).body.data.items as Json[];
  const setErp = (isEnabled: boolean) => t.http.patch(`/api/v1/tenants/${shop.tenant}/licensed-modules`).set(superadmin()).send({ appCode: 'erp', isEnabled }).expect(200);

  before(async () => {
    stripe = await StripeStandIn.start();
    receiver = await startReceiver();
    t = await startTestApp({ env: { STRIPE_API_BASE: stripe.origin, PAYMENT_TIMEOUT_MINUTES: '0.02', MANUAL_PAYMENT_TIMEOUT_DAYS: '0.00002' } });
  });

  after(async () => {
    await t.close();
    await stripe.stop();
    await receiver.stop();
  });

  beforeEach(async () => {
    stripe.down = false;
    stripe.calls.length = 0;
    shop = new Shop(t, await createTenant(t, 'timeout'));
    store = new Storefront(shop);
  });

  it('PAYMENT_TIMEOUT_MINUTES and MANUAL_PAYMENT_TIMEOUT_DAYS are positive decimals (30 and 7 by default); another value stops the start', () => {
    const config = (env: Record<string, string>) => loadConfig(testEnvironment('sqlite::memory:', env)).payments;
    expect(config({})).to.include({ paymentTimeoutMinutes: 30, manualPaymentTimeoutDays: 7 });
    expect(config({ PAYMENT_TIMEOUT_MINUTES: '0.05', MANUAL_PAYMENT_TIMEOUT_DAYS: '2.5' })).to.include({ paymentTimeoutMinutes: 0.05, manualPaymentTimeoutDays: 2.5 });
    const bads: Array<Record<string, string>> = [{ MANUAL_PAYMENT_TIMEOUT_DAYS: '0' }, { MANUAL_PAYMENT_TIMEOUT_DAYS: 'soon' }, { PAYMENT_TIMEOUT_MINUTES: '-1' }];
    for (const bad of bads) {
      expect(() => config(bad), JSON.stringify(bad)).to.throw(ConfigError, /PAYMENT_TIMEOUT/);
    }
  });

  it('cancels an unpaid card order on its own (payment_timeout), also with the erp module off: stock back once, coupon freed once, its PaymentIntent cancelled', async () => {
    await t.http.post('/api/v1/connectors').set(as(shop.tenant, 'admin')).send({ url: `${receiver.url}/hook`, events: ['erp.order.cancelled'] }).expect(201);
    const cancelledEvents = () => receiver.requests.map((r) => JSON.parse(r.body) as Json).filter((e) => e.event === 'erp.order.cancelled');
    const mug = await shop.product({ sku: 'MUG', priceCents: 1000, physicalStock: 5 });
    await enableStripe();
    const coupon = await couponFor('ann');
    const cart = await store.cart({ customerRef: 'ann', email: 'ann@example.com', items: [{ sku: 'MUG', quantity: 2 }] });
    await store.write('put', cart, 'coupon', { code: coupon.code }).expect(200);
    const order = dataOf(await store.write('post', cart, 'checkout', { paymentMethod: 'stripe_card' }), 201).order as Json;
    expect(order).to.include({ status: 'pending_payment', couponCode: coupon.code });
    expect((await coupons('ann'))[0]).to.include({ orderId: order.id });
    await setErp(false);

    await waitUntil('the PaymentIntent cancelled at Stripe', async () => stripe.intents.get(order.paymentIntentId)?.status === 'canceled', 15_000);
    await setErp(true);
    const cancelled = await orderNow(order);
    expect(cancelled).to.include({ status: 'cancelled', cancelReason: 'payment_timeout', paymentStatus: 'pending' });
    expect(await cancelMovements(mug.id, order.id)).to.have.length(1);
    expect(await shop.expectLedgerConsistent(mug.id)).to.equal(5);
    expect((await coupons('ann'))[0]).to.include({ code: coupon.code, orderId: null, redeemedAt: null });
    expect(intentCancels(order)).to.have.length(1);

    // Later sweeps, and Stripe's own payment_intent.canceled, find nothing left to do.
    expect(await sweep()).to.deep.equal({ cancelled: 0, intentsCancelled: 0 });
    expect((await send(event('payment_intent.canceled', { ...succeeded(order), amount_received: 0, status: 'canceled' }))).status).to.equal(200);
    expect((await orderNow(order)).version).to.equal(cancelled.version);
    expect(await cancelMovements(mug.id, order.id)).to.have.length(1);
    expect(intentCancels(order)).to.have.length(1);
    // One erp.order.cancelled, with its reason.
    await waitUntil('the erp.order.cancelled delivery', async () => cancelledEvents().length > 0);
    await new Promise((r) => setTimeout(r, 300));
    expect(cancelledEvents().map((e) => e.payload)).to.deep.equal([{
      orderId: order.id, number: order.number, status: 'cancelled', paymentStatus: 'pending', fulfillmentStatus: 'unfulfilled',
      totalCents: order.totalCents, refundedCents: 0, cancelReason: 'payment_timeout',
    }]);
  });

  it('cancels an unpaid bank transfer after MANUAL_PAYMENT_TIMEOUT_DAYS; cash on delivery never expires, nor does a bank transfer paid in time', async () => {
    const mug = await shop.product({ sku: 'MUG', priceCents: 1000, physicalStock: 10 });
    const unpaid = await placed('bank_transfer', [{ sku: 'MUG', quantity: 1 }]);
    const paid = await placed('bank_transfer', [{ sku: 'MUG', quantity: 2 }]);
    const cash = await placed('cash_on_delivery', [{ sku: 'MUG', quantity: 3 }]);
    await t.http.post(`${ORDERS}/${paid.id}/payments`).set(as(shop.tenant, 'admin')).send({ amountCents: paid.totalCents, reference: 'SEPA-1' }).expect(201);

    await waitUntil('the unpaid bank transfer cancelled', async () => (await orderNow(unpaid)).status === 'cancelled', 15_000);
    // Past every deadline, and swept once more: the others stay as they were.
    await new Promise((r) => setTimeout(r, 500));
    await sweep();
    expect(await orderNow(unpaid)).to.include({ status: 'cancelled', cancelReason: 'payment_timeout' });
    expect(await orderNow(paid)).to.include({ status: 'paid', paymentStatus: 'paid', cancelReason: null });
    expect(await orderNow(cash)).to.include({ status: 'placed', paymentStatus: 'pending', cancelReason: null });
    expect(await cancelMovements(mug.id, unpaid.id)).to.have.length(1);
    expect(await shop.expectLedgerConsistent(mug.id)).to.equal(10 - 2 - 3);
    expect(stripe.calls).to.have.length(0);
  });

  it('a webhook payment_intent.succeeded, the timeout and a PATCH cancel racing on one order end in one final state with one stock return', async () => {
    const mug = await shop.product({ sku: 'MUG', priceCents: 1000, physicalStock: 100 });
    await enableStripe();
    const orders: Json[] = [];
    for (let i = 0; i < 8; i++) orders.push(await placed('stripe_card', [{ sku: 'MUG', quantity: 2 }]));
    // Due now (1.2 s after placing): all three at once on every order, while the service's own sweep may run too.
    await new Promise((r) => setTimeout(r, Math.max(0, Date.parse(orders.at(-1)!.createdAt) + 1_250 - Date.now())));
    const answers = await Promise.all(orders.flatMap((order) => [
      send(event('payment_intent.succeeded', succeeded(order))),
      t.http.patch(`${ORDERS}/${order.id}`).set(as(shop.tenant, 'editor')).send({ status: 'cancelled' }),
      sweep(),
    ]));
    for (let i = 0; i < orders.length; i++) {
      const [webhook, patch] = answers.slice(i * 3, i * 3 + 2) as Array<{ status: number; body: Json }>;
      expect(webhook.status).to.equal(200);
      // 200 (cancelled first), 409 (cancelled by another first), or, paid first, the cancellation of a paid order (15.4: 403 for an editor).
      expect(patch.status, JSON.stringify(patch.body)).to.be.oneOf([200, 403, 409]);
    }
    let kept = 0;
    for (const order of orders) {
      const final = await orderNow(order);
      expect(final.status).to.be.oneOf(['paid', 'cancelled']);
      const returns = await cancelMovements(mug.id, order.id);
      expect(returns, `stock returns of order ${final.number}`).to.have.length(final.status === 'cancelled' ? 1 : 0);
      const paidCents = (final.payments as Json[]).reduce((s, p) => s + p.amountCents, 0);
      expect(paidCents).to.equal(order.totalCents);
      if (final.status === 'paid') {
        kept += 1;
        expect(final).to.include({ paymentStatus: 'paid', refundedCents: 0 });
      } else if (final.paidAt === null || final.paidAt === undefined) {
        // Cancelled before the payment came (by the timeout or the editor): the payment was refunded at once.
        expect(final.cancelReason).to.be.oneOf(['payment_timeout', 'manual']);
        expect(final).to.include({ paymentStatus: 'refunded', refundedCents: order.totalCents });
      }
      // (Paid first, then cancelled by the editor's PATCH: cancelling a paid order, with its refund, is 15.4's.)
    }
    expect(await shop.expectLedgerConsistent(mug.id)).to.equal(100 - 2 * kept);
  });

  it('a payment that arrives after the timeout cancelled the order is recorded and refunded in full at once', async () => {
    const mug = await shop.product({ sku: 'MUG', priceCents: 1000, physicalStock: 5 });
    await enableStripe();
    const order = await placed('stripe_card', [{ sku: 'MUG', quantity: 2 }]);
    await waitUntil('the order cancelled by the timeout', async () => (await orderNow(order)).status === 'cancelled', 15_000);
    expect((await send(event('payment_intent.succeeded', succeeded(order)))).status).to.equal(200);
    const after = await orderNow(order);
    expect(after).to.include({ status: 'cancelled', cancelReason: 'payment_timeout', paymentStatus: 'refunded', refundedCents: order.totalCents });
    expect(after.refunds).to.have.length(1);
    expect(after.refunds[0]).to.include({ amountCents: order.totalCents, status: 'succeeded' });
    const refunds = stripe.calls.filter((c) => c.path === '/v1/refunds');
    expect(refunds).to.have.length(1);
    expect(refunds[0].params).to.deep.include({ payment_intent: order.paymentIntentId, amount: String(order.totalCents) });
    expect(await cancelMovements(mug.id, order.id)).to.have.length(1);
    expect(await shop.expectLedgerConsistent(mug.id)).to.equal(5);
  });

  it('Stripe down when the PaymentIntent is to be cancelled: the order is cancelled anyway, and Stripe is asked again later', async () => {
    const mug = await shop.product({ sku: 'MUG', priceCents: 1000, physicalStock: 5 });
    await enableStripe();
    const order = await placed('stripe_card', [{ sku: 'MUG', quantity: 1 }]);
    stripe.down = true;
    await waitUntil('the order cancelled by the timeout', async () => (await orderNow(order)).status === 'cancelled', 15_000);
    expect(await orderNow(order)).to.include({ cancelReason: 'payment_timeout' });
    expect(await shop.expectLedgerConsistent(mug.id)).to.equal(5);
    // The first try: two attempts (the package's one retry), both refused.
    await waitUntil('a first try', async () => intentCancels(order).length >= 2);
    await new Promise((r) => setTimeout(r, 200));
    expect(stripe.intents.get(order.paymentIntentId)!.status).to.not.equal('canceled');
    stripe.down = false;
    // The next try comes three sweep periods later (3 s here; 30 s with the default timeouts).
    await waitUntil('the PaymentIntent cancelled on a later try', async () => stripe.intents.get(order.paymentIntentId)?.status === 'canceled', 20_000);
    expect(intentCancels(order)).to.have.length(3);
    expect(await cancelMovements(mug.id, order.id)).to.have.length(1);
  });

  it('the same Stripe event twice and events out of order change an order once, and never back', async () => {
    const mug = await shop.product({ sku: 'MUG', priceCents: 1000, physicalStock: 10 });
    await enableStripe();
    const paid = await placed('stripe_card', [{ sku: 'MUG', quantity: 1 }]);
    const cancelled = await placed('stripe_card', [{ sku: 'MUG', quantity: 2 }]);
    const old = Math.floor(Date.now() / 1000) - 60;

    // Paid, the same delivery again, then older events arriving late: it stays paid, without the old error.
    const success = event('payment_intent.succeeded', succeeded(paid));
    expect((await send(success)).status).to.equal(200);
    const afterPaid = await orderNow(paid);
    for (const late of [success, event('payment_intent.payment_failed', { ...succeeded(paid), amount_received: 0, last_payment_error: { message: 'Your card was declined.' } }, old),
      event('payment_intent.canceled', { ...succeeded(paid), amount_received: 0 }, old)]) {
      expect((await send(late)).status).to.equal(200);
    }
    const stillPaid = await orderNow(paid);
    expect(stillPaid).to.include({ status: 'paid', paymentStatus: 'paid', version: afterPaid.version });
    expect(stillPaid.lastPaymentError ?? null).to.equal(null);
    expect(stillPaid.payments).to.have.length(1);

    // Cancelled by Stripe, delivered twice, then an older payment_failed: it stays cancelled, the stock back once.
    const canceled = event('payment_intent.canceled', { ...succeeded(cancelled), amount_received: 0 });
    expect((await send(canceled)).status).to.equal(200);
    expect((await send(canceled)).status).to.equal(200);
    expect((await send(event('payment_intent.payment_failed', { ...succeeded(cancelled), amount_received: 0, last_payment_error: { message: 'declined' } }, old))).status).to.equal(200);
    const final = await orderNow(cancelled);
    expect(final).to.include({ status: 'cancelled', cancelReason: 'payment_cancelled' });
    expect(final.lastPaymentError ?? null).to.equal(null);
    expect(await cancelMovements(mug.id, cancelled.id)).to.have.length(1);
    // Past the timeout, the sweep leaves both alone.
    await new Promise((r) => setTimeout(r, 1_300));
    await sweep();
    expect((await orderNow(paid)).status).to.equal('paid');
    expect(await cancelMovements(mug.id, cancelled.id)).to.have.length(1);
    expect(await shop.expectLedgerConsistent(mug.id)).to.equal(9);
  });

  it('a card checkout whose payment cannot start records no checkout.completed; the one that starts records it once', async () => {
    await shop.product({ sku: 'MUG', priceCents: 1000, physicalStock: 5 });
    await enableStripe();
    const cart = await store.cart({ customerRef: 'bea', email: 'bea@example.com', items: [{ sku: 'MUG', quantity: 1 }] });
    stripe.down = true;
    errorOf(await store.write('post', cart, 'checkout', { paymentMethod: 'stripe_card' }), 502, 'upstream_failed');
    stripe.down = false;
    const order = dataOf(await store.write('post', cart, 'checkout', { paymentMethod: 'stripe_card' }), 201).order as Json;
    const events = (await t.http.get('/api/v1/crm/events?customerRef=bea').set(as(shop.tenant, 'viewer')).expect(200)).body.data.items as Json[];
    expect(events.filter((e) => e.eventType === 'checkout.completed').map((e) => e.eventData)).to.deep.equal([{ orderId: order.id }]);
  });
});
