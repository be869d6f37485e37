/**
 * Bulk create throughput: records per second through POST /api/v1/data/{ns}/{schema}/bulk with 1000 records
 * per request, against a hand-written twin doing the same work (one transaction per 1000 records, multi-row
 * INSERTs of the records and of their outbox events, no validation) on the same database.
 *
 *   node --import tsx scripts/bench/bulk.ts [sqlite|postgres|both] [requests=40] [clients=2]
 *
 * One app (createApp, production logging off) on a scratch database; PostgreSQL from BENCH_POSTGRES_URL.
 */
import type { AddressInfo } from 'node:net';
import { loadConfig } from '../../config/index.js';
import { createApp } from '../../core/app.js';
import { newId, nowIso } from '../../core/base/ids.js';
import { makeDatabase } from './harness.js';

const [engineArg = 'both', requestsArg = '40', clientsArg = '2'] = process.argv.slice(2);
const REQUESTS = Number(requestsArg);
const CLIENTS = Number(clientsArg);
const PER_REQUEST = 1000;
const KEY = 'bench-key-0123456789abcdef';

const SCHEMA = {
  namespace: 'bench', name: 'item',
  schema: {
    type: 'object', required: ['title', 'price'],
    properties: { title: { type: 'string', maxLength: 200 }, price: { type: 'integer', minimum: 0 }, status: { type: 'string', enum: ['draft', 'live'] }, tags: { type: 'array', items: { type: 'string' } } },
  },
  indexes: [['status']],
};

function items(from: number) {
  return Array.from({ length: PER_REQUEST }, (_, i) => ({ title: `Item ${from + i}`, price: (from + i) % 10_000, status: i % 2 ? 'live' : 'draft', tags: ['a', 'b'] }));
}

async function run(engine: 'sqlite' | 'postgres') {
  const db = await makeDatabase(engine);
  const app = await createApp(loadConfig({
    NODE_ENV: 'test', DATABASE_URL: db.url, TEST_API_KEY: KEY, LOG_LEVEL: 'silent', DISPATCHER_ENABLED: 'false', PORT: '0', HOST: '127.0.0.1',
  }));
  const server = await app.listen(0, '127.0.0.1');
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`;
  const headers = { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json', 'X-Tenant-Id': 'bench' };
  const post = async (path: string, body: unknown, expect = 201) => {
    const res = await fetch(`${base}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
    if (res.status !== expect) throw new Error(`${path}: ${res.status} ${(await res.text()).slice(0, 300)}`);
    await res.arrayBuffer();
  };
  try {
    await post('/admin/tenants', { id: 'bench', name: 'Bench' });
    await post('/metadata/schemas', SCHEMA);
    await post('/data/bench/item/bulk', { items: items(0) });

    // The service: REQUESTS requests of 1000 records from CLIENTS concurrent clients (bodies made beforehand).
    const bodies = Array.from({ length: REQUESTS }, (_, r) => JSON.stringify({ items: items((r + 1) * PER_REQUEST) }));
    let next = 0;
    const latencies: number[] = [];
    const started = performance.now();
    const cpuBefore = process.cpuUsage();
    await Promise.all(Array.from({ length: CLIENTS }, async () => {
      while (next < REQUESTS) {
        const body = bodies[next++];
        const t0 = performance.now();
        const res = await fetch(`${base}/data/bench/item/bulk`, { method: 'POST', headers, body });
        if (res.status !== 201) throw new Error(`bulk: ${res.status} ${(await res.text()).slice(0, 300)}`);
        await res.arrayBuffer();
        latencies.push(performance.now() - t0);
      }
    }));
    const serviceSeconds = (performance.now() - started) / 1000;
    const cpu = process.cpuUsage(cpuBefore);

    // The twin: the same rows (records + outbox events) written by hand, one transaction per 1000.
    const knex = app.kernel.db.knex;
    const table = (await knex('schemas').where({ tenant_id: 'bench', name: 'item' }).first()).table_name as string;
    const rowsPerStatement = app.kernel.db.dialect.rowsPerInsert;
    const twinStarted = performance.now();
    for (let r = 0; r < REQUESTS; r++) {
      const now = nowIso();
      const records = items(r * PER_REQUEST).map((data) => ({ tenant_id: 'bench', id: newId(), data: JSON.stringify(data), version: 1, created_at: now, updated_at: now }));
      const events = records.map((rec) => ({
        tenant_id: 'bench', id: newId(), name: 'bench.item.created', product: null, occurred_at: now,
        payload: JSON.stringify({ namespace: 'bench', schema: 'item', id: rec.id, record: { id: rec.id, ...JSON.parse(rec.data), createdAt: now, updatedAt: now, version: 1 }, previous: null }),
      }));
      await knex.transaction(async (trx) => {
        for (let i = 0; i < records.length; i += rowsPerStatement) await trx(table).insert(records.slice(i, i + rowsPerStatement));
        for (let i = 0; i < events.length; i += rowsPerStatement) await trx('outbox_events').insert(events.slice(i, i + rowsPerStatement));
      });
    }
    const twinSeconds = (performance.now() - twinStarted) / 1000;
    latencies.sort((a, b) => a - b);
    return {
      engine, requests: REQUESTS, perRequest: PER_REQUEST, clients: CLIENTS,
      recordsPerSecond: Math.round((REQUESTS * PER_REQUEST) / serviceSeconds),
      p50Ms: Math.round(latencies[Math.floor(latencies.length * 0.5)]),
      p99Ms: Math.round(latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * 0.99))]),
      twinRecordsPerSecond: Math.round((REQUESTS * PER_REQUEST) / twinSeconds),
      // This process's CPU time per record while the service ran (its HTTP clients included; SQLite runs in
      // the process, PostgreSQL's server does not count): less load-dependent than the rate.
      cpuMicrosPerRecord: Math.round((cpu.user + cpu.system) / (REQUESTS * PER_REQUEST)),
    };
  } finally {
    await app.close();
    await db.drop();
  }
}

const engines = engineArg === 'both' ? (['sqlite', 'postgres'] as const) : [engineArg as 'sqlite' | 'postgres'];
for (const engine of engines) console.log(JSON.stringify(await run(engine)));
process.exit(0);
