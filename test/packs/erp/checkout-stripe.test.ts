import { expect } from 'chai';
import Stripe from 'stripe';
import { ConfigError, loadConfig } from '../../../config/index.js';
import { StripeStandIn } from '../../helpers/stripe-stand-in.js';
import { createTenant, startTestApp, testEnvironment, type TestApp } from '../../helpers/test-app.js';
import { as, superadmin } from '../../helpers/tokens.js';
import { Shop, Storefront, dataOf, errorOf, type Json } from './shop.js';

describe('Checkout with stripe_card (CONTRACT 15.3)', function () {
  this.timeout(60_000);
  let t: TestApp;
  let stripe: StripeStandIn;
  let shop: Shop;
  let store: Storefront;
  const enableStripe = () => t.http.put('/api/v1/erp/payment-providers/stripe').set(as(shop.tenant, 'admin'))
    .send({ secretKey: 'sk_test_standin_0123456789', webhookSecret: 'whsec_standin_0123456789' }).expect(200);
  const cardCheckout = async (quantity: number, body: Json = {}) => {
    const cart = await store.cart({ email: 'ann@example.com', items: [{ sku: 'MUG', quantity }] });
    return { cart, res: await store.write('post', cart, 'checkout', { paymentMethod: 'stripe_card', ...body }) };
  };

  before(async () => {
    stripe = await StripeStandIn.start();
    t = await startTestApp({ env: { STRIPE_API_BASE: stripe.origin } });
  });

  after(async () => {
    await t.close();
    await stripe.stop();
  });

  beforeEach(async () => {
    stripe.down = false;
    stripe.calls.length = 0;
    shop = new Shop(t, await createTenant(t, 'card'));
    store = new Storefront(shop);
  });

  it('STRIPE_API_BASE must be an origin: a path or another scheme stops the start', () => {
    for (const bad of ['http://127.0.0.1:12111/v1', 'ftp://127.0.0.1', 'not a url']) {
      expect(() => loadConfig(testEnvironment('sqlite::memory:', { STRIPE_API_BASE: bad })), bad).to.throw(ConfigError, /STRIPE_API_BASE/);
    }
    expect(loadConfig(testEnvironment('sqlite::memory:', { STRIPE_API_BASE: 'http://127.0.0.1:12111' })).payments.stripeApiBase)
      .to.deep.equal({ protocol: 'http', host: '127.0.0.1', port: 12111 });
  });

  it('commits the order pending_payment, creates the PaymentIntent with the order id as idempotency key, answers its client secret', async () => {
    const mug = await shop.product({ sku: 'MUG', priceCents: 1000, physicalStock: 5 });
    await enableStripe();
    const { cart, res } = await cardCheckout(2);
    const answer = dataOf(res, 201);
    const order = answer.order as Json;
    expect(order).to.include({ status: 'pending_payment', paymentStatus: 'pending', paymentMethod: 'stripe_card', totalCents: 2380 });
    expect(answer.payment).to.include({ provider: 'stripe', paymentIntentId: order.paymentIntentId, status: 'requires_payment_method' });
    expect(answer.payment.clientSecret).to.match(/^pi_.+_secret_/);
    const create = stripe.calls.filter((c) => c.path === '/v1/payment_intents');
    expect(create).to.have.length(1);
    expect(create[0].idempotencyKey).to.equal(order.id);
    expect(create[0].params).to.deep.include({ amount: '2380', currency: 'eur', 'payment_method_types[0]': 'card', 'metadata[tenantId]': shop.tenant, 'metadata[orderId]': order.id });
    expect((await shop.get(mug.id)).physicalStock).to.equal(3);
    const completed = dataOf(await store.read(cart), 200);
    expect(completed.order).to.include({ id: order.id, status: 'pending_payment', clientSecret: answer.payment.clientSecret });
    // An editor cannot mark a card order paid.
    errorOf(await t.http.patch(`/api/v1/erp/orders/${order.id}`).set(as(shop.tenant, 'editor')).send({ status: 'paid' }), 409, 'invalid_transition');
  });

  it('answers 400 at /paymentMethod while Stripe is not enabled, or for a total under 50 cents', async () => {
    await shop.product({ sku: 'MUG', priceCents: 40, taxRateBasisPoints: 0, physicalStock: 5 });
    expect(errorOf((await cardCheckout(1)).res, 400, 'validation_failed').details[0].path).to.equal('/paymentMethod');
    await enableStripe();
    expect(errorOf((await cardCheckout(1)).res, 400, 'validation_failed').details[0].path).to.equal('/paymentMethod');
    dataOf((await cardCheckout(2)).res, 201);
    await t.http.delete('/api/v1/erp/payment-providers/stripe').set(as(shop.tenant, 'admin')).expect(200);
    expect(errorOf((await cardCheckout(2)).res, 400, 'validation_failed').details[0].path).to.equal('/paymentMethod');
  });

  it('Stripe down: 502 upstream_failed, the order cancelled with payment_failed, stock back, the cart open again', async () => {
    const mug = await shop.product({ sku: 'MUG', priceCents: 1000, physicalStock: 5 });
    await enableStripe();
    stripe.down = true;
    const { cart, res } = await cardCheckout(2);
    errorOf(res, 502, 'upstream_failed');
    // One retry by the package: two attempts with the same idempotency key.
    const attempts = stripe.calls.filter((c) => c.path === '/v1/payment_intents');
    expect(attempts).to.have.length(2);
    expect(new Set(attempts.map((a) => a.idempotencyKey)).size).to.equal(1);
    const orders = (await t.http.get('/api/v1/erp/orders').set(as(shop.tenant, 'viewer')).expect(200)).body.data.items as Json[];
    expect(orders).to.have.length(1);
    expect(orders[0]).to.include({ status: 'cancelled', cancelReason: 'payment_failed' });
    expect(await shop.expectLedgerConsistent(mug.id)).to.equal(5);
    expect(dataOf(await store.read(cart), 200)).to.include({ status: 'open', order: null });
    stripe.down = false;
    const again = dataOf(await store.write('post', cart, 'checkout', { paymentMethod: 'stripe_card' }), 201);
    expect(again.order.status).to.equal('pending_payment');
  });

  describe('POST /public/payments/stripe/{tenantId}/webhook', () => {
    const WHSEC = 'whsec_standin_0123456789';
    const signer = new Stripe('sk_test_signer');
    let eventCounter = 0;
    const event = (type: string, object: Json, id = `evt_${++eventCounter}_${Math.random().toString(36).slice(2, 8)}`) =>
      JSON.stringify({ id, object: 'event', type, data: { object }, created: Math.floor(Date.now() / 1000), livemode: false, api_version: '2024-06-20' });
    const send = (payload: string, options: { secret?: string; timestamp?: number; tenant?: string; signature?: string | null } = {}) => {
      const signature = options.signature === undefined
        ? signer.webhooks.generateTestHeaderString({ payload, secret: options.secret ?? WHSEC, ...(options.timestamp ? { timestamp: options.timestamp } : {}) })
        : options.signature;
      const req = t.http.post(`/api/v1/public/payments/stripe/${options.tenant ?? shop.tenant}/webhook`).set('Content-Type', 'application/json');
      if (signature !== null) req.set('Stripe-Signature', signature);
      return req.send(payload);
    };
    const pendingOrder = async () => {
      await shop.product({ sku: 'MUG', priceCents: 1000, physicalStock: 5 });
      await enableStripe();
      return dataOf((await cardCheckout(2)).res, 201).order as Json;
    };
    const orderNow = async (order: Json) => (await t.http.get(`/api/v1/erp/orders/${order.id}`).set(as(shop.tenant, 'viewer')).expect(200)).body.data as Json;

    it('payment_intent.succeeded pays the order once, also with the erp module off; the same event again answers 200 and changes nothing', async () => {
      const order = await pendingOrder();
      await t.http.patch(`/api/v1/tenants/${shop.tenant}/licensed-modules`).set(superadmin()).send({ appCode: 'erp', isEnabled: false }).expect(200);
      const payload = event('payment_intent.succeeded', { id: order.paymentIntentId, object: 'payment_intent', amount_received: 2380, currency: 'eur', status: 'succeeded' });
      expect((await send(payload)).status).to.equal(200);
      await t.http.patch(`/api/v1/tenants/${shop.tenant}/licensed-modules`).set(superadmin()).send({ appCode: 'erp', isEnabled: true }).expect(200);
      const paid = await orderNow(order);
      expect(paid).to.include({ status: 'paid', paymentStatus: 'paid' });
      expect(paid.payments).to.have.length(1);
      expect(paid.payments[0]).to.include({ provider: 'stripe', reference: order.paymentIntentId, amountCents: 2380 });
      expect((await send(payload)).status).to.equal(200);
      expect((await orderNow(order)).version).to.equal(paid.version);
    });

    it('answers 400 invalid_signature for a missing, wrong, stale or other tenant\'s signature, and changes nothing', async () => {
      const order = await pendingOrder();
      const payload = event('payment_intent.succeeded', { id: order.paymentIntentId, object: 'payment_intent', amount_received: 2380, currency: 'eur' });
      const other = await createTenant(t, 'card');
      for (const res of [
        await send(payload, { signature: null }), await send(payload, { secret: 'whsec_other' }),
        await send(payload, { timestamp: Math.floor(Date.now() / 1000) - 301 }), await send(payload, { tenant: other }),
      ]) errorOf(res, 400, 'invalid_signature');
      expect((await orderNow(order)).status).to.equal('pending_payment');
    });

    it('pays the order made with the intent, whatever order its metadata names: another order of the tenant, a missing one, or none', async () => {
      const first = await pendingOrder();
      const second = dataOf((await cardCheckout(1)).res, 201).order as Json;
      const third = dataOf((await cardCheckout(1)).res, 201).order as Json;
      const paying = (order: Json, metadata: Json | null) => event('payment_intent.succeeded', {
        id: order.paymentIntentId, object: 'payment_intent', amount_received: order.totalCents, currency: 'eur', ...(metadata ? { metadata } : {}),
      });
      expect((await send(paying(first, { orderId: second.id }))).status).to.equal(200);
      expect((await send(paying(second, { orderId: '01900000-0000-7000-8000-000000000000' }))).status).to.equal(200);
      expect((await send(paying(third, null))).status).to.equal(200);
      for (const order of [first, second, third]) {
        const now = await orderNow(order);
        expect(now, order.id).to.include({ status: 'paid', paymentStatus: 'paid' });
        expect(now.payments.map((p: Json) => [p.reference, p.amountCents])).to.deep.equal([[order.paymentIntentId, order.totalCents]]);
      }
    });

    it('payment_intent.payment_failed keeps the order pending with lastPaymentError; payment_intent.canceled cancels it (payment_cancelled, stock back)', async () => {
      const order = await pendingOrder();
      const intent = { id: order.paymentIntentId, object: 'payment_intent', amount_received: 0, currency: 'eur' };
      expect((await send(event('payment_intent.payment_failed', { ...intent, last_payment_error: { message: 'Your card was declined.' } }))).status).to.equal(200);
      expect(await orderNow(order)).to.include({ status: 'pending_payment', lastPaymentError: 'Your card was declined.' });
      expect((await send(event('payment_intent.canceled', intent))).status).to.equal(200);
      expect(await orderNow(order)).to.include({ status: 'cancelled', cancelReason: 'payment_cancelled' });
      expect((await shop.get(order.items[0].productId)).physicalStock).to.equal(5);
      // Events of unknown intents and other types: 200, nothing changes.
      expect((await send(event('payment_intent.succeeded', { ...intent, id: 'pi_unknown' }))).status).to.equal(200);
      expect((await send(event('customer.created', { id: 'cus_1', object: 'customer' }))).status).to.equal(200);
    });

    it('a payment that arrives after the cancellation is recorded and refunded in full at once; the order stays cancelled', async () => {
      const order = await pendingOrder();
      const intent = { id: order.paymentIntentId, object: 'payment_intent', amount_received: 2380, currency: 'eur' };
      expect((await send(event('payment_intent.canceled', intent))).status).to.equal(200);
      expect((await send(event('payment_intent.succeeded', intent))).status).to.equal(200);
      const after = await orderNow(order);
      expect(after).to.include({ status: 'cancelled', cancelReason: 'payment_cancelled', refundedCents: 2380, paymentStatus: 'refunded' });
      expect(after.payments.map((p: Json) => [p.provider, p.amountCents])).to.deep.equal([['stripe', 2380]]);
      expect(after.refunds[0]).to.include({ amountCents: 2380, status: 'succeeded' });
      const refunds = stripe.calls.filter((c) => c.path === '/v1/refunds');
      expect(refunds).to.have.length(1);
      expect(refunds[0].idempotencyKey).to.equal(after.refunds[0].id);
      expect(refunds[0].params).to.deep.include({ payment_intent: order.paymentIntentId, amount: '2380', 'metadata[orderId]': order.id });
      expect(after.refunds[0].providerReference).to.equal([...stripe.refunds.keys()].at(-1));
    });

    it('an amount that differs cancels the order (amount_mismatch, stock back) and refunds what was paid', async () => {
      const order = await pendingOrder();
      const intent = { id: order.paymentIntentId, object: 'payment_intent', amount_received: 100, currency: 'eur' };
      expect((await send(event('payment_intent.succeeded', intent))).status).to.equal(200);
      const after = await orderNow(order);
      expect(after).to.include({ status: 'cancelled', cancelReason: 'amount_mismatch', refundedCents: 100, paymentStatus: 'refunded' });
      expect((await shop.get(order.items[0].productId)).physicalStock).to.equal(5);
    });
  });
});
