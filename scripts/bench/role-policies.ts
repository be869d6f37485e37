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
 * BENCH_PROFILE=DIR writes the service's CPU profile there (scripts/bench/cpu-profile-top.ts reads it).
 */
import jwt from 'jsonwebtoken';
import { loadConfig } from '../../config/index.js';
import { createApp } from '../../core/app.js';
import { systemContext } from '../../core/base/request-context.js';
import { benchBody, loadBenchItems } from './bench-schema.js';
import { cpuRow, pair, runAlone, type CpuRow, type PairOptions } from './cpu-pair.js';
import { freePort, JWT_SECRET, makeDatabase, profileFlags, serviceEnv, startProcess, stopProcess, type Engine } from './harness.js';

export interface RoleBenchOptions extends PairOptions { records: number }
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

/** The three pairs on one engine; rows for `npm run bench`'s table. */
export async function benchRolePolicies(engine: Engine, o: RoleBenchOptions, postgresUrl: string): Promise<CpuRow[]> {
  console.log(`\n== ${engine}: custom roles (scripts/bench/role-policies.ts), ${o.records} records, ${o.runs} runs of ${o.requests} requests`);
  const db = await makeDatabase(engine, postgresUrl);
  try {
    await load(db.url, o.records);
    const port = await freePort();
    const service = await startProcess('core/main.ts', { ...serviceEnv(db.url, port), LOG_LEVEL: 'warn' }, port, profileFlags());
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
      const names: [string, string] = ['custom', 'built-in'];
      const list = await pair('list 50 under a policy vs filter[category]', policy, explicit, pid, o, names);
      const read = await pair('read by id: custom role vs editor', { url: `${base}/${id}`, headers: custom }, { url: `${base}/${id}`, headers: editor }, pid, o, names);
      const create = await pair('create: custom role vs editor', { url: base, method: 'POST', headers: { ...custom, ...json }, body },
        { url: base, method: 'POST', headers: { ...editor, ...json }, body }, pid, o, names);
      return [
        cpuRow(engine, 'custom role: list 50 under its policy vs viewer with the filter', list, 0.9),
        cpuRow(engine, 'custom role: read by id vs editor', read, 0.9),
        cpuRow(engine, 'custom role: create vs editor', create, 0.9),
      ];
    } finally {
      await stopProcess(service);
    }
  } finally {
    await db.drop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await runAlone(benchRolePolicies);
