/**
 * The storefront checkout and the payment timeout sweep (issue 29's speed section), for `npm run bench` (scenario
 * `checkout`) and `npm run bench:checkout` (scripts/bench/checkout-run.ts), on a database of its own per engine:
 *
 * 1. A checkout of a 3-line cart with `bank_transfer` (region, shipping option, stock taken, order placed) at
 *    `connections` connections against its hand-written twin (scripts/bench/checkout-baseline-server.ts: the same
 *    transaction, prepared statements, synchronous on better-sqlite3), each on a tenant of its own in one database
 *    (the first three products with stock for any run, below the schema's maximum so that cancellations fit), each
 *    request on a cart of its own (loaded beforehand: a checkout completes its cart). The twin's rows are compared
 *    with the service's after the warm-up; then `runs` interleaved runs of `requests` each; the ratio of the
 *    medians (target: at least 0.70).
 * 2. The payment timeout sweep over `orders` card orders waiting for their payment, `due` of them past their
 *    deadline (target: those cancelled in under 2 s, the others not read: the plan of the due query is shown).
 *    Run in-process on the loaded database; the tenant has no Stripe keys, so no Stripe call follows.
 */
import { createHash } from 'node:crypto';
import autocannon from 'autocannon';
import { loadConfig } from '../../config/index.js';
import { createApp, type App } from '../../core/app.js';
import { newId } from '../../core/base/ids.js';
import { systemContext } from '../../core/base/request-context.js';
import type { DataRecord } from '../../core/data/records.repository.js';
import type { CommerceRow, Measured } from './commerce.js';
import { freePort, makeDatabase, serviceEnv, startProcess, stopProcess, type Engine } from './harness.js';
import { twinEngine } from './twin-engine.js';

/** What a run measures: checkouts per run and runs, connections, products per tenant; orders waiting and due for the sweep. */
export interface CheckoutBenchOptions {
  runs: number;
  requests: number;
  connections: number;
  products: number;
  orders: number;
  due: number;
  /** Only the sweep (its products loaded, no checkout measured). */
  sweepOnly?: boolean;
}

const SERVICE_TENANT = 'checkout-a';
const TWIN_TENANT = 'checkout-b';
const TOKEN = 'bench-cart-token-0123456789abcdefghijklmnop';
const LINES = [{ sku: 'SKU-1', quantity: 2 }, { sku: 'SKU-2', quantity: 1 }, { sku: 'SKU-3', quantity: 3 }];
/**
 * The tables a checkout adds rows to, compared between the service and the twin (record_counts is left out: the
 * service folds its rows now and then, so their number says nothing; both add one per order).
 */
const WRITTEN = ['erp_stock_movements', 'record_revisions', 'audit_log', 'outbox_events', 'erp_co_purchases', 'erp_payment_deadlines'];

/** The run of the median rate. */
const median = (runs: Measured[]) => [...runs].sort((a, b) => a.rps - b.rps)[Math.floor(runs.length / 2)];
const erp = (app: App) => app.packs.find((p) => p.definition.name === 'erp')!.context;

/** Each tenant with its products (the first three with stock for any run), a region and a shipping option; the tables the twin needs. */
async function load(url: string, products: number): Promise<{ env: Record<string, string>; options: Record<string, string> }> {
  const app = await createApp(loadConfig({ ...serviceEnv(url, 0), LOG_LEVEL: 'warn' }));
  try {
    const options: Record<string, string> = {};
    let env: Record<string, string> = {};
    for (const tenantId of [SERVICE_TENANT, TWIN_TENANT]) {
      await app.kernel.tenants.create(systemContext(null), { id: tenantId, name: tenantId });
      const rc = systemContext(tenantId);
      const schema = await app.kernel.schemas.resolve(rc, 'erp', 'product');
      const now = new Date().toISOString();
      const records: DataRecord[] = Array.from({ length: products }, (_, i) => ({
        id: newId(), number: i + 1, sku: `SKU-${i + 1}`, name: `Product ${i + 1}`, priceCents: 1999 + i, currency: 'EUR', physicalStock: i < 3 ? 100_000_000 : 100,
        taxRateBasisPoints: 1900, taxClass: i === 1 ? 'reduced' : 'standard', status: 'active', createdAt: now, updatedAt: now, version: 1,
      }));
      await app.kernel.db.transaction(rc, async (trx) => {
        await app.kernel.records.repository.bulkInsert(trx, schema, records);
        await app.kernel.db.sql(trx).run(app.kernel.db.query('erp_sequences').insert({ tenant_id: tenantId, name: 'product', value: products }));
      });
      await app.kernel.records.repository.analyze(schema);
      await erp(app).use('erp.taxRegions').put(rc, 'DE', { name: 'Germany', standardRateBasisPoints: 1900, reducedRateBasisPoints: 700 });
      options[tenantId] = (await erp(app).use('erp.shippingOptions').create(rc, { name: 'Standard', priceCents: 495, countries: ['DE', 'AT'] })).id;
      const order = await app.kernel.schemas.resolve(rc, 'erp', 'order');
      env = {
        PRODUCT_TABLE: schema.tableName, ORDER_TABLE: order.tableName, ORDER_SCHEMA_ID: String(order.id),
        REGION_TABLE: (await app.kernel.schemas.resolve(rc, 'erp', 'tax_region')).tableName,
        OPTION_TABLE: (await app.kernel.schemas.resolve(rc, 'erp', 'shipping_option')).tableName,
      };
    }
    return { env, options };
  } finally {
    await app.close();
  }
}

/** `count` open carts of the tenant, each of the three lines with an address in DE and the option, all behind TOKEN. */
async function carts(url: string, tenantId: string, optionId: string, count: number): Promise<string[]> {
  const db = twinEngine(url);
  const hash = createHash('sha256').update(TOKEN).digest('hex');
  const now = new Date().toISOString();
  const expires = new Date(Date.now() + 7 * 24 * 3600_000).toISOString();
  const ids = Array.from({ length: count }, () => newId());
  try {
    for (let i = 0; i < ids.length; i += 100) {
      const chunk = ids.slice(i, i + 100);
      await db.tx(async (q) => {
        await q(`INSERT INTO erp_carts (tenant_id, id, token_hash, status, currency, customer_ref, email, shipping_address, shipping_option_id, coupon_code, coupon_percent_off, order_id, created_at, updated_at, expires_at) VALUES ${chunk.map(() => '(?, ?, ?, \'open\', \'EUR\', NULL, ?, ?, ?, NULL, NULL, NULL, ?, ?, ?)').join(', ')}`,
          chunk.flatMap((id) => [tenantId, id, hash, 'ann@example.com', JSON.stringify({ country: 'DE', city: 'Berlin' }), optionId, now, now, expires]));
        await q(`INSERT INTO erp_cart_items (tenant_id, cart_id, sku, quantity) VALUES ${chunk.flatMap(() => LINES.map(() => '(?, ?, ?, ?)')).join(', ')}`,
          chunk.flatMap((id) => LINES.flatMap((l) => [tenantId, id, l.sku, l.quantity])));
      });
    }
  } finally {
    await db.close();
  }
  return ids;
}

/** Rows of each written table per tenant. */
async function rowCounts(url: string, tenantId: string): Promise<Record<string, number>> {
  const db = twinEngine(url);
  try {
    const counts: Record<string, number> = {};
    for (const table of WRITTEN) counts[table] = Number((await db.query<{ n: number }>(`SELECT count(*) AS n FROM ${table} WHERE tenant_id = ?`, [tenantId]))[0].n);
    return counts;
  } finally {
    await db.close();
  }
}

/**
 * `amount` checkouts at `connections` connections, each on the next cart of `queue`. The rate is the connections
 * over the mean latency (scripts/bench/cpu-rate.ts): a run of `amount` requests ends on autocannon's next one-second
 * tick, so the requests over the run's time showed 998 a second for both sides whatever they did.
 */
async function rate(connections: number, base: string, pathOf: (cartId: string) => string, queue: string[], headers: Record<string, string>, amount: number): Promise<Measured> {
  const body = JSON.stringify({ paymentMethod: 'bank_transfer' });
  const r = await autocannon({
    url: base, connections, amount, method: 'POST', headers: { ...headers, 'Content-Type': 'application/json', 'X-Cart-Token': TOKEN },
    requests: [{ method: 'POST', body, setupRequest: (req) => ({ ...req, path: pathOf(queue.shift()!) }) }],
  });
  return { rps: (connections * 1000) / r.latency.average, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx, errors: r.errors };
}

async function checkoutRows(engine: Engine, url: string, o: CheckoutBenchOptions): Promise<CommerceRow> {
  const { env, options } = await load(url, o.products);
  const warmUp = Math.max(100, o.requests / 4);
  const perSide = warmUp + o.runs * o.requests;
  const mine = await carts(url, SERVICE_TENANT, options[SERVICE_TENANT], perSide);
  const theirs = await carts(url, TWIN_TENANT, options[TWIN_TENANT], perSide);
  const kPort = await freePort();
  const service = await startProcess('core/main.ts', { ...serviceEnv(url, kPort), LOG_LEVEL: 'warn' }, kPort);
  const bPort = await freePort();
  let twin = null;
  try {
    twin = await startProcess('scripts/bench/checkout-baseline-server.ts', { ...serviceEnv(url, bPort), BENCH_DATABASE_URL: url, ...env }, bPort);
    const kBase = `http://127.0.0.1:${kPort}`;
    const bBase = `http://127.0.0.1:${bPort}`;
    const kPath = (id: string) => `/api/v1/public/tenant/${SERVICE_TENANT}/carts/${id}/checkout`;
    const bPath = (id: string) => `/carts/${id}/checkout`;
    const bHeaders = { 'X-Tenant-Id': TWIN_TENANT };
    console.log(`\n== ${engine}: checkout of a 3-line cart with bank_transfer, ${o.connections} connections, ${o.runs} runs of ${o.requests} checkouts`);
    const [kBefore, bBefore] = [await rowCounts(url, SERVICE_TENANT), await rowCounts(url, TWIN_TENANT)];
    const kWarm = await rate(o.connections, kBase, kPath, mine, {}, warmUp);
    const bWarm = await rate(o.connections, bBase, bPath, theirs, bHeaders, warmUp);
    const bad = (m: Measured) => m.non2xx + m.errors;
    if (bad(kWarm) || bad(bWarm)) throw new Error(`non-2xx answers in the warm-up: service ${bad(kWarm)}, twin ${bad(bWarm)}`);
    const [kAfter, bAfter] = [await rowCounts(url, SERVICE_TENANT), await rowCounts(url, TWIN_TENANT)];
    for (const table of WRITTEN) {
      const k = (kAfter[table] - kBefore[table]) / warmUp;
      const b = (bAfter[table] - bBefore[table]) / warmUp;
      console.log(`  rows a checkout writes in ${table.padEnd(22)} service ${k.toFixed(2).padStart(6)}   twin ${b.toFixed(2).padStart(6)}${Math.abs(k - b) > 0.01 ? '   (!) differs' : ''}`);
    }
    const s: Measured[] = [];
    const t: Measured[] = [];
    for (let run = 1; run <= o.runs; run++) {
      const b = await rate(o.connections, bBase, bPath, theirs, bHeaders, o.requests);
      const k = await rate(o.connections, kBase, kPath, mine, {}, o.requests);
      if (bad(b) || bad(k)) throw new Error(`non-2xx answers: twin ${bad(b)}, service ${bad(k)}`);
      t.push(b);
      s.push(k);
      console.log(`  run ${run}: twin ${b.rps.toFixed(0)} checkouts/s (p50 ${b.p50} ms); service ${k.rps.toFixed(0)} checkouts/s (p50 ${k.p50} ms); ratio ${(k.rps / b.rps).toFixed(2)}`);
    }
    const [twinMedian, serviceMedian] = [median(t), median(s)];
    console.log(`  medians: twin ${twinMedian.rps.toFixed(0)}, service ${serviceMedian.rps.toFixed(0)} checkouts/s. Ratio (target >= 0.70): ${(serviceMedian.rps / twinMedian.rps).toFixed(2)}`);
    return { engine, scenario: 'checkout, 3-line cart, bank_transfer', baseline: twinMedian, kernel: serviceMedian, target: '>= 70% req/s', met: serviceMedian.rps >= 0.7 * twinMedian.rps };
  } finally {
    if (twin) await stopProcess(twin);
    await stopProcess(service);
  }
}

/** `orders` card orders waiting for their payment (records and deadlines, loaded directly), `due` of them past their deadline; one sweep timed. */
async function sweepRow(engine: Engine, url: string, { orders, due }: CheckoutBenchOptions): Promise<CommerceRow> {
  const app = await createApp(loadConfig({ ...serviceEnv(url, 0), LOG_LEVEL: 'warn' }));
  try {
    // The one sweep timed below, not the app's own timer, which would take the due orders during the loading.
    await erp(app).use('erp.paymentTimeouts').stop();
    const tenantId = SERVICE_TENANT;
    const rc = systemContext(tenantId);
    const products = (await app.kernel.records.list(rc, 'erp', 'product', { filter: [{ field: 'sku', op: 'in', value: LINES.map((l) => l.sku) }], limit: 3, count: false })).items;
    const schema = await app.kernel.schemas.resolve(rc, 'erp', 'order');
    const started = Date.now();
    const base = Date.now() - 3_600_000;
    for (let from = 0; from < orders; from += 5_000) {
      const batch = Array.from({ length: Math.min(5_000, orders - from) }, (_, i) => {
        const at = new Date(base + from + i).toISOString();
        const items = products.map((p) => ({
          productId: p.id as string, number: p.number as number, sku: p.sku as string, name: p.name as string, quantity: 1, unitPriceCents: p.priceCents as number,
          taxRateBasisPoints: 0, discountCents: 0, netCents: p.priceCents as number, taxCents: 0, totalCents: p.priceCents as number,
        }));
        const total = items.reduce((sum, x) => sum + x.totalCents, 0);
        return {
          id: newId(), number: 1_000_000 + from + i, status: 'pending_payment', clientId: 1, customerRef: null, paymentMethod: 'stripe_card', currency: 'EUR', couponCode: null, items,
          subtotalCents: total, discountCents: 0, taxCents: 0, totalCents: total, paymentStatus: 'pending', fulfillmentStatus: 'unfulfilled', refundedCents: 0, cancelReason: null,
          paymentIntentId: `pi_bench_${from + i}`, payments: [], fulfillments: [], refunds: [], createdAt: at, updatedAt: at, version: 1,
        } as DataRecord;
      });
      await app.kernel.db.transaction(rc, async (trx) => {
        await app.kernel.records.repository.bulkInsert(trx, schema, batch);
        const rows = batch.map((o, i) => ({ tenant_id: tenantId, order_id: o.id, stage: 'payment', due_at: new Date(from + i < due ? Date.now() - 60_000 : Date.now() + 3_600_000).toISOString(), attempts: 0 }));
        for (let i = 0; i < rows.length; i += 500) await app.kernel.db.sql(trx).run(app.kernel.db.query('erp_payment_deadlines').insert(rows.slice(i, i + 500)));
      });
    }
    await app.kernel.records.repository.analyze(schema);
    await app.kernel.db.knex.raw('ANALYZE erp_payment_deadlines');
    console.log(`\n== ${engine}: payment timeout sweep: ${orders} card orders waiting for their payment, ${due} due (loaded in ${((Date.now() - started) / 1000).toFixed(1)} s)`);
    const plan = engine === 'sqlite'
      ? (await app.kernel.db.sql(null).rows<{ detail: string }>('EXPLAIN QUERY PLAN SELECT tenant_id, order_id, stage, due_at, attempts FROM erp_payment_deadlines WHERE due_at <= ? ORDER BY due_at LIMIT ?', [new Date().toISOString(), 200])).map((r) => r.detail)
      : (await app.kernel.db.sql(null).rows<{ 'QUERY PLAN': string }>('EXPLAIN SELECT tenant_id, order_id, stage, due_at, attempts FROM erp_payment_deadlines WHERE due_at <= ? ORDER BY due_at LIMIT ?', [new Date().toISOString(), 200])).map((r) => r['QUERY PLAN']);
    console.log(`  the due query's plan: ${plan.join(' / ')}`);
    const sweepStarted = performance.now();
    const cpuBefore = process.cpuUsage();
    const result = await erp(app).use('erp.paymentTimeouts').sweepOnce();
    const ms = performance.now() - sweepStarted;
    const cpu = process.cpuUsage(cpuBefore);
    console.log(`  one sweep: ${result.cancelled} cancelled in ${ms.toFixed(0)} ms (${(ms / Math.max(1, result.cancelled)).toFixed(2)} ms an order; target: ${due} in under 2000 ms), `
      + `this process's CPU ${((cpu.user + cpu.system) / 1000).toFixed(0)} ms`);
    const left = await app.kernel.records.group(rc, 'erp', 'order', { by: 'status', limit: 10 });
    console.log(`  orders by status after it: ${left.map((g) => `${String(g.key)} ${g.count}`).join(', ')}`);
    // The row's rate: orders cancelled a second; its p50 and p99, the sweep's whole time.
    const swept = { rps: result.cancelled / (ms / 1000), p50: Math.round(ms), p99: Math.round(ms), non2xx: due - result.cancelled, errors: 0 };
    return { engine, scenario: `payment timeout sweep (${orders} pending, ${due} due; ms in p50)`, baseline: null, kernel: swept, target: `${due} cancelled in < 2000 ms`, met: result.cancelled === due && ms < 2000 };
  } finally {
    await app.close();
  }
}

/** Both scenarios on a database of their own: the checkout against its twin, then the sweep on the same data. */
export async function benchCheckout(engine: Engine, options: CheckoutBenchOptions, postgresUrl?: string): Promise<CommerceRow[]> {
  const db = await makeDatabase(engine, postgresUrl);
  try {
    if (options.sweepOnly) {
      await load(db.url, options.products);
      return [await sweepRow(engine, db.url, options)];
    }
    return [await checkoutRows(engine, db.url, options), await sweepRow(engine, db.url, options)];
  } finally {
    await db.drop();
  }
}
