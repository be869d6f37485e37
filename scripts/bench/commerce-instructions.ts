import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { baselineTables, startCommerce } from './commerce.js';
import { freePort, makeDatabase, ROOT, serviceEnv, startNodeFlags, stopProcess } from './harness.js';

/**
 * npm run bench:instructions -- [--scenarios 304,read,order] [--products 100000] [--requests 10000] [--warm-up 30000] [--sides service,twin]
 *
 * The SQLite storefront read (and its 304) and the 3-line order of `npm run bench`, measured by the instructions each server
 * process runs per request under valgrind's callgrind: the same count for the same build and inputs, whatever
 * else the machine is doing, so a change of a few per cent shows, where CPU time and requests per second move
 * by more than that between runs. It counts what runs in the process (JavaScript, V8, libuv, SQLite), not the
 * kernel's share of the syscalls nor cache misses: a guide for A/B comparisons, not a replacement of the rate.
 *
 * Each side (the service, the hand-written twin) runs under callgrind with V8 on one thread (`--single-threaded`:
 * no compiler or GC threads, so their work is counted where it happens), gets `--warm-up` requests without
 * instrumentation, then 5,000 (at most `--warm-up`) whose count is dropped (compilation that the warm-up started),
 * then `--requests` counted ones, at 4 connections. Orders are some fifty times slower under callgrind than
 * reads: give them fewer (`--scenarios order --warm-up 3000 --requests 1000`). Needs valgrind (on every machine of this workplace; `apt-get install valgrind`).
 */
const { values: args } = parseArgs({
  options: {
    scenarios: { type: 'string', default: '304,read' },
    products: { type: 'string', default: '100000' },
    requests: { type: 'string', default: '10000' },
    'warm-up': { type: 'string', default: '30000' },
    sides: { type: 'string', default: 'service,twin' },
  },
});
if (spawnSync('valgrind', ['--version']).status !== 0) {
  console.error('valgrind is needed (apt-get install valgrind)');
  process.exit(1);
}
const requests = Number(args.requests);
const work = mkdtempSync(join(tmpdir(), 'hp-instructions-'));
const db = await makeDatabase('sqlite');

try {
  // Loads the catalogue and builds dist/; the two processes it starts are not the measured ones.
  const commerce = await startCommerce(db.url, Number(args.products));
  await stopProcess(commerce.baseline);
  await stopProcess(commerce.kernel);
  const storePath = (url: string) => new URL(url).pathname;

  console.log(`\nsqlite, ${args.products} products: instructions per request under callgrind (${requests} counted after ${args['warm-up']} to warm up)`);
  for (const scenario of args.scenarios!.split(',')) {
    const counts: Record<string, number> = {};
    for (const side of args.sides!.split(',')) {
      const service = side === 'service';
      const port = await freePort();
      const base = `http://127.0.0.1:${port}`;
      const order = scenario === 'order';
      const url = order ? `${base}${service ? '/api/v1/erp/orders' : '/orders'}` : base + storePath(service ? commerce.kStore : commerce.bStore);
      const env = {
        ...serviceEnv(db.url, port), ...(service ? {} : { BENCH_DATABASE_URL: db.url, ...baselineTables(commerce.tables) }),
        // callgrind_control finds the process by files named after the user and host (HOST is the service's listen
        // address) in TMPDIR.
        USER: 'bench', TMPDIR: work,
      };
      const headers = { ...(service ? {} : commerce.bh), ...(order ? { ...commerce.json, ...(service ? { Authorization: `Bearer ${commerce.token}` } : {}) } : {}) };
      counts[side] = await measure(service ? 'dist/core/main.js' : 'dist/scripts/bench/commerce-baseline-server.js', env, base, url,
        headers, scenario === '304' ? 'conditional' : order ? { body: commerce.order } : 'plain', join(work, `${side}-${scenario}.out`));
      console.log(`  ${scenario.padEnd(5)} ${side.padEnd(8)} ${Math.round(counts[side]!).toLocaleString('en-US').padStart(9)} instructions per request`);
    }
    if (counts.service && counts.twin) console.log(`  ${scenario.padEnd(5)} twin/service ${(counts.twin / counts.service).toFixed(3)}`);
  }
} finally {
  await db.drop();
  rmSync(work, { recursive: true, force: true });
}

/** Instructions per request of one server under callgrind (see the header). */
async function measure(script: string, env: Record<string, string>, base: string, url: string, headers: Record<string, string>, kind: 'plain' | 'conditional' | { body: string }, out: string): Promise<number> {
  const child = spawn('valgrind', [
    '--tool=callgrind', '--smc-check=all-non-file', '--instr-atstart=no', `--callgrind-out-file=${out}`,
    process.execPath, ...startNodeFlags(), '--single-threaded', script,
  ], { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'ignore'] });
  const control = (command: string) => execFileSync('callgrind_control', [command, String(child.pid)], { env: { ...process.env, USER: env.USER, HOST: env.HOST, TMPDIR: env.TMPDIR }, stdio: 'ignore' });
  try {
    for (let tries = 0; ; tries++) {
      try {
        if ((await fetch(`${base}/api/v1/health`)).status) break;
      } catch {
        if (tries > 600) throw new Error(`${script} did not start under valgrind`);
        await new Promise((r) => setTimeout(r, 500));
      }
    }
    const sent = { ...headers };
    if (kind === 'conditional') sent['If-None-Match'] = (await fetch(url, { headers })).headers.get('etag')!;
    const expected = kind === 'conditional' ? 304 : typeof kind === 'object' ? 201 : 200;
    const run = async (amount: number) => {
      const result = await autocannon({ url, connections: 4, amount, headers: sent, ...(typeof kind === 'object' ? { method: 'POST', body: kind.body } : {}) });
      const statuses = (result as unknown as { statusCodeStats: Record<string, { count: number }> }).statusCodeStats;
      if (statuses[expected]?.count !== amount) throw new Error(`${script}: expected ${amount} answers ${expected}, got ${JSON.stringify(statuses)}`);
    };
    await run(Number(args['warm-up']));
    control('--instr=on');
    await run(Math.min(5_000, Number(args['warm-up'])));
    control('--dump');
    await run(requests);
    control('--dump');
  } finally {
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
  }
  // The second dump holds the counted requests (each dump starts the count again).
  const name = out.split('/').pop()!;
  const dump = readdirSync(join(out, '..')).find((f) => f.startsWith(name) && f.endsWith('.2'));
  if (!dump) throw new Error(`no second callgrind dump for ${script}`);
  const summary = /^summary: (\d+)$/m.exec(readFileSync(join(out, '..', dump), 'utf8'));
  if (!summary) throw new Error(`no summary in ${dump}`);
  return Number(summary[1]) / requests;
}
