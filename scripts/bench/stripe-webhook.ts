import { parseArgs } from 'node:util';
import jwt from 'jsonwebtoken';
import Stripe from 'stripe';
import { loadConfig } from '../../config/index.js';
import { createApp } from '../../core/app.js';
import { systemContext } from '../../core/base/request-context.js';
import { StripeStandIn } from '../../test/helpers/stripe-stand-in.js';
import { DEFAULT_POSTGRES_URL, freePort, JWT_SECRET, makeDatabase, profileFlags, serviceEnv, startProcess, stopProcess, type Engine } from './harness.js';

/**
 * npm run bench:webhook [-- --engines sqlite,postgres --orders 500 --warm-up 50]
 *
 * A `payment_intent.succeeded` webhook handled end to end at one connection (issue 29: p50 under 5 ms): the
 * service (core/main.ts, production mode, its own process) with Stripe enabled for a tenant and Stripe's API
 * played by the loopback stand-in of the tests (STRIPE_API_BASE); `orders` card checkouts of a 1-line cart
 * (each a PaymentIntent at the stand-in), then for each order, one after the other, the event Stripe would send,
 * signed by the official package's `webhooks.generateTestHeaderString`: the signature checked, the event claimed
 * once, the order paid with its payment, its events queued, 200. Each event names another order (a repeated
 * event is answered without work). The first `warm-up` events are not counted. Checks at the end that every order
 * is paid. BENCH_PROFILE=DIR writes the service's CPU profile there (scripts/bench/cpu-profile-top.ts reads it).
 */
const { values: args } = parseArgs({
  options: {
    engines: { type: 'string', default: 'sqlite,postgres' },
    orders: { type: 'string', default: '500' },
    'warm-up': { type: 'string', default: '50' },
    postgres: { type: 'string', default: DEFAULT_POSTGRES_URL },
  },
});
const ORDERS = Number(args.orders);
const WARM_UP = Number(args['warm-up']);
const TENANT = 'hooks';
const WHSEC = 'whsec_bench_0123456789abcdef';

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];

async function bench(engine: Engine, stripe: StripeStandIn): Promise<void> {
  const db = await makeDatabase(engine, args.postgres);
  try {
    const app = await createApp(loadConfig({ ...serviceEnv(db.url, 0), LOG_LEVEL: 'warn' }));
    await app.kernel.tenants.create(systemContext(null), { id: TENANT, name: TENANT });
    await app.close();
    const port = await freePort();
    const profile = profileFlags();
    const service = await startProcess('core/main.ts', { ...serviceEnv(db.url, port), LOG_LEVEL: 'warn', STRIPE_API_BASE: stripe.origin }, port, profile);
    try {
      const base = `http://127.0.0.1:${port}/api/v1`;
      const admin = { Authorization: `Bearer ${jwt.sign({ sub: 'bench', tenant_id: TENANT, roles: ['admin'] }, JWT_SECRET, { algorithm: 'HS256', expiresIn: 3600 })}` };
      const call = async (method: string, path: string, body: unknown, headers: Record<string, string> = admin) => {
        const res = await fetch(`${base}${path}`, { method, headers: { 'Content-Type': 'application/json', ...headers }, body: body === undefined ? undefined : JSON.stringify(body) });
        const json = await res.json() as { data: Record<string, any> };
        if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
        return json.data;
      };
      await call('POST', '/erp/products', { sku: 'MUG', name: 'Mug', priceCents: 1000, currency: 'EUR', physicalStock: ORDERS * 2, taxRateBasisPoints: 1900, status: 'active' });
      await call('PUT', '/erp/payment-providers/stripe', { secretKey: 'sk_test_bench_0123456789', webhookSecret: WHSEC });
      const carts = `/public/tenant/${TENANT}/carts`;
      const orders: Array<{ id: string; paymentIntentId: string; totalCents: number }> = [];
      // Checkouts ten at a time: the setup, not measured.
      for (let i = 0; i < ORDERS; i += 10) {
        await Promise.all(Array.from({ length: Math.min(10, ORDERS - i) }, async () => {
          const cart = await call('POST', carts, { email: 'ann@example.com', items: [{ sku: 'MUG', quantity: 1 }] }, {});
          const done = await call('POST', `${carts}/${cart.id}/checkout`, { paymentMethod: 'stripe_card' }, { 'X-Cart-Token': cart.token });
          orders.push({ id: done.order.id, paymentIntentId: done.order.paymentIntentId, totalCents: done.order.totalCents });
        }));
      }
      const signer = new Stripe('sk_test_signer');
      const url = `${base}/public/payments/stripe/${TENANT}/webhook`;
      const times: number[] = [];
      for (const [i, order] of orders.entries()) {
        const payload = JSON.stringify({
          id: `evt_bench_${i}`, object: 'event', type: 'payment_intent.succeeded', created: Math.floor(Date.now() / 1000), livemode: false, api_version: '2024-06-20',
          data: { object: { id: order.paymentIntentId, object: 'payment_intent', amount_received: order.totalCents, currency: 'eur', status: 'succeeded', metadata: { tenantId: TENANT, orderId: order.id } } },
        });
        const headers = { 'Content-Type': 'application/json', 'Stripe-Signature': signer.webhooks.generateTestHeaderString({ payload, secret: WHSEC }) };
        const started = performance.now();
        const res = await fetch(url, { method: 'POST', headers, body: payload });
        await res.arrayBuffer();
        const ms = performance.now() - started;
        if (res.status !== 200) throw new Error(`webhook ${i}: ${res.status}`);
        if (i >= WARM_UP) times.push(ms);
      }
      const paid = await call('GET', '/erp/orders?filter[status]=paid&limit=1', undefined);
      if (paid.pagination.total !== orders.length) throw new Error(`${paid.pagination.total} of ${orders.length} orders paid`);
      times.sort((a, b) => a - b);
      console.log(`${engine}: payment_intent.succeeded, ${times.length} events at one connection (after ${WARM_UP}), each paying another order: `
        + `p50 ${percentile(times, 0.5).toFixed(2)} ms, p90 ${percentile(times, 0.9).toFixed(2)} ms, p99 ${percentile(times, 0.99).toFixed(2)} ms `
        + `(target p50 < 5 ms); ${orders.length} of ${orders.length} orders paid`);
    } finally {
      await stopProcess(service);
    }
  } finally {
    await db.drop();
  }
}

const stripe = await StripeStandIn.start();
try {
  for (const engine of args.engines!.split(',') as Engine[]) await bench(engine, stripe);
} finally {
  await stripe.stop();
}
