import { parseArgs } from 'node:util';
import { median, medianRate, rate, type Rate, type Side } from './cpu-rate.js';
import { DEFAULT_POSTGRES_URL, type Engine } from './harness.js';

/**
 * Two request kinds against one service process, judged on the service's CPU time per request (utime + stime of
 * its process from /proc), which a shared, loaded machine disturbs far less than requests per second (printed
 * beside it). Used by the custom roles (role-policies.ts) and content workflow (workflow-reads.ts) scenarios.
 */
export interface PairOptions { runs: number; requests: number; connections: number }
export type { Rate, Side };
/** `ratio`: reference CPU time per request over the subject's (above 1 when the subject costs less), median of the runs. */
export interface PairResult { subject: Rate; reference: Rate; ratio: number }

/**
 * One pair in interleaved runs (the first side alternating, so the machine's drift falls on both), after a warm-up
 * of each; `names` label the two sides in the printed line.
 */
export async function pair(label: string, subject: Side, reference: Side, pid: number, o: PairOptions, names: [string, string]): Promise<PairResult> {
  await rate(subject, pid, o);
  await rate(reference, pid, o);
  const runs: Array<{ subject: Rate; reference: Rate }> = [];
  for (let i = 0; i < o.runs; i++) {
    const a = await rate(i % 2 === 0 ? subject : reference, pid, o);
    const b = await rate(i % 2 === 0 ? reference : subject, pid, o);
    runs.push(i % 2 === 0 ? { subject: a, reference: b } : { subject: b, reference: a });
  }
  const pick = (side: 'subject' | 'reference'): Rate => medianRate(runs.map((r) => r[side]));
  const ratios = runs.map((r) => r.reference.cpu / r.subject.cpu);
  const result = { subject: pick('subject'), reference: pick('reference'), ratio: median(ratios) };
  console.log(`    ${label.padEnd(44)} ${names[0]} ${result.subject.cpu.toFixed(0).padStart(5)} µs CPU/req (${result.subject.rps.toFixed(0)} req/s)   `
    + `${names[1]} ${result.reference.cpu.toFixed(0).padStart(5)} µs CPU/req (${result.reference.rps.toFixed(0)} req/s)   ratio ${result.ratio.toFixed(3)}`
    + ` (runs ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)})`);
  return result;
}

/** A row of `npm run bench`'s table: req/s columns as measured, `met` judged on CPU time per request. */
export interface CpuRow {
  engine: string; scenario: string; baseline: Rate; kernel: Rate; target: string; met: boolean | null; cpuRatio: number;
}

/** The row of a pair: the reference in the comparator's columns, met when the ratio reaches `target` (null: informative). */
export function cpuRow(engine: string, scenario: string, r: PairResult, target: number | null): CpuRow {
  return {
    engine, scenario, baseline: r.reference, kernel: r.subject, cpuRatio: r.ratio,
    target: target === null ? `(extra: CPU time per request ratio ${r.ratio.toFixed(2)})` : `>= ${Math.round(target * 100)}% by CPU time per request (measured ${r.ratio.toFixed(2)})`,
    met: target === null ? null : r.ratio >= target,
  };
}

/**
 * A pairs bench run alone: `[--engines sqlite,postgres] [--runs 5] [--records 20000] [--requests 3000] [--connections N]`, each row
 * printed as a JSON line (CPU time per request of both sides, their ratio, req/s).
 */
export async function runAlone(bench: (engine: Engine, o: PairOptions & { records: number }, postgresUrl: string) => Promise<CpuRow[]>, connections = 10): Promise<void> {
  const { values: args } = parseArgs({
    options: {
      engines: { type: 'string', default: 'sqlite,postgres' },
      runs: { type: 'string', default: '5' },
      records: { type: 'string', default: '20000' },
      requests: { type: 'string', default: '3000' },
      connections: { type: 'string', default: String(connections) },
      postgres: { type: 'string', default: DEFAULT_POSTGRES_URL },
    },
  });
  const options = { runs: Number(args.runs), records: Number(args.records), requests: Number(args.requests), connections: Number(args.connections) };
  for (const engine of args.engines.split(',') as Engine[]) {
    for (const r of await bench(engine, options, args.postgres)) {
      console.log(JSON.stringify({ engine: r.engine, scenario: r.scenario, cpuMicros: Math.round(r.kernel.cpu), referenceCpuMicros: Math.round(r.baseline.cpu),
        cpuRatio: Number(r.cpuRatio.toFixed(3)), rps: Math.round(r.kernel.rps), referenceRps: Math.round(r.baseline.rps), met: r.met, bad: r.kernel.non2xx + r.baseline.non2xx }));
    }
  }
}
