/**
 * Events delivered end to end per second by one service process, on SQLite and PostgreSQL.
 *
 *   node --import tsx scripts/bench/events.ts [sqlite|postgres|both] [events=2000] [publishers=16]
 *
 * One app (createApp, dispatcher on, poll 50 ms) and one loopback webhook receiver answering 200. Events are
 * published through POST /api/v1/events/publish by `publishers` concurrent clients to one connector; the
 * clock runs from the first publish to the last delivery received. Then, to measure the dispatcher alone, COUNT
 * events are queued with the dispatcher off and a fresh app (boot included) drains them: `drainPerSecond`. PostgreSQL: postgres://postgres@127.0.0.1:5432
 * (BENCH_POSTGRES_URL), a scratch database created and dropped.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadConfig } from '../../config/index.js';
import { createApp } from '../../core/app.js';
import { makeDatabase } from './harness.js';

const [engineArg = 'both', countArg = '2000', publishersArg = '16'] = process.argv.slice(2);
const COUNT = Number(countArg);
const PUBLISHERS = Number(publishersArg);
const KEY = 'bench-key-0123456789abcdef';

async function run(engine: 'sqlite' | 'postgres') {
  const db = await makeDatabase(engine);
  let received = 0;
  let lastAt = 0;
  let done: () => void = () => {};
  const allIn = new Promise<void>((resolve) => { done = resolve; });
  const receiver: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received += 1;
      lastAt = performance.now();
      res.writeHead(200);
      res.end();
      if (received === COUNT) done();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
  const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

  const start = async (dispatcher: boolean) => {
    const app = await createApp(loadConfig({
      NODE_ENV: 'test', DATABASE_URL: db.url, TEST_API_KEY: KEY, LOG_LEVEL: 'silent', ALLOW_PRIVATE_NETWORK_FETCH: 'true',
      DISPATCHER_INTERVAL_MS: '50', DISPATCHER_ENABLED: String(dispatcher), PORT: '0', HOST: '127.0.0.1',
    }));
    const server = await app.listen(0, '127.0.0.1');
    return { app, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1` };
  };
  let { app, base } = await start(true);
  const headers = { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json', 'X-Tenant-Id': 'bench' };
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${base}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
    if (res.status >= 300) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return res.json();
  };
  try {
    await post('/admin/tenants', { id: 'bench', name: 'Bench' });
    await post('/connectors', { url: receiverUrl, events: ['bench.*'] });

    const started = performance.now();
    let next = 0;
    let publishedAt = 0;
    await Promise.all(Array.from({ length: PUBLISHERS }, async () => {
      while (next < COUNT) {
        const n = next++;
        await post('/events/publish', { event: 'bench.item.created', payload: { n, text: 'x'.repeat(200) } });
      }
      publishedAt = performance.now();
    }));
    await allIn;
    const publishSeconds = (publishedAt - started) / 1000;
    const totalSeconds = (lastAt - started) / 1000;

    // Dispatcher alone: queue COUNT events with the dispatcher off, then time a fresh process draining them.
    await app.close();
    ({ app, base } = await start(false));
    next = 0;
    await Promise.all(Array.from({ length: PUBLISHERS }, async () => {
      while (next < COUNT) {
        const n = next++;
        await post('/events/publish', { event: 'bench.item.created', payload: { n, text: 'x'.repeat(200) } });
      }
    }));
    await app.close();
    received = 0;
    const drained = new Promise<void>((resolve) => { done = resolve; });
    const drainStarted = performance.now();
    ({ app, base } = await start(true));
    await drained;
    const drainSeconds = (lastAt - drainStarted) / 1000;
    return {
      engine, events: COUNT, publishers: PUBLISHERS,
      publishPerSecond: Math.round(COUNT / publishSeconds),
      deliveredPerSecond: Math.round(COUNT / totalSeconds),
      seconds: Number(totalSeconds.toFixed(2)),
      drainPerSecond: Math.round(COUNT / drainSeconds),
    };
  } finally {
    await app.close();
    await new Promise<void>((r) => receiver.close(() => r()));
    await db.drop();
  }
}

const engines = engineArg === 'both' ? (['sqlite', 'postgres'] as const) : [engineArg as 'sqlite' | 'postgres'];
for (const engine of engines) {
  const result = await run(engine);
  console.log(JSON.stringify(result));
}
process.exit(0);
