import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import jwt from 'jsonwebtoken';
import { BENCH_SCHEMA, benchBody } from './bench-schema.js';
import { cpuMicros } from './cpu-rate.js';
import { DEFAULT_POSTGRES_URL, frameLocation, freePort, JWT_SECRET, makeDatabase, ROOT, serviceEnv, startProcess, stopProcess, type Engine } from './harness.js';

/**
 * npm run bench:profile -- [--scenario create|list|listTotal|filtered|roleList|read|roleRead|order|storefront|storefront304]
 *   [--engine sqlite|postgres] [--duration 10] [--top 40] [--callers fn]
 *
 * Where the service spends its CPU on one benchmark scenario: starts `core/main.ts` under `--cpu-prof`
 * on a fresh database, registers the benchmark schema, drives the scenario with autocannon (20
 * connections), stops the service and prints the request rate and the functions and files with the most
 * self time (`--callers fn`: and the call chains above one function). For the comparison with a
 * hand-written endpoint, use `npm run bench`.
 */
const { values: args } = parseArgs({
  options: {
    scenario: { type: 'string', default: 'create' },
    engine: { type: 'string', default: 'sqlite' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '20' },
    records: { type: 'string', default: '2000' },
    top: { type: 'string', default: '40' },
    callers: { type: 'string' },
    postgres: { type: 'string', default: DEFAULT_POSTGRES_URL },
  },
});
const work = mkdtempSync(join(tmpdir(), 'hp-profile-'));
const port = await freePort();
const db = await makeDatabase(args.engine as Engine, args.postgres);
const child = await startProcess('core/main.ts', serviceEnv(db.url, port), port, ['--cpu-prof', '--cpu-prof-dir', work]);
const base = `http://127.0.0.1:${port}/api/v1`;

const sign = (claims: object) => jwt.sign(claims, JWT_SECRET, { algorithm: 'HS256', expiresIn: 3600 });
const admin = { Authorization: `Bearer ${sign({ sub: 'root', roles: ['superadmin'] })}`, 'Content-Type': 'application/json' };
await fetch(`${base}/admin/tenants`, { method: 'POST', headers: admin, body: JSON.stringify({ id: 'bench-a', name: 'bench-a' }) });
const headers = { Authorization: `Bearer ${sign({ sub: 'bench-user', tenant_id: 'bench-a', roles: ['admin'] })}`, 'Content-Type': 'application/json' };
const registered = await fetch(`${base}/metadata/schemas`, { method: 'POST', headers, body: JSON.stringify(BENCH_SCHEMA) });
if (registered.status !== 201) throw new Error(`schema registration answered ${registered.status}: ${await registered.text()}`);
const collection = `${base}/data/bench/item`;
for (let i = 0; i < Number(args.records); i++) {
  await fetch(collection, { method: 'POST', headers, body: JSON.stringify(benchBody(i)) });
}

// Three products for the commerce scenarios: a 3-line order, and the storefront's read by sku.
for (const n of [1, 2, 3]) {
  await fetch(`${base}/erp/products`, { method: 'POST', headers, body: JSON.stringify({ sku: `SKU-${n}`, name: `Product ${n}`, priceCents: 1999, physicalStock: 1_000_000_000 }) });
}
const order = { clientId: 1, paymentMethod: 'visa_card', items: [1, 2, 3].map((n) => ({ productId: n, quantity: 1, unitPrice: 1999 })) };

// The custom role of scenario `roles` of `npm run bench` (scripts/bench/role-policies.ts): bench.item under { category: "cat-3" }.
const role = await fetch(`${base}/tenants/bench-a/roles`, {
  method: 'POST', headers, body: JSON.stringify({ name: 'cat3', policies: [{ resource: 'bench.item', actions: ['read', 'create', 'update'], filter: { category: 'cat-3' } }] }),
});
if (role.status !== 201) throw new Error(`the role answered ${role.status}: ${await role.text()}`);
const roleHeaders = { Authorization: `Bearer ${sign({ sub: 'bench-cat3', tenant_id: 'bench-a', roles: ['role:cat3'] })}`, 'Content-Type': 'application/json' };

const cat3 = ((await (await fetch(`${collection}?limit=1&count=false&filter%5Bcategory%5D=cat-3`, { headers })).json()) as { data: { items: Array<{ id: string }> } }).data.items[0]!.id;

const scenarios: Record<string, { url: string; method: 'GET' | 'POST'; body?: string }> = {
  order: { url: `${base}/erp/orders`, method: 'POST', body: JSON.stringify(order) },
  storefront: { url: `${base}/public/tenant/bench-a/products/SKU-2`, method: 'GET' },
  storefront304: { url: `${base}/public/tenant/bench-a/products/SKU-2`, method: 'GET' },
  create: { url: collection, method: 'POST', body: JSON.stringify(benchBody(424242)) },
  list: { url: `${collection}?limit=50&count=false`, method: 'GET' },
  listTotal: { url: `${collection}?limit=50`, method: 'GET' },
  filtered: { url: `${collection}?limit=50&count=false&filter%5Bcategory%5D=cat-3`, method: 'GET' },
  // The same list under the custom role's policy filter (compare with `filtered`).
  roleList: { url: `${collection}?limit=50&count=false`, method: 'GET' },
  // A read by id (of a cat-3 item), by the admin and by the custom role.
  read: { url: `${collection}/${cat3}`, method: 'GET' },
  roleRead: { url: `${collection}/${cat3}`, method: 'GET' },
};
const scenario = scenarios[args.scenario!];
if (!scenario) throw new Error(`unknown scenario ${args.scenario}: one of ${Object.keys(scenarios).join(', ')}`);
// The storefront is public: no Authorization (and If-None-Match for the 304 path).
const etag = args.scenario === 'storefront304' ? (await fetch(scenario.url)).headers.get('etag')! : null;
const publicHeaders: Record<string, string> = etag ? { 'If-None-Match': etag } : {};
const callerHeaders = args.scenario!.startsWith('role') ? roleHeaders : headers;
const options = { ...scenario, headers: args.scenario!.startsWith('storefront') ? publicHeaders : callerHeaders, connections: Number(args.connections) };
await autocannon({ ...options, duration: 1 });
const cpuBefore = cpuMs(child.pid!);
const result = await autocannon({ ...options, duration: Number(args.duration) });
const cpu = cpuMs(child.pid!) - cpuBefore;
const finished = performance.now();
console.log(`${args.engine} ${args.scenario}: ${result.requests.average.toFixed(0)} req/s, p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, non-2xx ${result.non2xx}`);
// CPU time per request hardly depends on what else the machine runs (unlike the rate): compare it across commits.
console.log(`service CPU: ${((1000 * cpu) / result.requests.total).toFixed(0)} µs per request (${result.requests.total} requests)`);

await stopProcess(child);
const stoppingMs = performance.now() - finished;
await db.drop();

interface ProfileNode { id: number; callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number }; children?: number[] }
const file = readdirSync(work).find((f) => f.endsWith('.cpuprofile'));
if (!file) throw new Error('no CPU profile was written');
const profile = JSON.parse(readFileSync(join(work, file), 'utf8')) as { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[]; endTime: number };
// Only the samples of the measured run: not the start-up, loading and warm-up before it, nor the shutdown.
const windowEnd = profile.endTime - stoppingMs * 1000;
const windowStart = windowEnd - Number(args.duration) * 1e6;
let at = profile.endTime - profile.timeDeltas.reduce((a, b) => a + b, 0);
const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
const parents = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parents.set(c, n.id);
const byCaller = new Map<string, number>();
const byFunction = new Map<string, number>();
const byFile = new Map<string, number>();
/** Time with the function anywhere on the stack (the project's own functions only). */
const inclusive = new Map<string, number>();
/** The frame's file: relative to the project, `~/` for dependencies, empty for native code. */
const fileOf = (frame: ProfileNode['callFrame']) => frameLocation(frame).replace(/:[^:]*$/, '');
const labelOf = (frame: ProfileNode['callFrame']) => `${frame.functionName || '(anonymous)'} ${frameLocation(frame) || `:${frame.lineNumber + 1}`}`;
let total = 0;
profile.samples.forEach((id, i) => {
  const dt = profile.timeDeltas[i] ?? 0;
  at += dt;
  if (at < windowStart || at > windowEnd) return;
  const frame = nodes.get(id)!.callFrame;
  total += dt;
  if (args.callers && frame.functionName === args.callers) {
    // The chain of callers above the function, as far as four frames up.
    const chain: string[] = [];
    for (let p = parents.get(id); p !== undefined && chain.length < 4; p = parents.get(p)) chain.push(labelOf(nodes.get(p)!.callFrame));
    const key = chain.join(' < ');
    byCaller.set(key, (byCaller.get(key) ?? 0) + dt);
  }
  const onStack = new Set<string>();
  for (let p: number | undefined = id; p !== undefined; p = parents.get(p)) {
    const f = nodes.get(p)!.callFrame;
    if (f.url.startsWith(`file://${ROOT}`) && !f.url.includes('node_modules')) onStack.add(labelOf(f));
  }
  for (const label of onStack) inclusive.set(label, (inclusive.get(label) ?? 0) + dt);
  const fn = labelOf(frame);
  byFunction.set(fn, (byFunction.get(fn) ?? 0) + dt);
  const file = fileOf(frame) || frame.functionName;
  byFile.set(file, (byFile.get(file) ?? 0) + dt);
});
const print = (title: string, m: Map<string, number>) => {
  console.log(`\n${title}`);
  for (const [k, v] of [...m].sort((a, b) => b[1] - a[1]).slice(0, Number(args.top))) {
    console.log(`  ${((100 * v) / total).toFixed(1).padStart(5)}%  ${k}`);
  }
};
print('self time by function', byFunction);
print('self time by file', byFile);
print('total time by function of the project (with what it calls)', inclusive);
if (args.callers) print(`callers of ${args.callers}`, byCaller);
rmSync(work, { recursive: true, force: true });

/** User and system CPU time of a process so far, in ms (see cpuMicros). */
function cpuMs(pid: number): number {
  return cpuMicros(pid) / 1000;
}
