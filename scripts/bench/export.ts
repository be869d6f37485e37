/**
 * Export throughput and memory: GET /api/v1/data/{ns}/{schema}/export (NDJSON, or CSV) of every record of a
 * tenant, from the service as its own process (`core/main.ts`, production mode), its RSS sampled every 20 ms
 * from /proc; against a hand-written twin doing the same work in this process (keyset pages of 1000 read with
 * the same SQL shape, one JSON line per record, or one CSV row per record written by csv-stringify, to a
 * counting sink). `format` both exports the same load twice, NDJSON first; one JSON line per format.
 *
 *   node --import tsx scripts/bench/export.ts [sqlite|postgres|both] [records=1000000] [ndjson|csv|both=ndjson]
 */
import { readFileSync } from 'node:fs';
import { stringify as stringifyCsv } from 'csv-stringify/sync';
import jwt from 'jsonwebtoken';
import { loadConfig } from '../../config/index.js';
import { createApp } from '../../core/app.js';
import { BENCH_SCHEMA, loadBenchItems } from './bench-schema.js';
import { freePort, JWT_SECRET, makeDatabase, serviceEnv, startProcess, stopProcess } from './harness.js';

const [engineArg = 'both', recordsArg = '1000000', formatArg = 'ndjson'] = process.argv.slice(2);
const RECORDS = Number(recordsArg);
const TENANT = 'bench-export';

async function load(url: string): Promise<void> {
  const app = await createApp(loadConfig({ ...serviceEnv(url, 0), LOG_LEVEL: 'warn' }));
  try {
    await loadBenchItems(app, TENANT, RECORDS);
  } finally {
    await app.close();
  }
}

type Format = 'ndjson' | 'csv';

/** The CSV export's columns for BENCH_SCHEMA, in its order. */
const CSV_COLUMNS = ['id', ...Object.keys(BENCH_SCHEMA.schema.properties ?? {}), 'createdAt', 'updatedAt', 'version'];

/** A page's rows as CSV text, as the export writes them: csv-stringify, nested values as JSON text, booleans as true/false. */
function csvText(rows: Array<{ id: string; data: string; version: number; created_at: string; updated_at: string }>): string {
  const cells = rows.map((r) => {
    const record: Record<string, unknown> = { id: r.id, ...JSON.parse(r.data), createdAt: r.created_at, updatedAt: r.updated_at, version: Number(r.version) };
    return CSV_COLUMNS.map((c) => {
      const v = record[c];
      return v === undefined || v === null ? '' : typeof v === 'object' ? JSON.stringify(v) : v;
    });
  });
  return stringifyCsv(cells, { columns: CSV_COLUMNS, header: false, cast: { boolean: (v) => String(v) } });
}

/** The twin: the same keyset pages and JSON lines (or CSV rows), written nowhere but counted. */
async function twin(url: string, format: Format): Promise<{ records: number; seconds: number }> {
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
      if (format === 'csv') {
        bytes += csvText(rows).length;
      } else {
        for (const r of rows) {
          bytes += `{"id":"${r.id}",${r.data.slice(1, -1)},"createdAt":"${r.created_at}","updatedAt":"${r.updated_at}","version":${r.version}}\n`.length;
        }
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

async function run(engine: 'sqlite' | 'postgres', formats: readonly Format[]) {
  const db = await makeDatabase(engine);
  try {
    const loadStarted = performance.now();
    await load(db.url);
    const loadSeconds = (performance.now() - loadStarted) / 1000;
    // Each format from a fresh service process, so that each idle and peak RSS is its own.
    for (const format of formats) console.log(JSON.stringify(await measure(engine, db.url, format, loadSeconds)));
  } finally {
    await db.drop();
  }
}

async function measure(engine: 'sqlite' | 'postgres', dbUrl: string, format: Format, loadSeconds: number) {
  const port = await freePort();
  const child = await startProcess('core/main.ts', { ...serviceEnv(dbUrl, port), LOG_LEVEL: 'warn' }, port);
  try {
    const rss = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))![1]) / 1024;
    const token = jwt.sign({ sub: 'bench', tenant_id: TENANT, roles: ['viewer'] }, JWT_SECRET, { algorithm: 'HS256', expiresIn: 3600 });
    const url = `http://127.0.0.1:${port}/api/v1/data/bench/item/export${format === 'csv' ? '?format=csv' : ''}`;
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
    // CSV: a header line, and no bench value holds a newline.
    if (lines !== RECORDS + (format === 'csv' ? 1 : 0)) throw new Error(`exported ${lines} lines for ${RECORDS} records`);
    const t = await twin(dbUrl, format);
    return {
      engine, ...(format === 'csv' ? { format } : {}), records: RECORDS, megabytes: Math.round(bytes / 2 ** 20), loadSeconds: Math.round(loadSeconds),
      recordsPerSecond: Math.round(RECORDS / seconds), rssBeforeMiB: Math.round(before), rssPeakMiB: Math.round(peak),
      twinRecordsPerSecond: Math.round(t.records / t.seconds),
    };
  } finally {
    await stopProcess(child);
  }
}

const engines = engineArg === 'both' ? (['sqlite', 'postgres'] as const) : [engineArg as 'sqlite' | 'postgres'];
const formats = formatArg === 'both' ? (['ndjson', 'csv'] as const) : [formatArg as Format];
for (const engine of engines) await run(engine, formats);
process.exit(0);
