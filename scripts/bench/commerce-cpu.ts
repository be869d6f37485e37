import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { startCommerce } from './commerce.js';
import { cpuMicros } from './cpu-rate.js';
import { DEFAULT_POSTGRES_URL, makeDatabase, stopProcess, type Engine } from './harness.js';

/**
 * npm run bench:commerce-cpu -- [--engine sqlite|postgres] [--products 100000] [--requests 10000] [--rounds 3] [--scenarios read,304,order] [--env KEY=VALUE] [--cpu-prof DIR]
 *
 * The commerce scenarios of `npm run bench`, measured by the CPU time each server process spends per request
 * (user + system, from /proc) over a fixed number of requests, for the service and the hand-written twin,
 * alternating between them for a few rounds and reporting the median.
 * On a machine shared with other work, requests per second move with the load; CPU per request hardly does,
 * and on a quiet machine the rate of a one-process server bound by its CPU is its inverse. It leaves out what
 * the database server spends (PostgreSQL's own processes), so it compares what runs in Node.
 * `--cpu-prof DIR` runs both processes under node's --cpu-prof (profiles written to DIR when they stop; read them
 * with `node --import tsx scripts/bench/cpu-profile-top.ts DIR/file.cpuprofile`). Profiling adds its own cost.
 */
const { values: args } = parseArgs({
  options: {
    engine: { type: 'string', default: 'sqlite' },
    products: { type: 'string', default: '100000' },
    requests: { type: 'string', default: '10000' },
    rounds: { type: 'string', default: '3' },
    scenarios: { type: 'string', default: 'read,304,order' },
    postgres: { type: 'string', default: DEFAULT_POSTGRES_URL },
    /** KEY=VALUE added to the service's environment (A/B runs), repeatable. */
    env: { type: 'string', multiple: true, default: [] },
    'cpu-prof': { type: 'string' },
  },
});
const extraEnv = Object.fromEntries(args.env!.map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));

const products = Number(args.products);
const db = await makeDatabase(args.engine as Engine, args.postgres);
const { baseline, kernel, bPort, kPort, token, json, order, bh, kStore, bStore, etagOf } = await startCommerce(db.url, products, extraEnv,
  args['cpu-prof'] ? ['--cpu-prof', '--cpu-prof-dir', args['cpu-prof']] : []);
try {
  type Target = { pid: number; url: string; method?: 'GET' | 'POST'; headers?: Record<string, string>; body?: string };
  const scenarios: Record<string, () => Promise<[Target, Target]>> = {
    // The pipeline alone: the service's GET /health beside the twin's 400 of a request without X-Tenant-Id.
    health: async () => [{ pid: baseline.pid!, url: `http://127.0.0.1:${bPort}/none` }, { pid: kernel.pid!, url: `http://127.0.0.1:${kPort}/api/v1/health` }],
    read: async () => [{ pid: baseline.pid!, url: bStore, headers: bh }, { pid: kernel.pid!, url: kStore }],
    304: async () => [
      { pid: baseline.pid!, url: bStore, headers: { ...bh, 'If-None-Match': await etagOf(bStore, bh) } },
      { pid: kernel.pid!, url: kStore, headers: { 'If-None-Match': await etagOf(kStore) } },
    ],
    order: async () => [
      { pid: baseline.pid!, url: `http://127.0.0.1:${bPort}/orders`, method: 'POST', headers: { ...bh, ...json }, body: order },
      { pid: kernel.pid!, url: `http://127.0.0.1:${kPort}/api/v1/erp/orders`, method: 'POST', headers: { Authorization: `Bearer ${token}`, ...json }, body: order },
    ],
  };
  const run = async (t: Target) => {
    const options = { url: t.url, method: t.method ?? 'GET', headers: t.headers, body: t.body, connections: 20 };
    await autocannon({ ...options, amount: 2000 });
    const before = cpuMicros(t.pid);
    const started = Date.now();
    const r = await autocannon({ ...options, amount: Number(args.requests) });
    const us = (cpuMicros(t.pid) - before) / (r.requests.total || 1);
    return { us, rps: r.requests.total / ((Date.now() - started) / 1000), bad: r.non2xx + r.errors };
  };
  console.log(`\n${args.engine}, ${products} products, ${args.requests} requests each: CPU µs per request of the server process (twin / service)`);
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  for (const name of args.scenarios!.split(',')) {
    const [b, k] = await scenarios[name]!();
    const rounds: Array<{ b: Awaited<ReturnType<typeof run>>; k: Awaited<ReturnType<typeof run>> }> = [];
    for (let i = 0; i < Number(args.rounds); i++) rounds.push({ b: await run(b), k: await run(k) });
    const bus = median(rounds.map((r) => r.b.us));
    const kus = median(rounds.map((r) => r.k.us));
    const ratios = rounds.map((r) => (r.b.us / r.k.us).toFixed(2)).join(' ');
    console.log(`  ${name.padEnd(6)} twin ${bus.toFixed(0).padStart(5)} µs (non-2xx+errors ${rounds[0]!.b.bad}) (${median(rounds.map((r) => r.b.rps)).toFixed(0)} req/s)   `
      + `service ${kus.toFixed(0).padStart(5)} µs (${median(rounds.map((r) => r.k.rps)).toFixed(0)} req/s, non-2xx+errors ${rounds[0]!.k.bad})   `
      + `twin/service ${(bus / kus).toFixed(2)} (rounds: ${ratios})`);
  }
} finally {
  await stopProcess(baseline);
  await stopProcess(kernel);
  await db.drop();
}
