import { existsSync, readdirSync, readFileSync } from 'node:fs';
import autocannon from 'autocannon';

/**
 * Rates judged on the server's CPU time per request: on a shared machine, req/s moves with whatever else runs,
 * the CPU time a process spends per request much less. Used by the benches that compare two sides in
 * interleaved runs (scripts/bench/role-policies.ts, scripts/bench/create-history.ts).
 */

/** Whether the kernel keeps per-thread run times (/proc/<pid>/task/<tid>/schedstat, in nanoseconds). */
const SCHEDSTAT = existsSync('/proc/self/schedstat');

/**
 * A process's CPU time so far (user and system, all its threads), in microseconds: the run time the scheduler
 * keeps for each thread (/proc/<pid>/task/<tid>/schedstat, nanoseconds). /proc/<pid>/stat counts clock ticks of
 * 10 ms, so a run of 3,000 reads of 50 µs (15 ticks) moved by ±7% from the rounding alone; it is the fallback
 * where the kernel keeps no schedstat.
 */
export function cpuMicros(pid: number): number {
  if (SCHEDSTAT) {
    let ns = 0;
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ', 1)[0]);
      } catch {
        // The thread ended between the listing and the read.
      }
    }
    return ns / 1000;
  }
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

/** What one side of a comparison is sent. */
export interface Side { url: string; headers: Record<string, string>; method?: 'GET' | 'POST'; body?: string }

/**
 * One run: req/s, latencies, CPU µs per request. A run of `amount` requests ends on autocannon's next one-second
 * tick (3,000 creates took "1.0, 2.0 or 3.0 s"), so req/s is the connections over the mean latency, not the
 * requests over the run's time.
 */
export interface Rate { rps: number; p50: number; p99: number; cpu: number; non2xx: number; errors: number }

/** `requests` requests at `connections` connections to `side`, with the CPU time process `pid` spent on them. */
export async function rate(side: Side, pid: number, o: { requests: number; connections: number }): Promise<Rate> {
  const before = cpuMicros(pid);
  const r = await autocannon({ url: side.url, connections: o.connections, amount: o.requests, headers: side.headers, method: side.method ?? 'GET', body: side.body });
  return {
    rps: (o.connections * 1000) / r.latency.average, p50: r.latency.p50, p99: r.latency.p99,
    cpu: (cpuMicros(pid) - before) / r.requests.total, non2xx: r.non2xx, errors: r.errors,
  };
}

export const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** The medians of several runs of one side (the failures added up). */
export function medianRate(runs: Rate[]): Rate {
  return {
    rps: median(runs.map((r) => r.rps)), p50: median(runs.map((r) => r.p50)), p99: median(runs.map((r) => r.p99)),
    cpu: median(runs.map((r) => r.cpu)), non2xx: runs.reduce((n, r) => n + r.non2xx, 0), errors: runs.reduce((n, r) => n + r.errors, 0),
  };
}
