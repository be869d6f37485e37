/**
 * Custom roles against built-in ones (CONTRACT.md 16.1), each pair measured in interleaved runs on one service
 * process (`core/main.ts`, production mode) on a tenant of `records` bench items; the custom role `cat3` reads,
 * creates and updates `bench.item` under the policy filter `{ category: "cat-3" }` (a JWT with `roles: ["role:cat3"]`):
 * - a list under the policy against the viewer's list with `?filter[category]=cat-3` (target: at least 90%);
 * - a read by id and a create (of a cat-3 item) by the custom role against the same by an editor (at least 90%).
 * The machine is shared, so the ratio is of the service's CPU time per request (utime + stime of its process from
 * /proc, median of the runs), not of requests per second (printed beside it). Also scenario `roles` of `npm run bench`.
 *
 *   node --import tsx scripts/bench/role-policies.ts [--engines sqlite,postgres] [--runs 5] [--records 20000] [--requests 3000]
 */
import { parseArgs } from 'node:util';
import jwt from 'jsonwebtoken';
import { loadConfig } from '../../config/index.js';
import { createApp } from '../../core/app.js';
import { systemContext } from '../../core/base/request-context.js';
import { benchBody, loadBenchItems } from './bench-schema.js';
import { median, medianRate, rate, type Rate, type Side } from './cpu-rate.js';
import { DEFAULT_POSTGRES_URL, freePort, JWT_SECRET, makeDatabase, serviceEnv, startProcess, stopProcess, type Engine } from './harness.js';

export interface RoleBenchOptions { runs: number; records: number; requests: number; connections: number }
const TENANT = 'bench-roles';

/** The tenant, its bench items (through the repository, as the other benches load) and the role `cat3`. */
async function load(url: string, records: number): Promise<void> {
  const app = await createApp(loadConfig({ ...serviceEnv(url, 0), LOG_LEVEL: 'warn' }));
  try {
    await loadBenchItems(app, TENANT, records);
    await app.kernel.roles.create(systemContext(TENANT), TENANT, {
      name: 'cat3', policies: [{ resource: 'bench.item', actions: ['read', 'create', 'update'], filter: { category: 'cat-3' } }],
    });
  } finally {
    await app.close();
  }
}

const bearer = (roles: string[]) => ({ Authorization: `Bearer ${jwt.sign({ sub: 'bench', tenant_id: TENANT, roles }, JWT_SECRET, { algorithm: 'HS256', expiresIn: 3600 })}` });

/** One pair in interleaved runs (the first side alternating, so the machine's drift falls on both), after a warm-up of each. */
async function pair(label: string, custom: Side, builtIn: Side, pid: number, o: RoleBenchOptions): Promise<{ custom: Rate; builtIn: Rate; ratio: number }> {
  await rate(custom, pid, o);
  await rate(builtIn, pid, o);
  const runs: Array<{ custom: Rate; builtIn: Rate }> = [];
  for (let i = 0; i < o.runs; i++) {
    const a = await rate(i % 2 === 0 ? custom : builtIn, pid, o);
    const b = await rate(i % 2 === 0 ? builtIn : custom, pid, o);
    runs.push(i % 2 === 0 ? { custom: a, builtIn: b } : { custom: b, builtIn: a });
  }
  const pick = (side: 'custom' | 'builtIn'): Rate => medianRate(runs.map((r) => r[side]));
  // The ratio of CPU time per request (built-in / custom: above 1 when the custom role costs less).
  const ratio = median(runs.map((r) => r.builtIn.cpu / r.custom.cpu));
  const result = { custom: pick('custom'), builtIn: pick('builtIn'), ratio };
  console.log(`    ${label.padEnd(44)} custom ${result.custom.cpu.toFixed(0).padStart(5)} µs CPU/req (${result.custom.rps.toFixed(0)} req/s)   `
    + `built-in ${result.builtIn.cpu.toFixed(0).padStart(5)} µs CPU/req (${result.builtIn.rps.toFixed(0)} req/s)   ratio ${ratio.toFixed(3)}`);
  return result;
}

/** A row of `npm run bench`'s table: req/s columns as measured, `met` judged on CPU time per request. */
export interface RoleRow {
  engine: string; scenario: string; baseline: Rate; kernel: Rate; target: string; met: boolean; cpuRatio: number;
}

/** The three pairs on one engine; rows for `npm run bench`'s table. */
export async function benchRolePolicies(engine: Engine, o: RoleBenchOptions, postgresUrl: string): Promise<RoleRow[]> {
  console.log(`\n== ${engine}: custom roles (scripts/bench/role-policies.ts), ${o.records} records, ${o.runs} runs of ${o.requests} requests`);
  const db = await makeDatabase(engine, postgresUrl);
  try {
    await load(db.url, o.records);
    const port = await freePort();
    const service = await startProcess('core/main.ts', { ...serviceEnv(db.url, port), LOG_LEVEL: 'warn' }, port);
    try {
      const base = `http://127.0.0.1:${port}/api/v1/data/bench/item`;
      const custom = bearer(['role:cat3']);
      const viewer = bearer(['viewer']);
      const editor = bearer(['editor']);
      const policy = { url: `${base}?limit=50`, headers: custom };
      const explicit = { url: `${base}?limit=50&filter[category]=cat-3`, headers: viewer };
      // Both answer the same page.
      const [a, b] = await Promise.all([policy, explicit].map(async (s) => (await (await fetch(s.url, { headers: s.headers })).json()) as { data: { items: Array<{ id: string }> } }));
      if (JSON.stringify(a.data.items.map((i) => i.id)) !== JSON.stringify(b.data.items.map((i) => i.id))) throw new Error('the two lists differ');
      const id = a.data.items[0].id;
      const json = { 'Content-Type': 'application/json' };
      const body = JSON.stringify(benchBody(3));
      const pid = service.pid!;
      const list = await pair('list 50 under a policy vs filter[category]', policy, explicit, pid, o);
      const read = await pair('read by id: custom role vs editor', { url: `${base}/${id}`, headers: custom }, { url: `${base}/${id}`, headers: editor }, pid, o);
      const create = await pair('create: custom role vs editor', { url: base, method: 'POST', headers: { ...custom, ...json }, body },
        { url: base, method: 'POST', headers: { ...editor, ...json }, body }, pid, o);
      const row = (scenario: string, r: typeof list, target: number): RoleRow => ({
        engine, scenario, baseline: r.builtIn, kernel: r.custom, target: `>= ${target * 100}% by CPU time per request (measured ${r.ratio.toFixed(2)})`, met: r.ratio >= target, cpuRatio: r.ratio,
      });
      return [
        row('custom role: list 50 under its policy vs viewer with the filter', list, 0.9),
        row('custom role: read by id vs editor', read, 0.9),
        row('custom role: create vs editor', create, 0.9),
      ];
    } finally {
      await stopProcess(service);
    }
  } finally {
    await db.drop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values: args } = parseArgs({
    options: {
      engines: { type: 'string', default: 'sqlite,postgres' },
      runs: { type: 'string', default: '5' },
      records: { type: 'string', default: '20000' },
      requests: { type: 'string', default: '3000' },
      postgres: { type: 'string', default: DEFAULT_POSTGRES_URL },
    },
  });
  const options = { runs: Number(args.runs), records: Number(args.records), requests: Number(args.requests), connections: 10 };
  for (const engine of args.engines.split(',') as Engine[]) {
    for (const r of await benchRolePolicies(engine, options, args.postgres)) {
      console.log(JSON.stringify({ engine: r.engine, scenario: r.scenario, customCpuMicros: Math.round(r.kernel.cpu), builtInCpuMicros: Math.round(r.baseline.cpu),
        cpuRatio: Number(r.cpuRatio.toFixed(3)), customRps: Math.round(r.kernel.rps), builtInRps: Math.round(r.baseline.rps), met: r.met, bad: r.kernel.non2xx + r.baseline.non2xx }));
    }
  }
}
