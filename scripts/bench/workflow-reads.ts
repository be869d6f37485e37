/**
 * Reads of a content workflow schema (CONTRACT.md 17; issue 31's speed targets), each pair measured in interleaved
 * runs on one service process (`core/main.ts`, production mode) on one tenant holding the same `records` bench
 * items (the same ids and documents) in three schemas:
 * - `bench.item`: no workflow (today's reads);
 * - `bench.page`: `"workflow": { "drafts": true }`, with a draft on every other record of the newest 100 (the
 *   page the list answers) and on the record read by id, none asked for: list 50 and read by id against
 *   `bench.item`'s (target: at least 95%);
 * - `bench.story`: `"workflow": { "drafts": true, "locales": true }`, `title` localised, every record with a German
 *   title (the tenant's locales: en, de): list 50 and read by id with `?locale=de` against the same without a
 *   locale (target: at least 90%); beside it (informative) the read without a locale against `bench.item`'s.
 * The ratio is of the service's CPU time per request (scripts/bench/cpu-pair.ts). Also scenario `workflow` of `npm run bench`.
 *
 *   node --import tsx scripts/bench/workflow-reads.ts [--engines sqlite,postgres] [--runs 5] [--records 20000] [--requests 3000]
 * BENCH_PROFILE=DIR writes the service's CPU profile there (scripts/bench/cpu-profile-top.ts reads it).
 */
import jwt from 'jsonwebtoken';
import { loadConfig } from '../../config/index.js';
import { createApp } from '../../core/app.js';
import { newId } from '../../core/base/ids.js';
import { systemContext } from '../../core/base/request-context.js';
import type { DataRecord } from '../../core/data/records.repository.js';
import { BENCH_SCHEMA, benchBody } from './bench-schema.js';
import { cpuRow, pair, runAlone, type CpuRow, type PairOptions } from './cpu-pair.js';
import { freePort, JWT_SECRET, makeDatabase, profileFlags, serviceEnv, startProcess, stopProcess, type Engine } from './harness.js';

export interface WorkflowBenchOptions extends PairOptions { records: number }
const TENANT = 'bench-workflow';
/** Records of the newest page and beyond that carry a draft in `bench.page`: every other one of the newest DRAFTED. */
const DRAFTED = 100;

const item = BENCH_SCHEMA.schema as { properties: Record<string, unknown> };
const SCHEMAS = [
  BENCH_SCHEMA,
  { ...BENCH_SCHEMA, name: 'page', workflow: { drafts: true } },
  {
    ...BENCH_SCHEMA, name: 'story', workflow: { drafts: true, locales: true },
    schema: { ...item, properties: { ...item.properties, title: { type: 'string', minLength: 1, maxLength: 200, 'x-localized': true } } },
  },
];

/** The tenant and its three schemas, each with the same records (through the repository, as the other benches load). */
async function load(url: string, records: number): Promise<string[]> {
  const app = await createApp(loadConfig({ ...serviceEnv(url, 0), LOG_LEVEL: 'warn' }));
  try {
    await app.kernel.tenants.create(systemContext(null), { id: TENANT, name: TENANT });
    const rc = systemContext(TENANT);
    const base = Date.now() - records * 10;
    const ids = Array.from({ length: records }, () => newId());
    for (const input of SCHEMAS) {
      const schema = await app.kernel.schemas.registerForTenant(rc, input);
      for (let from = 0; from < records; from += 20_000) {
        const batch: DataRecord[] = Array.from({ length: Math.min(20_000, records - from) }, (_, k) => {
          const i = from + k;
          const at = new Date(base + i * 10).toISOString();
          const body = benchBody(i);
          const translated = input.name === 'story' ? { $locales: { de: { title: `Artikel Nummer ${i}` } } } : {};
          return { id: ids[i], ...body, ...translated, createdAt: at, updatedAt: at, version: 1 };
        });
        await app.kernel.db.transaction(rc, (trx) => app.kernel.records.repository.bulkInsert(trx, schema, batch));
      }
      await app.kernel.records.repository.analyze(schema);
    }
    return ids;
  } finally {
    await app.close();
  }
}

const bearer = (role: string) => ({ Authorization: `Bearer ${jwt.sign({ sub: 'bench', tenant_id: TENANT, roles: [role] }, JWT_SECRET, { algorithm: 'HS256', expiresIn: 3600 })}` });

async function send(url: string, method: string, headers: Record<string, string>, body: unknown): Promise<void> {
  const res = await fetch(url, { method, headers: { ...headers, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${(await res.text()).slice(0, 300)}`);
}

async function itemsOf(url: string, headers: Record<string, string>): Promise<unknown> {
  const res = await fetch(url, { headers });
  if (res.status !== 200) throw new Error(`GET ${url}: ${res.status} ${(await res.text()).slice(0, 300)}`);
  const { data } = (await res.json()) as { data: { items?: unknown; item?: unknown } };
  return data.items ?? data.item;
}

/** The pairs on one engine; rows for `npm run bench`'s table. */
export async function benchWorkflowReads(engine: Engine, o: WorkflowBenchOptions, postgresUrl: string): Promise<CpuRow[]> {
  console.log(`\n== ${engine}: content workflow reads (scripts/bench/workflow-reads.ts), ${o.records} records, ${o.runs} runs of ${o.requests} requests`);
  const db = await makeDatabase(engine, postgresUrl);
  try {
    const ids = await load(db.url, o.records);
    const port = await freePort();
    const service = await startProcess('core/main.ts', { ...serviceEnv(db.url, port), LOG_LEVEL: 'warn' }, port, profileFlags());
    try {
      const api = `http://127.0.0.1:${port}/api/v1`;
      const data = (schema: string) => `${api}/data/bench/${schema}`;
      const editor = bearer('editor');
      await send(`${api}/tenants/${TENANT}/site-config`, 'PATCH', bearer('admin'), { defaultLocale: 'en', locales: ['en', 'de'] });
      const newest = ids.length - 1;
      for (let i = newest; i > newest - DRAFTED && i >= 0; i -= 2) {
        await send(`${data('page')}/${ids[i]}/draft`, 'PUT', editor, { title: `Draft of item ${i}`, priceCents: 1 });
      }
      const id = ids[newest];
      const list = (schema: string, query = '') => ({ url: `${data(schema)}?limit=50${query}`, headers: editor });
      const read = (schema: string, query = '') => ({ url: `${data(schema)}/${id}${query ? `?${query.slice(1)}` : ''}`, headers: editor });
      // The live records answer alike: drafts not asked for stay out, the stored German titles too.
      for (const [a, b] of [[list('item'), list('page')], [read('item'), read('page')], [list('item'), list('story')], [read('item'), read('story')]]) {
        const [x, y] = [await itemsOf(a.url, a.headers), await itemsOf(b.url, b.headers)];
        if (JSON.stringify(x) !== JSON.stringify(y)) throw new Error(`${b.url} answers otherwise than ${a.url}`);
      }
      const german = (await itemsOf(read('story', '&locale=de').url, editor)) as { title: string };
      if (german.title !== `Artikel Nummer ${newest}`) throw new Error(`?locale=de answered the title ${german.title}`);

      const pid = service.pid!;
      const names: [string, string] = ['workflow', 'plain'];
      const listDrafts = await pair('list 50: drafts schema vs none', list('page'), list('item'), pid, o, names);
      const readDrafts = await pair('read by id: drafts schema vs none', read('page'), read('item'), pid, o, names);
      const localNames: [string, string] = ['locale=de', 'no locale'];
      const listLocale = await pair('list 50: ?locale=de vs no locale', list('story', '&locale=de'), list('story'), pid, o, localNames);
      const readLocale = await pair('read by id: ?locale=de vs no locale', read('story', '&locale=de'), read('story'), pid, o, localNames);
      const listStored = await pair('list 50: translated schema vs none', list('story'), list('item'), pid, o, names);
      const readStored = await pair('read by id: translated schema vs none', read('story'), read('item'), pid, o, names);
      return [
        cpuRow(engine, 'workflow: list 50 of a drafts schema vs no workflow', listDrafts, 0.95),
        cpuRow(engine, 'workflow: read by id of a drafts schema vs no workflow', readDrafts, 0.95),
        cpuRow(engine, 'workflow: list 50 with ?locale=de vs no locale', listLocale, 0.9),
        cpuRow(engine, 'workflow: read by id with ?locale=de vs no locale', readLocale, 0.9),
        cpuRow(engine, 'workflow: list 50 of a translated schema, no locale, vs no workflow', listStored, null),
        cpuRow(engine, 'workflow: read by id of a translated schema, no locale, vs no workflow', readStored, null),
      ];
    } finally {
      await stopProcess(service);
    }
  } finally {
    await db.drop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await runAlone(benchWorkflowReads);
