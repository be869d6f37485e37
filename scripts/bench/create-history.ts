/**
 * Creates with their revision and audit entry (CONTRACT.md 16.3, 16.4) against the same creates without them
 * ("today's creates"), and both against the hand-written comparator (scripts/bench/baseline-server.ts), on one
 * engine: three processes side by side on one database with a tenant of `records` bench items —
 * - the service (`core/main.ts`, production mode): a create queues the record, its outbox event, its revision
 *   and its audit entry, committed together (one group commit);
 * - the same service without revision and audit (scripts/bench/service-without-history.ts);
 * - the comparator: the same rows written by hand (scripts/bench/baseline-store.ts: one transaction, or one statement on PostgreSQL).
 * Each is driven with `requests` creates per run, in interleaved runs (the order turning, so the machine's drift
 * falls on all three). The machine is shared, so the ratios are of CPU time per request (median over runs;
 * utime + stime of the process from /proc), req/s printed beside them. Target (issue 30): with revision and
 * audit at least 85% of without. Also scenario `history` of `npm run bench`.
 *
 *   node --import tsx scripts/bench/create-history.ts [--engines sqlite,postgres] [--runs 5] [--records 20000] [--requests 3000]
 * BENCH_PROFILE=DIR writes the CPU profiles of the service and of the service without history there.
 */
import jwt from 'jsonwebtoken';
import { loadConfig } from '../../config/index.js';
import { createApp } from '../../core/app.js';
import { newId } from '../../core/base/ids.js';
import { loadBaseline } from './baseline-store.js';
import { benchBody, loadBenchItems } from './bench-schema.js';
import { runAlone, type CpuRow } from './cpu-pair.js';
import { median, medianRate, rate, type Rate, type Side } from './cpu-rate.js';
import { freePort, JWT_SECRET, makeDatabase, profileFlags, serviceEnv, startProcess, stopProcess, type Engine } from './harness.js';

export interface HistoryBenchOptions { runs: number; records: number; requests: number; connections: number }
const TENANT = 'bench-history';
const SIDES = ['service', 'without', 'comparator'] as const;
type SideName = (typeof SIDES)[number];

/** The tenant and its bench items (through the repository, as the other benches load), and as many in the comparator's table. */
async function load(url: string, records: number): Promise<void> {
  const app = await createApp(loadConfig({ ...serviceEnv(url, 0), LOG_LEVEL: 'warn' }));
  try {
    await loadBenchItems(app, TENANT, records);
  } finally {
    await app.close();
  }
  const base = Date.now() - records * 10;
  await loadBaseline(url, [{ tenantId: TENANT, records: Array.from({ length: records }, (_, i) => ({ id: newId(), data: benchBody(i), createdAt: new Date(base + i * 10).toISOString() })) }]);
}

/** A row of `npm run bench`'s table (cpu-pair.ts): req/s columns as measured, `met` judged on CPU time per request. */
export type HistoryRow = CpuRow;

export async function benchCreateHistory(engine: Engine, o: HistoryBenchOptions, postgresUrl: string): Promise<HistoryRow[]> {
  console.log(`\n== ${engine}: creates with revision and audit (scripts/bench/create-history.ts), ${o.records} records, ${o.runs} runs of ${o.requests} requests`);
  const db = await makeDatabase(engine, postgresUrl);
  try {
    await load(db.url, o.records);
    const started: Array<Awaited<ReturnType<typeof startProcess>>> = [];
    try {
      const start = async (script: string, env: Record<string, string> = {}) => {
        const port = await freePort();
        const child = await startProcess(script, { ...serviceEnv(db.url, port), LOG_LEVEL: 'warn', ...env }, port, script === 'core/main.ts' || script.includes('without') ? profileFlags() : []);
        started.push(child);
        return { port, pid: child.pid! };
      };
      const service = await start('core/main.ts');
      const without = await start('scripts/bench/service-without-history.ts');
      const comparator = await start('scripts/bench/baseline-server.ts', { BENCH_DATABASE_URL: db.url });
      const token = jwt.sign({ sub: 'bench', tenant_id: TENANT, roles: ['editor'] }, JWT_SECRET, { algorithm: 'HS256', expiresIn: 3600 });
      const json = { 'Content-Type': 'application/json' };
      const body = JSON.stringify(benchBody(424242));
      const kernelSide = (port: number): Side => ({ url: `http://127.0.0.1:${port}/api/v1/data/bench/item`, method: 'POST', headers: { Authorization: `Bearer ${token}`, ...json }, body });
      const sides: Record<SideName, { side: Side; pid: number }> = {
        service: { side: kernelSide(service.port), pid: service.pid },
        without: { side: kernelSide(without.port), pid: without.pid },
        comparator: { side: { url: `http://127.0.0.1:${comparator.port}/items`, method: 'POST', headers: { 'X-Tenant-Id': TENANT, ...json }, body }, pid: comparator.pid },
      };
      for (const name of SIDES) await rate(sides[name].side, sides[name].pid, o); // warm-up
      const runs: Array<Record<SideName, Rate>> = [];
      for (let i = 0; i < o.runs; i++) {
        const run = {} as Record<SideName, Rate>;
        for (let k = 0; k < SIDES.length; k++) {
          const name = SIDES[(i + k) % SIDES.length];
          run[name] = await rate(sides[name].side, sides[name].pid, o);
        }
        runs.push(run);
      }
      const pick = (name: SideName) => medianRate(runs.map((r) => r[name]));
      // Ratios of CPU time per request (other / service: below 1 when the service costs more), and of req/s.
      const history = median(runs.map((r) => r.without.cpu / r.service.cpu));
      const versus = median(runs.map((r) => r.comparator.cpu / r.service.cpu));
      const rps = (name: SideName) => median(runs.map((r) => r.service.rps / r[name].rps));
      const show = (name: SideName) => `${name} ${pick(name).cpu.toFixed(0).padStart(5)} µs CPU/req (${pick(name).rps.toFixed(0)} req/s)`;
      console.log(`    ${SIDES.map(show).join('   ')}`);
      console.log(`    with revision and audit / without: CPU ${history.toFixed(3)}, req/s ${rps('without').toFixed(3)};   service / comparator: CPU ${versus.toFixed(3)}, req/s ${rps('comparator').toFixed(3)}`);
      const bad = SIDES.reduce((n, name) => n + pick(name).non2xx + pick(name).errors, 0);
      if (bad) console.log(`    (!) ${bad} requests failed`);
      return [
        { engine, scenario: 'create with revision and audit vs without', baseline: pick('without'), kernel: pick('service'),
          target: `>= 85% by CPU time per request (measured ${history.toFixed(2)}; req/s ${rps('without').toFixed(2)})`, met: history >= 0.85 && !bad, cpuRatio: history },
        { engine, scenario: 'create vs comparator, by CPU time per request', baseline: pick('comparator'), kernel: pick('service'),
          target: `(extra: measured ${versus.toFixed(2)}; req/s ${rps('comparator').toFixed(2)})`, met: null, cpuRatio: versus },
      ];
    } finally {
      for (const child of started) await stopProcess(child);
    }
  } finally {
    await db.drop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await runAlone(benchCreateHistory, 20);
  process.exit(0);
}
