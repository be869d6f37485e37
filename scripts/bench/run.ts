import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import jwt from 'jsonwebtoken';
import { loadConfig } from '../../config/index.js';
import { createApp } from '../../core/app.js';
import { loadBenchTenant } from './load.js';
import { benchBody } from './bench-schema.js';
import { benchCommerce, type CommerceRow, type Measured } from './commerce.js';
import { benchCheckout } from './checkout.js';
import { benchRolePolicies } from './role-policies.js';
import { benchCreateHistory } from './create-history.js';
import { benchWorkflowReads } from './workflow-reads.js';
import { loadBaseline, type BaselineRecord } from './baseline-store.js';
import { DEFAULT_POSTGRES_URL, freePort, JWT_SECRET, makeDatabase, ROOT, serviceEnv, startProcess, stopProcess, type Engine } from './harness.js';

/**
 * npm run bench [-- --duration 10 --connections 20 --records 100000 --engines sqlite,postgres --scenarios data,commerce,checkout,roles,history,workflow --products 100000]
 *
 * For each engine: loads `records` records for tenant A and as many for tenant B (directly, in one
 * transaction), starts the service (`core/main.ts`, production mode) and a hand-written Koa endpoint
 * (scripts/bench/baseline-server.ts) side by side in their own processes, and drives each with autocannon,
 * scenario by scenario, comparator then service. Then the commerce scenarios (scripts/bench/commerce.ts):
 * orders and the storefront against a hand-written twin; the checkout scenarios (scripts/bench/checkout.ts): a storefront
 * checkout against its twin and the payment timeout sweep. Prints a table and writes bench-results/<time>.json and .md.
 */
const { values: args } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '20' },
    records: { type: 'string', default: '100000' },
    engines: { type: 'string', default: 'sqlite,postgres' },
    scenarios: { type: 'string', default: 'data,commerce,checkout,roles,history,workflow' },
    products: { type: 'string', default: '100000' },
    postgres: { type: 'string', default: DEFAULT_POSTGRES_URL },
  },
});
const DURATION = Number(args.duration);
const WARM_UP_SECONDS = 3;
const CONNECTIONS = Number(args.connections);
const RECORDS = Number(args.records);
const ENGINES = args.engines!.split(',') as Engine[];
const SCENARIOS = new Set(args.scenarios!.split(','));
const TENANT_A = 'bench-a';
const TENANT_B = 'bench-b';

type Row = CommerceRow;

/** Loads both tenants' records into the kernel's tables and the comparator's table. */
async function load(url: string): Promise<void> {
  const started = Date.now();
  const config = loadConfig({ ...serviceEnv(url, 0), LOG_LEVEL: 'warn' });
  const app = await createApp(config);
  const base = Date.now() - RECORDS * 1000;
  const baseline: Array<{ tenantId: string; records: BaselineRecord[] }> = [];
  for (const tenantId of [TENANT_A, TENANT_B]) {
    const records = await loadBenchTenant(app, tenantId, RECORDS, base);
    baseline.push({ tenantId, records: records.map(({ id, createdAt, updatedAt: _u, version: _v, ...data }) => ({ id, createdAt, data })) });
  }
  await app.close();
  await loadBaseline(url, baseline);
  console.log(`  loaded ${RECORDS} records for each of 2 tenants, twice (kernel and comparator), in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

async function measure(label: string, url: string, options: { method?: 'GET' | 'POST'; headers?: Record<string, string>; body?: string } = {}): Promise<Measured> {
  // A warm-up, so JIT and caches are in their steady state: 3 s, the same for both sides. Measured second by
  // second, the service's storefront read reached it in its third second (8,200, 10,500, then ~12,400 reads/s),
  // the twin's in its second (9,900, then ~13,000): more code to optimise. One second left the service's slow
  // second inside the measured window.
  await autocannon({ url, connections: CONNECTIONS, duration: WARM_UP_SECONDS, method: options.method ?? 'GET', headers: options.headers, body: options.body });
  const r = await autocannon({ url, connections: CONNECTIONS, duration: DURATION, method: options.method ?? 'GET', headers: options.headers, body: options.body });
  const m = { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx, errors: r.errors };
  console.log(`    ${label.padEnd(34)} ${m.rps.toFixed(0).padStart(7)} req/s   p50 ${String(m.p50).padStart(4)} ms   p99 ${String(m.p99).padStart(4)} ms${m.non2xx || m.errors ? `   (!) non-2xx ${m.non2xx}, errors ${m.errors}` : ''}`);
  return m;
}

async function benchEngine(engine: Engine): Promise<Row[]> {
  console.log(`\n== ${engine}`);
  const db = await makeDatabase(engine, args.postgres);
  try {
    await load(db.url);
    const rows: Row[] = [];
    const createBody = JSON.stringify(benchBody(424242));
    const json = { 'Content-Type': 'application/json' };

    // Both servers run side by side (an idle one costs nothing); each scenario measures the comparator
    // and then the service back to back, so that load from elsewhere on the machine hits both alike.
    const bPort = await freePort();
    const baseline = await startProcess('scripts/bench/baseline-server.ts', { ...serviceEnv(db.url, bPort), BENCH_DATABASE_URL: db.url }, bPort);
    const kPort = await freePort();
    const kernel = await startProcess('core/main.ts', serviceEnv(db.url, kPort), kPort);
    const bUrl = `http://127.0.0.1:${bPort}/items`;
    const bh = { 'X-Tenant-Id': TENANT_A };
    const token = jwt.sign({ sub: 'bench-user', tenant_id: TENANT_A, roles: ['editor'] }, JWT_SECRET, { algorithm: 'HS256', expiresIn: 3600 });
    const kh = { Authorization: `Bearer ${token}` };
    const kUrl = `http://127.0.0.1:${kPort}/api/v1/data/bench/item`;
    let cursor: string | null = null;
    for (let page = 0; page < 200; page++) {
      const res = await fetch(`${kUrl}?limit=50&count=false${cursor ? `&cursor=${cursor}` : ''}`, { headers: kh });
      cursor = ((await res.json()) as { data: { pagination: { nextCursor: string } } }).data.pagination.nextCursor;
    }
    console.log('  comparator = hand-written Koa endpoint, service = kernel /data API');
    const bList = await measure('comparator: list 50 newest', `${bUrl}?limit=50`, { headers: bh });
    const kList = await measure('service: list 50 newest (count=false)', `${kUrl}?limit=50&count=false`, { headers: kh });
    const bFiltered = await measure('comparator: list 50, category', `${bUrl}?limit=50&category=cat-3`, { headers: bh });
    const kFiltered = await measure('service: list 50, category (count=false)', `${kUrl}?limit=50&count=false&filter%5Bcategory%5D=cat-3`, { headers: kh });
    const kPage1 = await measure('service: page 1 (count=false)', `${kUrl}?limit=50&count=false`, { headers: kh });
    const kDeep = await measure('service: page 201 by cursor', `${kUrl}?limit=50&count=false&cursor=${cursor}`, { headers: kh });
    const kListTotal = await measure('service: list 50 newest with total', `${kUrl}?limit=50`, { headers: kh });
    const kFilteredTotal = await measure('service: list 50, category, with total', `${kUrl}?limit=50&filter%5Bcategory%5D=cat-3`, { headers: kh });
    const kEstimated = await measure('service: list 50 newest, count=estimated', `${kUrl}?limit=50&count=estimated`, { headers: kh });
    const bCreate = await measure('comparator: create', bUrl, { method: 'POST', headers: { ...bh, ...json }, body: createBody });
    const kCreate = await measure('service: create', kUrl, { method: 'POST', headers: { ...kh, ...json }, body: createBody });
    const eventBody = JSON.stringify({ eventType: 'cart.item_added', customerRef: 'cust-1', eventData: { sku: 'MUG-1', quantity: 2 } });
    const bEvent = await measure('comparator: crm event', `http://127.0.0.1:${bPort}/crm-events`, { method: 'POST', headers: { ...bh, ...json }, body: eventBody });
    const kEvent = await measure('service: POST /crm/events', `http://127.0.0.1:${kPort}/api/v1/crm/events`, { method: 'POST', headers: { ...kh, ...json }, body: eventBody });
    await stopProcess(baseline);
    await stopProcess(kernel);

    const listTarget = (k: Measured, b: Measured) => k.rps >= 0.7 * b.rps && k.p99 <= Math.max(1.5 * b.p99, b.p99 + 1);
    rows.push({ engine, scenario: 'create', baseline: bCreate, kernel: kCreate, target: '>= 70% req/s', met: kCreate.rps >= 0.7 * bCreate.rps });
    rows.push({ engine, scenario: 'crm event (POST /crm/events)', baseline: bEvent, kernel: kEvent, target: '>= 70% req/s', met: kEvent.rps >= 0.7 * bEvent.rps });
    rows.push({ engine, scenario: 'list 50 newest', baseline: bList, kernel: kList, target: '>= 70% req/s, p99 <= 1.5x', met: listTarget(kList, bList) });
    rows.push({ engine, scenario: 'list 50 filtered (index)', baseline: bFiltered, kernel: kFiltered, target: '>= 70% req/s, p99 <= 1.5x', met: listTarget(kFiltered, bFiltered) });
    rows.push({ engine, scenario: 'deep page (after 200) vs page 1', baseline: kPage1, kernel: kDeep, target: 'p99 <= 1.5x page 1', met: kDeep.p99 <= Math.max(1.5 * kPage1.p99, kPage1.p99 + 1) });
    // Totals (CONTRACT.md 12.5): the default list against the same list with count=false.
    rows.push({ engine, scenario: 'list 50 newest with total vs count=false', baseline: kList, kernel: kListTotal, target: '>= 80% req/s', met: kListTotal.rps >= 0.8 * kList.rps });
    rows.push({ engine, scenario: 'list 50 newest, count=estimated vs count=false', baseline: kList, kernel: kEstimated, target: '(extra)', met: null });
    rows.push({ engine, scenario: 'list 50 filtered with total vs count=false', baseline: kFiltered, kernel: kFilteredTotal, target: `(extra: counts ${RECORDS / 10} rows by index)`, met: null });
    return rows;
  } finally {
    await db.drop();
  }
}

function table(rows: Row[]): string {
  const lines = [
    '| engine | scenario | comparator req/s | comparator p99 ms | service req/s | service p99 ms | req/s ratio | p99 ratio | target | met |',
    '|---|---|---:|---:|---:|---:|---:|---:|---|---|',
  ];
  for (const r of rows) {
    const b = r.baseline;
    lines.push(`| ${r.engine} | ${r.scenario} | ${b ? b.rps.toFixed(0) : '-'} | ${b ? b.p99 : '-'} | ${r.kernel.rps.toFixed(0)} | ${r.kernel.p99} | ${b ? (r.kernel.rps / b.rps).toFixed(2) : '-'} | ${b ? (r.kernel.p99 / Math.max(b.p99, 1)).toFixed(2) : '-'} | ${r.target} | ${r.met === null ? '' : r.met ? 'yes' : 'NO'} |`);
  }
  return lines.join('\n');
}

/**
 * The pairs judged on CPU time per request (roles, history, workflow): nine interleaved runs of each side, each about
 * a second. The machine's CPU speed moves by more than the few per cent these pairs differ by from one second to
 * the next (the same list: 360 to 690 µs a request within a minute on a 2-core VM); with five runs, the same code's
 * drafts list was judged 0.93 in one run of the whole bench and 0.98 to 1.21 in others (docs/content-workflow.md).
 */
const CPU_PAIRS = { runs: 9, requests: 3_000, connections: CONNECTIONS, records: RECORDS };

const all: Row[] = [];
for (const engine of ENGINES) {
  if (SCENARIOS.has('data')) all.push(...(await benchEngine(engine)));
  if (SCENARIOS.has('commerce')) all.push(...(await benchCommerce(engine, Number(args.products), measure, args.postgres)));
  if (SCENARIOS.has('checkout')) {
    all.push(...(await benchCheckout(engine, { runs: 3, requests: 2_000, connections: CONNECTIONS, products: 1_000, orders: 100_000, due: 1_000 }, args.postgres)));
  }
  // Custom roles against built-in ones (CONTRACT.md 16.1), judged on the service's CPU time per request.
  if (SCENARIOS.has('roles')) all.push(...(await benchRolePolicies(engine, CPU_PAIRS, args.postgres)));
  // Creates with their revision and audit entry against the same without them (CONTRACT.md 16.3, 16.4), by CPU time per request.
  if (SCENARIOS.has('history')) all.push(...(await benchCreateHistory(engine, CPU_PAIRS, args.postgres)));
  // Reads of content workflow schemas (CONTRACT.md 17): drafts not asked for, and a localised read, by CPU time per request.
  if (SCENARIOS.has('workflow')) all.push(...(await benchWorkflowReads(engine, CPU_PAIRS, args.postgres)));
}
let commit = 'unknown';
try {
  const { execSync } = await import('node:child_process');
  commit = execSync('git rev-parse --short HEAD', { cwd: ROOT, encoding: 'utf8' }).trim();
} catch {
  // not a git checkout
}
const header = `Benchmark ${new Date().toISOString()} on commit ${commit}: ${CONNECTIONS} connections, ${DURATION} s per scenario after a ${WARM_UP_SECONDS} s warm-up, ${RECORDS} records per tenant, 2 tenants; commerce: ${args.products} products per tenant.\n`
  + 'In the deep-page row the comparator columns hold the service\'s own page 1; in the totals rows, the service\'s own list with count=false. Totals, expansion and undeclared filters in alternating rounds: npm run bench:day-two.\n';
const md = `${header}\n${table(all)}\n`;
console.log(`\n${md}`);
mkdirSync(join(ROOT, 'bench-results'), { recursive: true });
const stamp = new Date().toISOString().replace(/[:.]/g, '-');
writeFileSync(join(ROOT, 'bench-results', `${stamp}.md`), md);
writeFileSync(join(ROOT, 'bench-results', `${stamp}.json`), JSON.stringify({ commit, connections: CONNECTIONS, duration: DURATION, records: RECORDS, rows: all }, null, 2));
console.log(`written to bench-results/${stamp}.md and .json`);
process.exit(0);
