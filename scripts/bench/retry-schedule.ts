/**
 * The retry schedule, measured: a real app (SQLite) delivers one event to a receiver that always answers 500,
 * with the back-off base scaled down (DISPATCHER_RETRY_BASE_MS=100, window 12 s); prints the measured gaps
 * between attempts and, from the same function, the production schedule (base 10 s, window 72 h).
 *
 *   node --import tsx scripts/bench/retry-schedule.ts
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../config/index.js';
import { createApp } from '../../core/app.js';
import { backoffDelay, MAX_RETRY_DELAY_MS } from '../../core/events/retry-schedule.js';

const BASE_MS = 100;
const WINDOW_MS = 12_000;
const KEY = 'bench-key-0123456789abcdef';
const dir = mkdtempSync(join(tmpdir(), 'retry-schedule-'));
const arrivals: number[] = [];
const receiver = createServer((req, res) => {
  req.resume();
  arrivals.push(performance.now());
  res.writeHead(500);
  res.end();
});
await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
const app = await createApp(loadConfig({
  NODE_ENV: 'test', DATABASE_URL: `sqlite:${join(dir, 'r.db')}`, TEST_API_KEY: KEY, LOG_LEVEL: 'silent', ALLOW_PRIVATE_NETWORK_FETCH: 'true',
  DISPATCHER_INTERVAL_MS: '20', DISPATCHER_RETRY_BASE_MS: String(BASE_MS), DISPATCHER_RETRY_WINDOW_MS: String(WINDOW_MS),
}));
const server = await app.listen(0, '127.0.0.1');
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`;
const headers = { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json', 'X-Tenant-Id': 'retry' };
const post = (path: string, body: unknown) => fetch(`${base}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
await post('/admin/tenants', { id: 'retry', name: 'Retry' });
await post('/connectors', { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/`, events: ['retry.*'] });
const started = performance.now();
await post('/events/publish', { event: 'retry.test.created', payload: {} });
await new Promise((r) => setTimeout(r, WINDOW_MS + 1500));
await app.close();
receiver.close();
rmSync(dir, { recursive: true, force: true });

console.log(`measured (base ${BASE_MS} ms, window ${WINDOW_MS / 1000} s): ${arrivals.length} attempts`);
arrivals.forEach((at, i) => {
  const gap = i === 0 ? at - started : at - arrivals[i - 1];
  const nominal = i === 0 ? 0 : Math.min(MAX_RETRY_DELAY_MS, BASE_MS * 2 ** (i - 1));
  console.log(`  attempt ${String(i + 1).padStart(2)}: +${(gap / 1000).toFixed(3)} s (nominal ${(nominal / 1000).toFixed(3)} s ±20 %), at ${((at - started) / 1000).toFixed(2)} s`);
});

console.log('\nproduction schedule (base 10 s, cap 6 h, window 72 h, no jitter):');
let elapsed = 0;
for (let n = 1; elapsed < 72 * 3600_000; n++) {
  const delay = Math.min(72 * 3600_000 - elapsed, backoffDelay(n, 10_000, 0.5));
  elapsed += delay;
  console.log(`  retry ${String(n).padStart(2)} after ${fmt(delay)} (at ${fmt(elapsed)})`);
}
process.exit(0);

function fmt(ms: number): string {
  if (ms < 60_000) return `${(ms / 1000).toFixed(0)} s`;
  if (ms < 3600_000) return `${(ms / 60_000).toFixed(1)} min`;
  return `${(ms / 3600_000).toFixed(2)} h`;
}
