/**
 * A list under a custom role's policy against the same list with the same explicit filter by a built-in role
 * (CONTRACT.md 16.1: at least 90% of its requests per second). The service runs as its own process
 * (`core/main.ts`, production mode) on a tenant of RECORDS bench items; the custom role `cat3` reads
 * `bench.item` with the policy filter `{ category: "cat-3" }` (a JWT with `roles: ["role:cat3"]`), the viewer
 * lists `?filter[category]=cat-3`. Runs are interleaved, the ratio is the median of `runs`; a line of JSON per
 * engine with req/s, p50 and the server's CPU time per request of both sides. Not a timed test: figures are read
 * on a quiet machine.
 *
 *   node --import tsx scripts/bench/role-policies.ts [--engines sqlite,postgres] [--runs 5] [--records 20000] [--requests 3000]
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import jwt from 'jsonwebtoken';
import { loadConfig } from '../../config/index.js';
import { createApp } from '../../core/app.js';
import { systemContext } from '../../core/base/request-context.js';
import { loadBenchItems } from './bench-schema.js';
import { DEFAULT_POSTGRES_URL, freePort, JWT_SECRET, makeDatabase, serviceEnv, startProcess, stopProcess, type Engine } from './harness.js';

const { values: args } = parseArgs({
  options: {
    engines: { type: 'string', default: 'sqlite,postgres' },
    runs: { type: 'string', default: '5' },
    records: { type: 'string', default: '20000' },
    requests: { type: 'string', default: '3000' },
    postgres: { type: 'string', default: DEFAULT_POSTGRES_URL },
  },
});
const RECORDS = Number(args.records);
const REQUESTS = Number(args.requests);
const RUNS = Number(args.runs);
const CONNECTIONS = 10;
const TENANT = 'bench-roles';

/** The tenant, its bench items (through the repository, as the other benches load) and the role `cat3`. */
async function load(url: string): Promise<void> {
  const app = await createApp(loadConfig({ ...serviceEnv(url, 0), LOG_LEVEL: 'warn' }));
  try {
    await loadBenchItems(app, TENANT, RECORDS);
    await app.kernel.roles.create(systemContext(TENANT), TENANT, { name: 'cat3', policies: [{ resource: 'bench.item', actions: ['read'], filter: { category: 'cat-3' } }] });
  } finally {
    await app.close();
  }
}

function cpuMicros(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

async function rate(url: string, headers: Record<string, string>, pid: number): Promise<{ rps: number; p50: number; cpu: number; bad: number }> {
  const before = cpuMicros(pid);
  const started = performance.now();
  const r = await autocannon({ url, connections: CONNECTIONS, amount: REQUESTS, headers });
  return { rps: r.requests.total / ((performance.now() - started) / 1000), p50: r.latency.p50, cpu: (cpuMicros(pid) - before) / r.requests.total, bad: r.non2xx + r.errors };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const bearer = (roles: string[]) => ({ Authorization: `Bearer ${jwt.sign({ sub: 'bench', tenant_id: TENANT, roles }, JWT_SECRET, { algorithm: 'HS256', expiresIn: 3600 })}` });

async function bench(engine: Engine): Promise<void> {
  const db = await makeDatabase(engine, args.postgres);
  try {
    await load(db.url);
    const port = await freePort();
    const service = await startProcess('core/main.ts', { ...serviceEnv(db.url, port), LOG_LEVEL: 'warn' }, port);
    try {
      const base = `http://127.0.0.1:${port}/api/v1/data/bench/item`;
      const policy = { url: `${base}?limit=50`, headers: bearer(['role:cat3']) };
      const explicit = { url: `${base}?limit=50&filter[category]=cat-3`, headers: bearer(['viewer']) };
      // Both answer the same page.
      const [a, b] = await Promise.all([policy, explicit].map(async (s) => (await (await fetch(s.url, { headers: s.headers })).json()) as { data: { items: Array<{ id: string }> } }));
      if (JSON.stringify(a.data.items.map((i) => i.id)) !== JSON.stringify(b.data.items.map((i) => i.id))) throw new Error('the two lists differ');
      await rate(policy.url, policy.headers, service.pid!);
      await rate(explicit.url, explicit.headers, service.pid!);
      const runs: Array<{ policy: Awaited<ReturnType<typeof rate>>; explicit: Awaited<ReturnType<typeof rate>> }> = [];
      for (let i = 0; i < RUNS; i++) {
        // Interleaved, the first side alternating: drift of the machine falls on both.
        const first = i % 2 === 0 ? await rate(policy.url, policy.headers, service.pid!) : await rate(explicit.url, explicit.headers, service.pid!);
        const second = i % 2 === 0 ? await rate(explicit.url, explicit.headers, service.pid!) : await rate(policy.url, policy.headers, service.pid!);
        runs.push(i % 2 === 0 ? { policy: first, explicit: second } : { policy: second, explicit: first });
      }
      console.log(JSON.stringify({
        engine, records: RECORDS, runs: RUNS,
        policyRps: Math.round(median(runs.map((r) => r.policy.rps))), explicitRps: Math.round(median(runs.map((r) => r.explicit.rps))),
        ratio: Number(median(runs.map((r) => r.policy.rps / r.explicit.rps)).toFixed(3)),
        policyCpuMicrosPerRequest: Math.round(median(runs.map((r) => r.policy.cpu))), explicitCpuMicrosPerRequest: Math.round(median(runs.map((r) => r.explicit.cpu))),
        policyP50: median(runs.map((r) => r.policy.p50)), explicitP50: median(runs.map((r) => r.explicit.p50)),
        bad: runs.reduce((n, r) => n + r.policy.bad + r.explicit.bad, 0),
      }));
    } finally {
      await stopProcess(service);
    }
  } finally {
    await db.drop();
  }
}

for (const engine of args.engines.split(',') as Engine[]) await bench(engine);
