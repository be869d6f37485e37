/**
 * Export throughput and memory: GET /api/v1/data/{ns}/{schema}/export (NDJSON) of every record of a tenant,
 * from the service as its own process (`core/main.ts`, production mode), its RSS sampled every 20 ms from
 * /proc; against a hand-written twin doing the same work in this process (keyset pages of 1000 read with
 * the same SQL shape, one JSON line per record, to a counting sink).
 *
 *   node --import tsx scripts/bench/export.ts [sqlite|postgres|both] [records=1000000]
 */
import { readFileSync } from 'node:fs';
import jwt from 'jsonwebtoken';
import { loadConfig } from '../../config/index.js';
import { createApp } from '../../core/app.js';
import { newId } from '../../core/db/ids.js';
import { systemContext } from '../../core/kernel/request-context.js';
import { BENCH_SCHEMA, benchBody } from './bench-schema.js';
import { freePort, JWT_SECRET, makeDatabase, serviceEnv, startProcess, stopProcess } from './harness.js';

const [engineArg = 'both', recordsArg = '1000000'] = process.argv.slice(2);
const RECORDS = Number(recordsArg);
const TENANT = 'bench-export';

async function load(url: string): Promise<void> {
  const app = await createApp(loadConfig({ ...serviceEnv(url, 0), LOG_LEVEL: 'warn' }));
  try {
    await app.kernel.tenants.create(systemContext(null), { id: TENANT, name: TENANT });
    const rc = systemContext(TENANT);
    const schema = await app.kernel.schemas.registerForTenant(rc, BENCH_SCHEMA);
    const base = Date.now() - RECORDS * 10;
    for (let from = 0; from < RECORDS; from += 20_000) {
      const records = Array.from({ length: Math.min(20_000, RECORDS - from) }, (_, i) => {
        const at = new Date(base + (from + i) * 10).toISOString();
        return { id: newId(), ...benchBody(from + i), createdAt: at, updatedAt: at, version: 1 };
      });
      await app.kernel.db.transaction(rc, (trx) => app.kernel.records.repository.bulkInsert(trx, schema, records));
    }
    await app.kernel.records.repository.analyze(schema);
  } finally {
    await app.close();
  }
}

/** The twin: the same keyset pages and JSON lines, written nowhere but counted. */
async function twin(url: string): Promise<{ records: number; seconds: number }> {
  const app = await createApp(loadConfig({ ...serviceEnv(url, 0), LOG_LEVEL: 'warn' }));
  try {
    const knex = app.kernel.db.knex;
    const table = (await knex('schemas').where({ tenant_id: TENANT }).first()).table_name as string;
    const text = app.kernel.db.dialect.jsonText('data');
    const started = performance.now();
    let records = 0;
    let bytes = 0;
    let cursor: [string, string] | null = null;
    for (;;) {
      const rows: Array<{ id: string; data: string; version: number; created_at: string; updated_at: string }> = await knex.raw(
        `SELECT id, ${text} AS data, version, created_at, updated_at FROM ${table} WHERE tenant_id = ?${cursor ? ' AND (created_at, id) < (?, ?)' : ''} ORDER BY created_at DESC, id DESC LIMIT 1000`,
        cursor ? [TENANT, ...cursor] : [TENANT],
      ).then((r: any) => (Array.isArray(r) ? r : r.rows));
      if (!rows.length) break;
      for (const r of rows) {
        bytes += `{"id":"${r.id}",${r.data.slice(1, -1)},"createdAt":"${r.created_at}","updatedAt":"${r.updated_at}","version":${r.version}}\n`.length;
      }
      records += rows.length;
      const last = rows[rows.length - 1];
      cursor = [last.created_at, last.id];
    }
    if (!bytes) throw new Error('twin read nothing');
    return { records, seconds: (performance.now() - started) / 1000 };
  } finally {
    await app.close();
  }
}

async function run(engine: 'sqlite' | 'postgres') {
  const db = await makeDatabase(engine);
  try {
    const loadStarted = performance.now();
    await load(db.url);
    const loadSeconds = (performance.now() - loadStarted) / 1000;
    const port = await freePort();
    const child = await startProcess('core/main.ts', { ...serviceEnv(db.url, port), LOG_LEVEL: 'warn' }, port);
    try {
      const rss = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))![1]) / 1024;
      const token = jwt.sign({ sub: 'bench', tenant_id: TENANT, roles: ['viewer'] }, JWT_SECRET, { algorithm: 'HS256', expiresIn: 3600 });
      const url = `http://127.0.0.1:${port}/api/v1/data/bench/item/export`;
      const before = rss();
      let peak = before;
      const sampler = setInterval(() => { peak = Math.max(peak, rss()); }, 20);
      const started = performance.now();
      const res = await fetch(url, { headers: { Authorization: `Bearer ${token}` } });
      if (res.status !== 200) throw new Error(`export: ${res.status} ${await res.text()}`);
      let lines = 0;
      let bytes = 0;
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        bytes += chunk.length;
        for (let i = 0; i < chunk.length; i++) if (chunk[i] === 10) lines += 1;
      }
      const seconds = (performance.now() - started) / 1000;
      clearInterval(sampler);
      if (lines !== RECORDS) throw new Error(`exported ${lines} of ${RECORDS} records`);
      const t = await twin(db.url);
      return {
        engine, records: RECORDS, megabytes: Math.round(bytes / 2 ** 20), loadSeconds: Math.round(loadSeconds),
        recordsPerSecond: Math.round(RECORDS / seconds), rssBeforeMiB: Math.round(before), rssPeakMiB: Math.round(peak),
        twinRecordsPerSecond: Math.round(t.records / t.seconds),
      };
    } finally {
      await stopProcess(child);
    }
  } finally {
    await db.drop();
  }
}

const engines = engineArg === 'both' ? (['sqlite', 'postgres'] as const) : [engineArg as 'sqlite' | 'postgres'];
for (const engine of engines) console.log(JSON.stringify(await run(engine)));
process.exit(0);
