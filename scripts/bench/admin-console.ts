import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import jwt from 'jsonwebtoken';
import { loadConfig } from '../../config/index.js';
import { createApp } from '../../core/app.js';
import { CONSOLE_DIST } from '../../core/admin-console/console-files.js';
import type { DataRecord } from '../../core/data/records.repository.js';
import { newId } from '../../core/base/ids.js';
import { systemContext } from '../../core/base/request-context.js';
import { ARTIFACTS, ensureConsoleBuilt, launchBrowser } from '../../test/helpers/browser.js';
import { BENCH_SCHEMA, benchBody } from './bench-schema.js';
import { freePort, JWT_SECRET, makeDatabase, serviceEnv, startProcess, stopProcess, type Engine } from './harness.js';

/**
 * npm run bench:console [-- --records 100000 --engine sqlite --runs 5]: the admin console's figures.
 * - first-load JavaScript: the scripts the sign-in page and a records table made the browser load, gzipped,
 *   as the service sent them;
 * - first screen usable: from navigation to the sign-in form (cold), and to a records table with its rows
 *   for a signed-in user (cold cache, fresh browser context each run);
 * - paging a records table of `records` records: click on "next page" until the new rows show, per page;
 * - the dashboard of a shop with `orders` orders over 30 days: until its sales chart shows its 30 points.
 * The service runs as its own process in production mode on a fresh database.
 */
const { values: args } = parseArgs({
  options: {
    records: { type: 'string', default: '100000' },
    engine: { type: 'string', default: 'sqlite' },
    runs: { type: 'string', default: '5' },
    pages: { type: 'string', default: '20' },
    // Orders of the shop's dashboard (its chart of the last 30 days): spread over those days.
    orders: { type: 'string', default: '100000' },
    // Where a page turn's time goes: Chromium's own counters (script, style, layout) per page, and a CPU
    // profile of the paging summed by function (build with CONSOLE_MINIFY=false for readable names).
    profile: { type: 'boolean', default: false },
  },
});
const RECORDS = Number(args.records);
const ORDERS = Number(args.orders);
const ENGINE = args.engine as Engine;
const TENANT = 'console-bench';

const FIRST_SKU = "document.querySelector('tbody tr td.column-sku')?.textContent";
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const p95 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil(xs.length * 0.95) - 1)];
const ms = (x: number) => `${x.toFixed(0)} ms`;
const kib = (bytes: number) => `${(bytes / 1024).toFixed(0)} KiB`;

/**
 * The JavaScript a screen made the browser load (the entry and the chunks it imported), as the service sent it
 * (gzipped), with the raw sizes from admin/dist.
 */
function countScripts(page: Page): { files: Set<string>; gzip: number; raw: number } {
  const loaded = { files: new Set<string>(), gzip: 0, raw: 0 };
  page.on('requestfinished', (request) => {
    const path = new URL(request.url()).pathname;
    if (!path.startsWith('/admin/assets/') || !path.endsWith('.js') || loaded.files.has(path)) return;
    loaded.files.add(path);
    loaded.raw += statSync(join(CONSOLE_DIST, path.slice('/admin/'.length))).size;
    void request.sizes().then((sizes) => { loaded.gzip += sizes.responseBodySize; });
  });
  return loaded;
}

async function load(url: string): Promise<void> {
  const app = await createApp(loadConfig({ ...serviceEnv(url, 0), LOG_LEVEL: 'warn' }));
  await app.kernel.tenants.create(systemContext(null), { id: TENANT, name: TENANT });
  const rc = systemContext(TENANT);
  const schema = await app.kernel.schemas.registerForTenant(rc, BENCH_SCHEMA);
  const base = Date.now() - RECORDS * 1000;
  const records: DataRecord[] = [];
  for (let i = 0; i < RECORDS; i++) {
    const at = new Date(base + i * 1000).toISOString();
    records.push({ id: newId(), ...benchBody(i), createdAt: at, updatedAt: at, version: 1 });
  }
  await app.kernel.db.transaction(rc, (trx) => app.kernel.records.repository.bulkInsert(trx, schema, records));
  await app.kernel.records.repository.analyze(schema);
  // The shop's orders over the last 30 days, stored as the checkout stores them (one 1,190-cent line each).
  const orderSchema = await app.kernel.schemas.resolve(rc, 'erp', 'order');
  const now = Date.now();
  for (let from = 0; from < ORDERS; from += 10000) {
    const orders: DataRecord[] = [];
    for (let i = from; i < Math.min(ORDERS, from + 10000); i++) {
      const at = new Date(now - Math.floor((i / ORDERS) * 30 * 86400000)).toISOString();
      orders.push({
        id: newId(), number: i + 1, status: i % 10 === 0 ? 'cancelled' : 'paid', clientId: 1, paymentMethod: 'bank_transfer', currency: 'EUR', items: [],
        subtotalCents: 1000, discountCents: 0, taxCents: 190, totalCents: 1190, refundedCents: i % 7 === 0 ? 500 : 0, createdAt: at, updatedAt: at, version: 1,
      });
    }
    await app.kernel.db.transaction(rc, (trx) => app.kernel.records.repository.bulkInsert(trx, orderSchema, orders));
  }
  await app.kernel.records.repository.analyze(orderSchema);
  await app.close();
}

/**
 * The dashboard of a shop with ORDERS orders: from navigation (signed in, cold cache) until its sales chart shows
 * its 30 points, per run; and the report's request alone, from Node.
 */
async function dashboard(base: string, token: string, session: string): Promise<void> {
  const shown: number[] = [];
  for (let run = 0; run < Number(args.runs); run++) {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await context.addInitScript({ content: session });
    const page = await context.newPage();
    const t0 = Date.now();
    await page.goto(`${base}/admin/`);
    await page.locator('.recharts-line-dot').nth(29).waitFor({ timeout: 60_000 });
    shown.push(Date.now() - t0);
    await context.close();
  }
  const report: number[] = [];
  for (let run = 0; run < Number(args.runs); run++) {
    const t0 = performance.now();
    const res = await fetch(`${base}/api/v1/erp/reports/sales-by-day`, { headers: { Authorization: `Bearer ${token}`, 'X-Tenant-Id': TENANT } });
    await res.text();
    report.push(performance.now() - t0);
  }
  console.log(`dashboard with ${ORDERS} orders: sales chart with its 30 points after ${ms(median(shown))} (median of ${shown.length}, max ${ms(Math.max(...shown))}); `
    + `GET /erp/reports/sales-by-day alone ${ms(median(report))} (median)`);
}

ensureConsoleBuilt();

const db = await makeDatabase(ENGINE);
const started = Date.now();
await load(db.url);
console.log(`loaded ${RECORDS} records of bench.item on ${ENGINE} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
const port = await freePort();
const service = await startProcess('core/main.ts', { ...serviceEnv(db.url, port), LOG_LEVEL: 'warn', DISPATCHER_ENABLED: 'false' }, port);
const base = `http://127.0.0.1:${port}`;
const token = jwt.sign({ sub: 'bench-admin', roles: ['superadmin'] }, JWT_SECRET, { algorithm: 'HS256', expiresIn: 3600 });
const me = { userId: 'bench-admin', email: null, name: null, tenantId: null, isSuperadmin: true, role: 'viewer', roles: ['superadmin'] };
// A signed-in session, as the sign-in page leaves it in sessionStorage.
const session = Object.entries({ 'console.token': token, 'console.me': JSON.stringify(me), 'console.tenant': TENANT })
  .map(([key, value]) => `sessionStorage.setItem(${JSON.stringify(key)}, ${JSON.stringify(value)});`).join('\n');
const browser = await launchBrowser();

// The parts of a CDP CPU profile (Profiler.stop) read here.
interface CallFrame { functionName: string; url: string; lineNumber: number }
interface CpuProfile { nodes: Array<{ id: number; callFrame: CallFrame }>; samples?: number[]; timeDeltas?: number[] }
const byFunction = (f: CallFrame) => `${f.functionName || '(anonymous)'} ${f.url.split('/').pop()}:${f.lineNumber + 1}`;
// The console's chunks by name without their hash (`start`, `ra-core`), V8's own work by its name ((program),
// (garbage collector)).
const byScript = (f: CallFrame) => (f.url ? f.url.split('/').pop()!.replace(/-[\w-]{8}\.js$/, '') : f.functionName);

interface TraceEvent { name: string; ph: string; pid: number; tid: number; ts: number; dur?: number; tdur?: number; args?: { name?: string } }

/**
 * The CPU time (thread time, ms) of the page's renderer main thread, and of all its threads, in a trace of
 * Chromium's `toplevel` tasks: what the first screen cost the browser, much steadier on a loaded machine than
 * wall-clock times or task durations, which grow whenever the thread waits for a core.
 */
function rendererCpu(trace: Buffer): { main: number; all: number } {
  const events = (JSON.parse(trace.toString('utf8')) as { traceEvents: TraceEvent[] }).traceEvents;
  const mains = new Set(events.filter((e) => e.ph === 'M' && e.name === 'thread_name' && e.args?.name === 'CrRendererMain').map((e) => `${e.pid}:${e.tid}`));
  const cpu = new Map<string, number>();
  const endOf = new Map<string, number>();
  // Top-level tasks only (a task nested in another is counted in it).
  for (const e of events.filter((x) => x.ph === 'X' && x.tdur !== undefined).sort((a, b) => a.ts - b.ts)) {
    const thread = `${e.pid}:${e.tid}`;
    if (e.ts < (endOf.get(thread) ?? 0)) continue;
    endOf.set(thread, e.ts + (e.dur ?? 0));
    cpu.set(thread, (cpu.get(thread) ?? 0) + e.tdur! / 1000);
  }
  // The renderer that did the work: the page's (others, if any, idled); `all` adds its other threads (script
  // streaming and compiling, garbage collection, compositing).
  const main = [...mains].sort((a, b) => (cpu.get(b) ?? 0) - (cpu.get(a) ?? 0))[0];
  const pid = main?.split(':')[0];
  const all = [...cpu].filter(([thread]) => thread.split(':')[0] === pid).reduce((sum, [, t]) => sum + t, 0);
  return { main: cpu.get(main) ?? 0, all };
}

/** A CPU profile's self time (ms) summed by `key`, largest first. */
function selfTime(profile: CpuProfile, key: (f: CallFrame) => string): { total: number; top: Array<[string, number]> } {
  const self = new Map<number, number>();
  const dt = profile.timeDeltas ?? [];
  (profile.samples ?? []).forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (dt[i] ?? 0)));
  const sums = new Map<string, number>();
  for (const node of profile.nodes) sums.set(key(node.callFrame), (sums.get(key(node.callFrame)) ?? 0) + (self.get(node.id) ?? 0) / 1000);
  return { total: [...sums.values()].reduce((a, b) => a + b, 0), top: [...sums].sort((a, b) => b[1] - a[1]) };
}

/**
 * --profile: one more signed-in cold load of the records table under the CPU profiler, its self time summed by
 * script (which chunks cost the first screen) and by function (build with CONSOLE_MINIFY=false for names).
 */
async function profileFirstScreen(): Promise<void> {
  const context = await browser.newContext();
  await context.addInitScript({ content: session });
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
  await cdp.send('Profiler.start');
  await page.goto(`${base}/admin/bench.item`, { waitUntil: 'commit' });
  await page.locator('tbody tr td.column-sku').first().waitFor();
  const { profile } = await cdp.send('Profiler.stop');
  await context.close();
  mkdirSync(join(ARTIFACTS, 'bench'), { recursive: true });
  writeFileSync(join(ARTIFACTS, 'bench', 'console-first-screen.cpuprofile'), JSON.stringify(profile));
  const scripts = selfTime(profile, byScript);
  console.log(`  first screen's CPU profile (${ms(scripts.total)} sampled), self time by script: ${scripts.top.slice(0, 8).map(([k, t]) => `${k} ${ms(t)}`).join(', ')}`);
  for (const [key, t] of selfTime(profile, byFunction).top.slice(0, 25)) console.log(`    ${ms(t).padStart(8)}  ${key}`);
}
try {
  const signIn: number[] = [];
  const table: number[] = [];
  const tableSteps: Record<string, number[]> = {};
  // The browser's main thread until the rows showed: its CPU time (from a trace, the steadiest A/B measure on a
  // loaded machine), and its tasks' durations (busy; of which scripts, style, layout), which include the time
  // the thread waited for a core.
  const tableCpu: number[] = [];
  const tableScript: number[] = [];
  const tableThreadCpu: number[] = [];
  const tableRendererCpu: number[] = [];
  const tableStyle: number[] = [];
  const tableLayout: number[] = [];
  for (let run = 0; run < Number(args.runs); run++) {
    const cold = await browser.newContext();
    const page = await cold.newPage();
    const signInScripts = countScripts(page);
    let t0 = Date.now();
    await page.goto(`${base}/admin/`, { waitUntil: 'commit' });
    await page.locator('#token').waitFor();
    signIn.push(Date.now() - t0);
    if (run === 0) {
      await page.waitForLoadState('networkidle');
      console.log(`first-load JavaScript, sign-in page: ${kib(signInScripts.gzip)} gzipped (${kib(signInScripts.raw)} raw) in ${signInScripts.files.size} file(s)`);
    }
    await cold.close();

    const signedIn = await browser.newContext();
    await signedIn.addInitScript({ content: session });
    const tablePage = await signedIn.newPage();
    const tableScripts = countScripts(tablePage);
    const tableCdp = await signedIn.newCDPSession(tablePage);
    await tableCdp.send('Performance.enable');
    let listRequests = 0;
    tablePage.on('request', (request) => { if (request.url().includes('/api/v1/data/bench/item')) listRequests += 1; });
    // When each step of the first screen ended, from the navigation: the script, the schemas, the list.
    const steps: Record<string, number> = {};
    tablePage.on('requestfinished', (request) => {
      const path = new URL(request.url()).pathname;
      const step = path.endsWith('.js') ? 'script' : path === '/api/v1/metadata/schemas' ? 'schemas' : path === '/api/v1/data/bench/item' ? 'list' : null;
      if (step) steps[step] = Math.max(steps[step] ?? 0, Date.now() - t0);
    });
    await browser.startTracing(tablePage, { categories: ['toplevel'] });
    t0 = Date.now();
    await tablePage.goto(`${base}/admin/bench.item`, { waitUntil: 'commit' });
    await tablePage.locator('tbody tr td.column-sku').first().waitFor();
    table.push(Date.now() - t0);
    const cpu = rendererCpu(await browser.stopTracing());
    tableThreadCpu.push(cpu.main);
    tableRendererCpu.push(cpu.all);
    const used = Object.fromEntries((await tableCdp.send('Performance.getMetrics')).metrics.map((m) => [m.name, m.value]));
    tableCpu.push(used.TaskDuration * 1000);
    tableScript.push(used.ScriptDuration * 1000);
    tableStyle.push(used.RecalcStyleDuration * 1000);
    tableLayout.push(used.LayoutDuration * 1000);
    if (run === 0) {
      await tablePage.waitForLoadState('networkidle');
      console.log(`first-load JavaScript, records table: ${kib(tableScripts.gzip)} gzipped (${kib(tableScripts.raw)} raw) in ${tableScripts.files.size} file(s); list requests: ${listRequests}`);
    }
    for (const [step, at] of Object.entries(steps)) (tableSteps[step] ??= []).push(at);
    await signedIn.close();
  }
  console.log(`first screen usable (cold cache, median of ${signIn.length}): sign-in form ${ms(median(signIn))} (max ${ms(Math.max(...signIn))}); records table with rows ${ms(median(table))} (max ${ms(Math.max(...table))})`);
  console.log(`  records table, when each step ended (median): ${Object.entries(tableSteps).map(([step, at]) => `${step} ${ms(median(at))}`).join(', ')}, rows on screen ${ms(median(table))}`);
  console.log(`  records table, the browser's main thread until the rows showed (median): CPU ${ms(median(tableThreadCpu))} (thread time, min ${ms(Math.min(...tableThreadCpu))}; the renderer's threads together ${ms(median(tableRendererCpu))}); busy ${ms(median(tableCpu))}, of which scripts ${ms(median(tableScript))}, style ${ms(median(tableStyle))}, layout ${ms(median(tableLayout))}`);
  if (args.profile) await profileFirstScreen();

  await dashboard(base, token, session);

  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.addInitScript({ content: session });
  const page = await context.newPage();
  await page.goto(`${base}/admin/bench.item`);
  const firstSku = page.locator('tbody tr td.column-sku').first();
  await firstSku.waitFor();
  const totalText = await page.getByText(/of [\d,]+$/).first().innerText();
  const pages: number[] = [];
  const urls: string[] = [];
  const cdp = await context.newCDPSession(page);
  const metrics = async () => Object.fromEntries(((await cdp!.send('Performance.getMetrics')).metrics).map((m) => [m.name, m.value]));
  const spent: Record<string, number[]> = { ScriptDuration: [], RecalcStyleDuration: [], LayoutDuration: [], TaskDuration: [] };
  await cdp.send('Performance.enable');
  if (args.profile) {
    await cdp.send('Profiler.enable');
    await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
    await cdp.send('Profiler.start');
  }
  for (let i = 0; i < Number(args.pages); i++) {
    const m0 = await metrics();
    const before = await page.evaluate(FIRST_SKU);
    const t0 = Date.now();
    const answered = page.waitForResponse((r) => r.url().includes('/api/v1/data/bench/item?'));
    await page.getByRole('button', { name: 'Go to next page' }).click();
    urls.push((await answered).url());
    // Polled over CDP (a round trip is a millisecond or two): locator waits back off to 500 ms steps, and
    // waitForFunction evaluates strings in the page, which the console's CSP forbids.
    while ((await page.evaluate(FIRST_SKU)) === before) await new Promise((r) => setTimeout(r, 2));
    pages.push(Date.now() - t0);
    const m1 = await metrics();
    for (const key of Object.keys(spent)) spent[key].push((m1[key] - m0[key]) * 1000);
  }
  console.log(`  the browser's main thread per page turn (median): ${Object.entries(spent).map(([k, v]) => `${k.replace('Duration', '').replace('Task', 'busy')} ${ms(median(v))}`).join(', ')}`);
  if (args.profile) {
    const { profile } = await cdp.send('Profiler.stop');
    // The whole profile, for Chromium's DevTools (Performance panel: load profile) or a closer look.
    mkdirSync(join(ARTIFACTS, 'bench'), { recursive: true });
    writeFileSync(join(ARTIFACTS, 'bench', 'console-paging.cpuprofile'), JSON.stringify(profile));
    // Self time by function over all the page turns, top 25.
    const { total, top } = selfTime(profile, byFunction);
    console.log(`  CPU profile over ${pages.length} pages (${ms(total)} sampled), self time:`);
    for (const [key, t] of top.slice(0, 25)) console.log(`    ${ms(t).padStart(8)}  ${key}`);
  }
  console.log(`paging ${totalText} (25 a page, next page with the keyset cursor): median ${ms(median(pages))}, p95 ${ms(p95(pages))}, max ${ms(Math.max(...pages))} over ${pages.length} pages`);
  // The same list requests again, from Node: the API's share of a page.
  const api: number[] = [];
  for (const url of urls) {
    const t0 = performance.now();
    const res = await fetch(url, { headers: { Authorization: `Bearer ${token}`, 'X-Tenant-Id': TENANT } });
    await res.text();
    api.push(performance.now() - t0);
  }
  console.log(`  of which the list request itself (the same ${urls.length} URLs fetched again from Node): median ${ms(median(api))}, p95 ${ms(p95(api))}`);
  await context.close();
} finally {
  await browser.close();
  await stopProcess(service);
  await db.drop();
}
