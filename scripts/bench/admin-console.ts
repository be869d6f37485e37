import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import jwt from 'jsonwebtoken';
import { loadConfig } from '../../config/index.js';
import { createApp } from '../../core/app.js';
import { CONSOLE_DIST } from '../../core/admin-console/console-files.js';
import type { DataRecord } from '../../core/data/records.repository.js';
import { newId } from '../../core/db/ids.js';
import { systemContext } from '../../core/kernel/request-context.js';
import { ARTIFACTS, ensureConsoleBuilt, launchBrowser } from '../../test/helpers/browser.js';
import { BENCH_SCHEMA, benchBody } from './bench-schema.js';
import { freePort, JWT_SECRET, makeDatabase, serviceEnv, startProcess, stopProcess, type Engine } from './harness.js';

/**
 * npm run bench:console [-- --records 100000 --engine sqlite --runs 5]: the admin console's figures.
 * - first-load JavaScript: the scripts the sign-in page and a records table made the browser load, gzipped,
 *   as the service sent them;
 * - first screen usable: from navigation to the sign-in form (cold), and to a records table with its rows
 *   for a signed-in user (cold cache, fresh browser context each run);
 * - paging a records table of `records` records: click on "next page" until the new rows show, per page.
 * The service runs as its own process in production mode on a fresh database.
 */
const { values: args } = parseArgs({
  options: {
    records: { type: 'string', default: '100000' },
    engine: { type: 'string', default: 'sqlite' },
    runs: { type: 'string', default: '5' },
    pages: { type: 'string', default: '20' },
    // Where a page turn's time goes: Chromium's own counters (script, style, layout) per page, and a CPU
    // profile of the paging summed by function (build with CONSOLE_MINIFY=false for readable names).
    profile: { type: 'boolean', default: false },
  },
});
const RECORDS = Number(args.records);
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
  await app.close();
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
try {
  const signIn: number[] = [];
  const table: number[] = [];
  const tableSteps: Record<string, number[]> = {};
  // The browser's main-thread time (all tasks; of which running scripts) until the rows showed: CPU work,
  // much less dependent on the machine's load than the wall-clock figures.
  const tableCpu: number[] = [];
  const tableScript: number[] = [];
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
    t0 = Date.now();
    await tablePage.goto(`${base}/admin/bench.item`, { waitUntil: 'commit' });
    await tablePage.locator('tbody tr td.column-sku').first().waitFor();
    table.push(Date.now() - t0);
    const used = Object.fromEntries((await tableCdp.send('Performance.getMetrics')).metrics.map((m) => [m.name, m.value]));
    tableCpu.push(used.TaskDuration * 1000);
    tableScript.push(used.ScriptDuration * 1000);
    if (run === 0) {
      await tablePage.waitForLoadState('networkidle');
      console.log(`first-load JavaScript, records table: ${kib(tableScripts.gzip)} gzipped (${kib(tableScripts.raw)} raw) in ${tableScripts.files.size} file(s); list requests: ${listRequests}`);
    }
    for (const [step, at] of Object.entries(steps)) (tableSteps[step] ??= []).push(at);
    await signedIn.close();
  }
  console.log(`first screen usable (cold cache, median of ${signIn.length}): sign-in form ${ms(median(signIn))} (max ${ms(Math.max(...signIn))}); records table with rows ${ms(median(table))} (max ${ms(Math.max(...table))})`);
  console.log(`  records table, when each step ended (median): ${Object.entries(tableSteps).map(([step, at]) => `${step} ${ms(median(at))}`).join(', ')}, rows on screen ${ms(median(table))}`);
  console.log(`  records table, the browser's main thread until the rows showed (median): busy ${ms(median(tableCpu))}, of which scripts ${ms(median(tableScript))}`);

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
    const byFunction = new Map<string, number>();
    const self = new Map<number, number>();
    const dt = profile.timeDeltas ?? [];
    (profile.samples ?? []).forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (dt[i] ?? 0)));
    for (const node of profile.nodes) {
      const f = node.callFrame;
      const key = `${f.functionName || '(anonymous)'} ${f.url.split('/').pop()}:${f.lineNumber + 1}`;
      byFunction.set(key, (byFunction.get(key) ?? 0) + (self.get(node.id) ?? 0) / 1000);
    }
    const total = [...byFunction.values()].reduce((a, b) => a + b, 0);
    console.log(`  CPU profile over ${pages.length} pages (${ms(total)} sampled), self time:`);
    for (const [key, t] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(`    ${ms(t).padStart(8)}  ${key}`);
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
