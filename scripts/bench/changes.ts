/**
 * Live changes: STREAMS open Server-Sent Events streams (GET /api/v1/data/{ns}/{schema}/changes) on one
 * service process (`core/main.ts`, production mode), WRITES records created one at a time at RATE per
 * second; for every (stream, event) the time from the write's answer (its transaction has committed) to the
 * event's arrival on the stream. Reports p50/p99/max, events received, and the service's RSS.
 *
 *   node --import tsx scripts/bench/changes.ts [sqlite|postgres|both] [streams=1000] [writes=100] [rate=20]
 */
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import jwt from 'jsonwebtoken';
import { freePort, JWT_SECRET, makeDatabase, profileFlags, serviceEnv, startProcess, stopProcess } from './harness.js';

const [engineArg = 'both', streamsArg = '1000', writesArg = '100', rateArg = '20'] = process.argv.slice(2);
const STREAMS = Number(streamsArg);
const WRITES = Number(writesArg);
const RATE = Number(rateArg);
const TENANT = 'bench-live';

function percentile(sorted: number[], p: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] : NaN;
}

async function run(engine: 'sqlite' | 'postgres') {
  const db = await makeDatabase(engine);
  const port = await freePort();
  const child = await startProcess('core/main.ts', { ...serviceEnv(db.url, port), LOG_LEVEL: 'warn' }, port, profileFlags());
  const base = `http://127.0.0.1:${port}/api/v1`;
  const admin = jwt.sign({ sub: 'bench-admin', roles: ['superadmin'] }, JWT_SECRET, { algorithm: 'HS256', expiresIn: 3600 });
  const viewer = jwt.sign({ sub: 'bench-viewer', tenant_id: TENANT, roles: ['viewer'] }, JWT_SECRET, { algorithm: 'HS256', expiresIn: 3600 });
  const headers = { Authorization: `Bearer ${admin}`, 'Content-Type': 'application/json', 'X-Tenant-Id': TENANT };
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${base}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
    if (res.status !== 201) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return res.json() as Promise<{ data: { item: { id: string } } }>;
  };
  const rss = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))![1]) / 1024;
  const agent = new Agent({ keepAlive: false, maxSockets: Infinity });
  const sockets: Array<{ destroy(): void }> = [];
  try {
    await post('/admin/tenants', { id: TENANT, name: TENANT });
    await post('/metadata/schemas', { namespace: 'bench', name: 'live', schema: { type: 'object', properties: { n: { type: 'integer' }, title: { type: 'string' } } } });
    const rssIdle = rss();

    // Record id -> the time its write was answered; arrivals per record id.
    const committedAt = new Map<string, number>();
    const arrivals: Array<{ id: string; at: number }> = [];
    let opened = 0;
    await Promise.all(Array.from({ length: STREAMS }, () => new Promise<void>((resolve, reject) => {
      const req = request(`${base}/data/bench/live/changes`, { agent, headers: { Authorization: `Bearer ${viewer}`, Accept: 'text/event-stream' } }, (res) => {
        if (res.statusCode !== 200) {
          reject(new Error(`stream: ${res.statusCode}`));
          return;
        }
        opened += 1;
        res.setEncoding('utf8');
        let buffer = '';
        res.on('data', (chunk: string) => {
          const now = performance.now();
          buffer += chunk;
          let at: number;
          while ((at = buffer.indexOf('\n\n')) >= 0) {
            const frame = buffer.slice(0, at);
            buffer = buffer.slice(at + 2);
            // The record id, found without parsing the frame (the client must keep up with STREAMS x RATE frames/s).
            const payload = frame.indexOf('"payload":');
            if (payload < 0) continue;
            const key = frame.indexOf('"id":', payload) + 5;
            const start = frame.indexOf('"', key) + 1;
            arrivals.push({ id: frame.slice(start, frame.indexOf('"', start)), at: now });
          }
        });
        res.on('error', () => {});
        resolve();
      });
      req.on('error', reject);
      sockets.push(req);
      req.end();
    })));
    const rssStreams = rss();

    for (let n = 0; n < WRITES; n++) {
      const started = performance.now();
      const { data } = await post('/data/bench/live', { n, title: `record ${n}` });
      committedAt.set(data.item.id, performance.now());
      const wait = 1000 / RATE - (performance.now() - started);
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    }
    const expected = WRITES * STREAMS;
    const deadline = Date.now() + 30_000;
    while (arrivals.length < expected && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const latencies = arrivals.map((a) => Math.max(0, a.at - (committedAt.get(a.id) ?? a.at))).sort((a, b) => a - b);
    return {
      engine, streams: opened, writes: WRITES, ratePerSecond: RATE, eventsExpected: expected, eventsReceived: arrivals.length,
      p50Ms: Math.round(percentile(latencies, 0.5)), p99Ms: Math.round(percentile(latencies, 0.99)), maxMs: Math.round(latencies[latencies.length - 1] ?? NaN),
      rssIdleMiB: Math.round(rssIdle), rssWithStreamsMiB: Math.round(rssStreams), rssAfterMiB: Math.round(rss()),
    };
  } finally {
    for (const s of sockets) s.destroy();
    agent.destroy();
    await stopProcess(child);
    await db.drop();
  }
}

const engines = engineArg === 'both' ? (['sqlite', 'postgres'] as const) : [engineArg as 'sqlite' | 'postgres'];
for (const engine of engines) console.log(JSON.stringify(await run(engine)));
process.exit(0);
