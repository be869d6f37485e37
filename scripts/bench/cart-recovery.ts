/**
 * The abandoned-cart recovery over a big tenant: its time and the process's peak memory.
 *
 *   node --import tsx scripts/bench/cart-recovery.ts [sqlite|postgres|both] [events=100000] [customers=5000] [orders=20000]
 *
 * Loads 200 products (through the records service), `orders` orders of 1 to 4 lines by those customers (5%
 * cancelled; written straight into the order records and the stock ledger, as order placement leaves them),
 * and `events` first-party events of `customers` customers (carts built, emptied and checked out over the
 * last six days, page views between) straight into crm_events, then times one POST
 * /api/v1/crm/recover-abandoned-carts through HTTP, sampling the heap and RSS every 5 ms. The recovery reads
 * a batch of customers at a time, so its peak stays far below the size of the events.
 */
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import jwt from 'jsonwebtoken';
import { loadConfig } from '../../config/index.js';
import { createApp } from '../../core/app.js';
import type { DataRecord } from '../../core/data/records.repository.js';
import { newId } from '../../core/base/ids.js';
import { systemContext } from '../../core/base/request-context.js';
import { backfillCoPurchases } from '../../packs/erp/migrations/0510-erp-co-purchases.js';
import { JWT_SECRET, makeDatabase, serviceEnv, type Engine } from './harness.js';

const [engineArg = 'both', eventsArg = '100000', customersArg = '5000', ordersArg = '20000'] = process.argv.slice(2);
const EVENTS = Number(eventsArg);
const CUSTOMERS = Number(customersArg);
const ORDERS = Number(ordersArg);
const TENANT = 'bench-carts';
const SKUS = Array.from({ length: 200 }, (_, i) => `SKU-${String(i).padStart(3, '0')}`);

/** Deterministic pseudo-random numbers, so every run loads the same events. */
function random(seed: number): () => number {
  let s = seed;
  return () => ((s = (s * 1103515245 + 12345) % 2147483648) / 2147483648);
}

function eventRows(): Array<Record<string, unknown>> {
  const next = random(42);
  const now = Date.now();
  const rows: Array<Record<string, unknown>> = [];
  for (let i = 0; i < EVENTS; i++) {
    const customer = `cust-${String(i % CUSTOMERS).padStart(5, '0')}`;
    // Time runs forward per customer: six days back to ten minutes ago.
    const step = Math.floor(i / CUSTOMERS);
    const steps = Math.ceil(EVENTS / CUSTOMERS);
    const at = new Date(now - 6 * 86400_000 + (step / steps) * (6 * 86400_000 - 600_000) + next() * 1000).toISOString();
    const roll = next();
    const sku = SKUS[Math.floor(next() * SKUS.length)];
    const [type, data] = roll < 0.5 ? ['cart.item_added', { sku, quantity: 1 + Math.floor(next() * 3) }]
      : roll < 0.6 ? ['cart.item_removed', { sku }]
        : roll < 0.63 ? ['checkout.completed', {}]
          : ['page.viewed', { path: `/p/${sku}` }];
    rows.push({
      tenant_id: TENANT, id: randomUUID(), event_id: null, event_type: type, customer_ref: customer, event_data: JSON.stringify(data),
      occurred_at: at, received_at: at, bot: roll > 0.995,
    });
  }
  return rows;
}

/** Products through the records service (their hooks number them); orders and their ledger rows in bulk. */
async function loadOrders(app: Awaited<ReturnType<typeof createApp>>): Promise<number> {
  const rc = systemContext(TENANT);
  const products: Array<{ id: string; sku: string }> = [];
  for (const sku of SKUS) {
    const p = await app.kernel.records.create(rc, 'erp', 'product', { sku, name: `Product ${sku}`, priceCents: 1000, physicalStock: 1_000_000 });
    products.push({ id: p.id, sku });
  }
  const schema = await app.kernel.schemas.resolve(rc, 'erp', 'order');
  const next = random(7);
  const now = Date.now();
  const orders: DataRecord[] = [];
  const movements: Array<Record<string, unknown>> = [];
  for (let n = 1; n <= ORDERS; n++) {
    const at = new Date(now - 6 * 86400_000 + next() * 6 * 86400_000).toISOString();
    const lines = new Map<string, { id: string; sku: string }>();
    const count = 1 + Math.floor(next() * 4);
    // Popular products first: a skewed pick, so that co-purchases repeat.
    while (lines.size < count) { const p = products[Math.floor(next() ** 2 * products.length)]; lines.set(p.id, p); }
    const cancelled = next() < 0.05;
    const id = newId();
    const items = [...lines.values()].map((p) => ({
      productId: p.id, number: 1, sku: p.sku, name: `Product ${p.sku}`, quantity: 1, unitPriceCents: 1000, taxRateBasisPoints: 1900,
      discountCents: 0, netCents: 1000, taxCents: 190, totalCents: 1190,
    }));
    orders.push({
      id, number: n, status: cancelled ? 'cancelled' : 'placed', clientId: 1, customerRef: `cust-${String(Math.floor(next() * CUSTOMERS)).padStart(5, '0')}`,
      paymentMethod: 'stripe_card', currency: 'EUR', couponCode: null, items,
      subtotalCents: 1000 * items.length, discountCents: 0, taxCents: 190 * items.length, totalCents: 1190 * items.length,
      createdAt: at, updatedAt: at, version: 1,
    } as DataRecord);
    for (const p of lines.values()) {
      movements.push({ tenant_id: TENANT, id: newId(), product_id: p.id, delta: -1, reason: 'order', order_id: id, note: null, stock_after: 0, created_at: at });
      if (cancelled) movements.push({ tenant_id: TENANT, id: newId(), product_id: p.id, delta: 1, reason: 'cancel', order_id: id, note: null, stock_after: 0, created_at: at });
    }
  }
  await app.kernel.db.transaction(rc, async (trx) => {
    await app.kernel.records.repository.bulkInsert(trx, schema, orders);
    for (let i = 0; i < movements.length; i += 400) await app.kernel.db.sql(trx).run(app.kernel.db.query('erp_stock_movements').insert(movements.slice(i, i + 400)));
  });
  await app.kernel.records.repository.analyze(schema);
  await app.kernel.db.dialect.analyze(app.kernel.db.knex, 'erp_stock_movements');
  // The co-purchase counts that order placement would have kept, made by the migration's backfill.
  const started = performance.now();
  await backfillCoPurchases(app.kernel.db.knex);
  await app.kernel.db.dialect.analyze(app.kernel.db.knex, 'erp_co_purchases');
  return (performance.now() - started) / 1000;
}

async function run(engine: Engine) {
  const db = await makeDatabase(engine);
  const app = await createApp(loadConfig({ ...serviceEnv(db.url, 0), NODE_ENV: 'test', LOG_LEVEL: 'warn', DISPATCHER_ENABLED: 'false' }));
  try {
    await app.kernel.tenants.create(systemContext(null), { id: TENANT, name: 'Bench carts' });
    const loadStarted = performance.now();
    const backfillSeconds = await loadOrders(app);
    const rows = eventRows();
    for (let i = 0; i < rows.length; i += 500) await app.kernel.db.knex('crm_events').insert(rows.slice(i, i + 500));
    await app.kernel.db.dialect.analyze(app.kernel.db.knex, 'crm_events');
    const loadSeconds = (performance.now() - loadStarted) / 1000;
    rows.length = 0;
    globalThis.gc?.();

    const server = await app.listen(0, '127.0.0.1');
    const token = jwt.sign({ sub: 'bench', tenant_id: TENANT, roles: ['admin'] }, JWT_SECRET, { algorithm: 'HS256', expiresIn: 3600 });
    const base = process.memoryUsage();
    let peakHeap = base.heapUsed;
    let peakRss = base.rss;
    const sampler = setInterval(() => {
      const m = process.memoryUsage();
      peakHeap = Math.max(peakHeap, m.heapUsed);
      peakRss = Math.max(peakRss, m.rss);
    }, 5);
    const started = performance.now();
    const cpu = process.cpuUsage();
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/crm/recover-abandoned-carts`, {
      method: 'POST', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }, body: '{}',
    });
    const body = (await res.json()) as { data: { recovered: unknown[]; skipped: Array<{ reason: string }> } };
    const seconds = (performance.now() - started) / 1000;
    const used = process.cpuUsage(cpu);
    clearInterval(sampler);
    if (res.status !== 200) throw new Error(`recovery answered ${res.status}: ${JSON.stringify(body)}`);
    const reasons: Record<string, number> = {};
    for (const s of body.data.skipped) reasons[s.reason] = (reasons[s.reason] ?? 0) + 1;
    return {
      engine, events: EVENTS, customers: CUSTOMERS, orders: ORDERS, loadSeconds: Number(loadSeconds.toFixed(1)), backfillSeconds: Number(backfillSeconds.toFixed(2)),
      recoverySeconds: Number(seconds.toFixed(2)), processCpuSeconds: Number(((used.user + used.system) / 1e6).toFixed(2)), loadAverage: loadavg()[0],
      recovered: body.data.recovered.length, skipped: reasons,
      heapBeforeMiB: Math.round(base.heapUsed / 2 ** 20), peakHeapMiB: Math.round(peakHeap / 2 ** 20),
      rssBeforeMiB: Math.round(base.rss / 2 ** 20), peakRssMiB: Math.round(peakRss / 2 ** 20),
    };
  } finally {
    await app.close();
    await db.drop();
  }
}

const engines: Engine[] = engineArg === 'both' ? ['sqlite', 'postgres'] : [engineArg as Engine];
for (const engine of engines) console.log(JSON.stringify(await run(engine)));
process.exit(0);
