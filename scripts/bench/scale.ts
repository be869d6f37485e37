import { mkdirSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import jwt from 'jsonwebtoken';
import { loadConfig } from '../../config/index.js';
import { createApp } from '../../core/app.js';
import { newId } from '../../core/base/ids.js';
import { systemContext } from '../../core/base/request-context.js';
import { BENCH_SCHEMA, benchBody } from './bench-schema.js';
import { loadBenchTenant } from './load.js';
import { freePort, JWT_SECRET, makeDatabase, ROOT, serviceEnv, startProcess, stopProcess, type Engine } from './harness.js';

const HELP = `npm run bench:scale -- [options]

The day-two targets at scale (issue 16, "Speed"), on one tenant's bench.item records:
- the p99 of a list of 50 filtered on an indexed field (filter[category], count=false) at --small records,
  then again after loading up to --large records: the target is at most 1.5x;
- at --large records, a compatible schema change (an optional property added; target under 1 s), then an
  incompatible one with migrate (a new required property set on every record): records/s, the p50/p99 of
  --writers concurrent single writes to that schema (PATCH of stored records: they wait for the migration,
  up to 30 s, then 503) and of --other-writers concurrent single writes to another schema (POST) while it runs.

  --engines LIST      sqlite,postgres (default both)
  --small N           records for the first measurement (default 100000)
  --large N           records for the second measurement and the schema changes (default 1000000)
  --duration S        seconds per list measurement (default 10)
  --connections N     autocannon connections for the lists (default 10)
  --writers N         concurrent writers to the migrating schema (default 4)
  --other-writers N   concurrent writers to another schema during the migration (default 2)
  --skip-lists        skip the list measurements (load, then the schema changes)
  --skip-migrate      measure the lists and the compatible change only
Writes the figures, with the load average, to bench-results/scale-<time>.md.`;

const { values: args } = parseArgs({
  options: {
    engines: { type: 'string', default: 'sqlite,postgres' },
    small: { type: 'string', default: '100000' },
    large: { type: 'string', default: '1000000' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '10' },
    writers: { type: 'string', default: '4' },
    'other-writers': { type: 'string', default: '2' },
    'skip-lists': { type: 'boolean', default: false },
    'skip-migrate': { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
});
if (args.help) {
  console.log(HELP);
  process.exit(0);
}
const SMALL = Number(args.small);
const LARGE = Number(args.large);
const TENANT = 'bench-scale';
/** Records per loading transaction beyond the first load (bounded memory). */
const CHUNK = 100_000;

/** An HTTP request without a time limit (fetch gives up after 300 s; a migration of a million records may take longer). */
function send(method: string, url: string, headers: Record<string, string>, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers: { ...headers, 'Content-Type': 'application/json' } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => { text += chunk; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const load = () => loadavg().map((l) => l.toFixed(1)).join(' ');
const percentile = (sorted: number[], p: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] : NaN);

async function listP99(url: string, headers: Record<string, string>) {
  await autocannon({ url, connections: Number(args.connections), duration: 2, headers });
  const r = await autocannon({ url, connections: Number(args.connections), duration: Number(args.duration), headers });
  return { rps: Math.round(r.requests.average), p50: r.latency.p50, p99: r.latency.p99, bad: r.non2xx + r.errors, load: load() };
}

async function benchEngine(engine: Engine): Promise<string[]> {
  console.log(`\n== ${engine}`);
  const lines: string[] = [];
  const db = await makeDatabase(engine);
  const env = { ...serviceEnv(db.url, 0), LOG_LEVEL: 'warn' };
  try {
    let started = Date.now();
    let app = await createApp(loadConfig(env));
    const items = await loadBenchTenant(app, TENANT, SMALL, Date.now() - LARGE * 1000);
    await app.close();
    console.log(`  loaded ${SMALL} records in ${((Date.now() - started) / 1000).toFixed(0)} s`);
    const ids = items.slice(0, 10_000).map((r) => r.id);
    items.length = 0;

    const port = await freePort();
    const admin = jwt.sign({ sub: 'bench-admin', tenant_id: TENANT, roles: ['admin'] }, JWT_SECRET, { algorithm: 'HS256', expiresIn: 7200 });
    const h = { Authorization: `Bearer ${admin}` };
    const base = `http://127.0.0.1:${port}/api/v1`;
    const filtered = `${base}/data/bench/item?limit=50&count=false&filter%5Bcategory%5D=cat-3`;
    let service = args['skip-lists'] ? null : await startProcess('core/main.ts', serviceEnv(db.url, port), port);
    const small = service ? await listP99(filtered, h) : null;
    if (small) console.log(`  ${SMALL}: filtered list of 50 ${small.rps} req/s, p50 ${small.p50} ms, p99 ${small.p99} ms (load ${small.load})`);
    if (service) await stopProcess(service);

    // Up to LARGE records, older than the first ones, in transactions of CHUNK records.
    started = Date.now();
    app = await createApp(loadConfig(env));
    const rc = systemContext(TENANT);
    const schema = await app.kernel.schemas.resolve(rc, BENCH_SCHEMA.namespace, BENCH_SCHEMA.name);
    const oldest = Date.now() - LARGE * 1000 * 2;
    for (let from = SMALL; from < LARGE; from += CHUNK) {
      const chunk = Array.from({ length: Math.min(CHUNK, LARGE - from) }, (_, k) => {
        const at = new Date(oldest + (from + k) * 1000).toISOString();
        return { ...benchBody(from + k), id: newId(), createdAt: at, updatedAt: at, version: 1 };
      });
      await app.kernel.db.transaction(rc, (trx) => app.kernel.records.repository.bulkInsert(trx, schema, chunk));
    }
    await app.kernel.records.repository.analyze(schema);
    await app.close();
    console.log(`  loaded up to ${LARGE} records in ${((Date.now() - started) / 1000).toFixed(0)} s`);

    service = await startProcess('core/main.ts', serviceEnv(db.url, port), port);
    if (small) {
      const large = await listP99(filtered, h);
      console.log(`  ${LARGE}: filtered list of 50 ${large.rps} req/s, p50 ${large.p50} ms, p99 ${large.p99} ms (load ${large.load})`);
      lines.push(`| ${engine} | filtered list of 50 (filter[category], count=false), ${SMALL} records | ${small.rps} req/s, p50 ${small.p50} ms, p99 ${small.p99} ms | load ${small.load} |`);
      lines.push(`| ${engine} | the same at ${LARGE} records | ${large.rps} req/s, p50 ${large.p50} ms, p99 ${large.p99} ms; p99 ratio ${(large.p99 / Math.max(small.p99, 1)).toFixed(2)} (target <= 1.5) | load ${large.load} |`);
    }

    const put = async (version: number, body: object) => {
      const t0 = performance.now();
      const res = await send('PUT', `${base}/metadata/schemas/bench/item`, { ...h, 'If-Match': `"${version}"` }, JSON.stringify(body));
      const ms = performance.now() - t0;
      const text = res.text;
      if (res.status !== 200) throw new Error(`PUT schema: ${res.status} ${text.slice(0, 300)}`);
      return { ms, version: (JSON.parse(text) as { data: { item: { version: number } } }).data.item.version };
    };
    const current = (await (await fetch(`${base}/metadata/schemas/bench/item`, { headers: h })).json()) as { data: { item: { version: number; schema: any; indexes: string[][] } } };
    const def = current.data.item;
    const withColor = { ...def.schema, properties: { ...def.schema.properties, color: { type: 'string' } } };
    const compatible = await put(def.version, { schema: withColor, indexes: def.indexes });
    console.log(`  compatible change (optional property added) at ${LARGE} records: ${compatible.ms.toFixed(0)} ms (load ${load()})`);
    lines.push(`| ${engine} | compatible schema change at ${LARGE} records (optional property added) | ${compatible.ms.toFixed(0)} ms (target < 1000 ms) | load ${load()} |`);

    if (!args['skip-migrate']) {
      const required = { ...withColor, required: [...(withColor.required ?? []), 'status'], properties: { ...withColor.properties, status: { type: 'string', enum: ['active', 'archived'] } } };
      const other = { namespace: 'bench', name: 'note', schema: { type: 'object', required: ['title'], properties: { title: { type: 'string' } } } };
      const created = await send('POST', `${base}/metadata/schemas`, h, JSON.stringify(other));
      if (created.status !== 201) throw new Error(`POST schema: ${created.status} ${created.text.slice(0, 300)}`);
      let writing = true;
      /** Single writes in a loop until the migration answered: latency and status of each. */
      const writes = (count: number, write: (w: number, n: number) => Promise<{ status: number }>) => {
        const seen = { latencies: [] as number[], statuses: new Map<number, number>() };
        const loops = Array.from({ length: count }, async (_, w) => {
          for (let n = 0; writing; n++) {
            const t0 = performance.now();
            // A write whose connection fails counts as status 0.
            const status = await write(w, n).then((res) => res.status, () => 0);
            seen.latencies.push(performance.now() - t0);
            seen.statuses.set(status, (seen.statuses.get(status) ?? 0) + 1);
          }
        });
        return { seen, done: Promise.all(loops) };
      };
      const describe = ({ latencies, statuses }: { latencies: number[]; statuses: Map<number, number> }) => {
        latencies.sort((a, b) => a - b);
        return `${latencies.length} writes (${[...statuses].map(([s, c]) => `${c}x ${s}`).join(', ')}), p50 ${percentile(latencies, 0.5).toFixed(0)} ms, `
          + `p99 ${percentile(latencies, 0.99).toFixed(0)} ms, max ${latencies[latencies.length - 1]?.toFixed(0)} ms`;
      };
      const same = writes(Number(args.writers), (w, n) =>
        send('PATCH', `${base}/data/bench/item/${ids[(w * 7919 + n * 104_729) % ids.length]}`, h, JSON.stringify({ title: `written during the migration ${n}` })));
      const elsewhere = writes(Number(args['other-writers']), (w, n) => send('POST', `${base}/data/bench/note`, h, JSON.stringify({ title: `note ${w}-${n}` })));
      await new Promise((r) => setTimeout(r, 500));
      const migrate = await put(compatible.version, { schema: required, indexes: def.indexes, migrate: { set: { status: 'active' } } });
      writing = false;
      await Promise.all([same.done, elsewhere.done]);
      const perSecond = Math.round(LARGE / (migrate.ms / 1000));
      const summary = `${(migrate.ms / 1000).toFixed(1)} s, ${perSecond} records/s; to the schema: ${describe(same.seen)}; `
        + `to another schema: ${describe(elsewhere.seen)}`;
      console.log(`  incompatible change with migrate at ${LARGE} records: ${summary} (load ${load()})`);
      lines.push(`| ${engine} | incompatible change with migrate at ${LARGE} records (required property set on every record), ${args.writers} + ${args['other-writers']} writers | ${summary} | load ${load()} |`);
    }
    await stopProcess(service);
  } finally {
    await db.drop();
  }
  return lines;
}

const lines = ['| engine | measurement | result | load average (1, 5, 15 min) |', '|---|---|---|---|'];
for (const engine of args.engines!.split(',') as Engine[]) lines.push(...(await benchEngine(engine)));
const md = `Scale benchmark ${new Date().toISOString()}\n\n${lines.join('\n')}\n`;
console.log(`\n${md}`);
mkdirSync(join(ROOT, 'bench-results'), { recursive: true });
const file = join(ROOT, 'bench-results', `scale-${new Date().toISOString().replace(/[:.]/g, '-')}.md`);
writeFileSync(file, md);
console.log(`written to ${file}`);
process.exit(0);
