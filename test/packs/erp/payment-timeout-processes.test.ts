import { expect } from 'chai';
import { createTestDatabase, ENGINE, type TestDatabase } from '../../helpers/engine.js';
import { startServiceProcess, type ServiceProcess } from '../../helpers/service-process.js';
import { StripeStandIn } from '../../helpers/stripe-stand-in.js';
import { uniqueTenantId } from '../../helpers/test-app.js';
import { superadmin } from '../../helpers/tokens.js';
import { waitUntil } from '../../helpers/wait.js';
import type { Json } from './shop.js';

/** Two service processes on one database, both sweeping for unpaid orders (CONTRACT 15.3: each order cancelled once). */
describe(`Payment timeout from two processes on one database (${ENGINE})`, function () {
  this.timeout(120_000);
  let database: TestDatabase;
  let stripe: StripeStandIn;
  const services: ServiceProcess[] = [];

  before(async () => {
    stripe = await StripeStandIn.start();
    database = await createTestDatabase();
    const env = { STRIPE_API_BASE: stripe.origin, PAYMENT_TIMEOUT_MINUTES: '0.05' };
    // The first one migrates; then the second one starts.
    services.push(await startServiceProcess(database.url, env));
    services.push(await startServiceProcess(database.url, env));
  });

  after(async () => {
    for (const s of services.splice(0)) {
      s.kill('SIGTERM');
      await s.exited;
    }
    await database.drop();
    await stripe.stop();
  });

  it('cancels each due card order once: one stock return per order, one PaymentIntent cancellation each', async () => {
    const [a, b] = services;
    const tenant = uniqueTenantId('sweep');
    await a.http.post('/api/v1/admin/tenants').set(superadmin()).send({ id: tenant, name: 'Two sweepers' }).expect(201);
    const product = (await a.http.post('/api/v1/erp/products').set(superadmin(tenant)).send({ sku: 'MUG', name: 'Mug', priceCents: 1000, physicalStock: 100 }).expect(201)).body.data;
    await a.http.put('/api/v1/erp/payment-providers/stripe').set(superadmin(tenant)).send({ secretKey: 'sk_test_standin_0123456789', webhookSecret: 'whsec_standin_0123456789' }).expect(200);
    const carts = `/api/v1/public/tenant/${tenant}/carts`;
    const orders = await Promise.all(Array.from({ length: 24 }, async (_, i) => {
      const s = i % 2 ? a : b;
      const cart = (await s.http.post(carts).send({ email: 'ann@example.com', items: [{ sku: 'MUG', quantity: 2 }] }).expect(201)).body.data;
      const res = await s.http.post(`${carts}/${cart.id}/checkout`).set('X-Cart-Token', cart.token).send({ paymentMethod: 'stripe_card' });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      return res.body.data.order as Json;
    }));
    expect((await b.http.get(`/api/v1/erp/products/${product.id}`).set(superadmin(tenant))).body.data.physicalStock).to.equal(100 - 48);

    const list = async () => (await b.http.get('/api/v1/erp/orders?limit=100').set(superadmin(tenant)).expect(200)).body.data.items as Json[];
    await waitUntil('every order cancelled', async () => (await list()).every((o) => o.status === 'cancelled'), 30_000);
    await waitUntil('every PaymentIntent cancelled', async () => orders.every((o) => stripe.intents.get(o.paymentIntentId)?.status === 'canceled'), 30_000);
    // A few more sweeps of both processes find nothing left.
    await new Promise((r) => setTimeout(r, 2_500));

    for (const order of await list()) expect(order).to.include({ status: 'cancelled', cancelReason: 'payment_timeout' });
    const ledger = (await a.http.get(`/api/v1/erp/products/${product.id}/stock-movements?limit=200`).set(superadmin(tenant)).expect(200)).body.data.items as Json[];
    for (const order of orders) {
      expect(ledger.filter((m) => m.reason === 'cancel' && m.orderId === order.id), `stock returns of order ${order.number}`).to.have.length(1);
      expect(stripe.calls.filter((c) => c.path === `/v1/payment_intents/${order.paymentIntentId}/cancel`), `cancellations of ${order.paymentIntentId}`).to.have.length(1);
    }
    expect(ledger.reduce((sum, m) => sum + m.delta, 0)).to.equal(100);
    expect((await a.http.get(`/api/v1/erp/products/${product.id}`).set(superadmin(tenant))).body.data.physicalStock).to.equal(100);
  });
});
