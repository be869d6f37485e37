/**
 * Publishing a release of 1,000 items (CONTRACT.md 17.3; target under 2 s on each engine): 1,000 live records of a
 * workflow schema, a draft of each, all bound to one release, then POST /releases/{id}/publish timed (every item
 * checked, then written in one transaction through the one write path, with its record events and the
 * release.published event).
 *
 *   node --import tsx scripts/bench/release-publish.ts [sqlite|postgres|both] [items=1000]
 *
 * One app (createApp, production logging off) on a scratch database; PostgreSQL from BENCH_POSTGRES_URL.
 * BENCH_CPU_PROFILE=<dir>: a CPU profile of the publish alone (<dir>/release-<engine>.cpuprofile), for DevTools.
 */
import { writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import type { AddressInfo } from 'node:net';
import { loadConfig } from '../../config/index.js';
import { createApp } from '../../core/app.js';
import { makeDatabase, type Engine } from './harness.js';

const [engineArg = 'both', itemsArg = '1000'] = process.argv.slice(2);
const ITEMS = Number(itemsArg);
const KEY = 'bench-key-0123456789abcdef';
const CLIENTS = 4;

const SCHEMA = {
  namespace: 'bench', name: 'page', workflow: { drafts: true },
  schema: { type: 'object', required: ['title'], properties: { title: { type: 'string', maxLength: 200 }, content: { type: 'string' }, rank: { type: 'integer' } } },
};

async function run(engine: Engine) {
  const db = await makeDatabase(engine);
  const app = await createApp(loadConfig({
    NODE_ENV: 'test', DATABASE_URL: db.url, TEST_API_KEY: KEY, LOG_LEVEL: 'silent', DISPATCHER_ENABLED: 'false', PORT: '0', HOST: '127.0.0.1',
  }));
  const server = await app.listen(0, '127.0.0.1');
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`;
  const headers = { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json', 'X-Tenant-Id': 'bench' };
  const send = async (method: string, path: string, body: unknown, expect: number) => {
    const res = await fetch(`${base}${path}`, { method, headers, body: JSON.stringify(body) });
    const text = await res.text();
    if (res.status !== expect) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
    return JSON.parse(text);
  };
  /** Runs `each` over the ids from CLIENTS concurrent clients. */
  const over = async (ids: string[], each: (id: string, i: number) => Promise<unknown>) => {
    let next = 0;
    await Promise.all(Array.from({ length: CLIENTS }, async () => {
      while (next < ids.length) {
        const i = next++;
        await each(ids[i], i);
      }
    }));
  };
  try {
    await send('POST', '/admin/tenants', { id: 'bench', name: 'Bench' }, 201);
    await send('POST', '/metadata/schemas', SCHEMA, 201);
    const ids: string[] = [];
    for (let from = 0; from < ITEMS; from += 1000) {
      const items = Array.from({ length: Math.min(1000, ITEMS - from) }, (_, i) => ({ title: `Page ${from + i}`, content: 'Live text.', rank: from + i }));
      const created = await send('POST', '/data/bench/page/bulk', { items }, 201);
      ids.push(...created.data.items.map((item: { id: string }) => item.id));
    }
    await over(ids, (id, i) => send('PUT', `/data/bench/page/${id}/draft`, { content: `Campaign text ${i}.` }, 200));
    const release = (await send('POST', '/releases', { name: 'Bench' }, 201)).data;
    await over(ids, (id) => send('POST', `/releases/${release.id}/items`, { namespace: 'bench', schema: 'page', id }, 200));

    const profile = process.env.BENCH_CPU_PROFILE ? new Session() : null;
    if (profile) {
      profile.connect();
      await profile.post('Profiler.enable');
      await profile.post('Profiler.start');
    }
    const started = performance.now();
    const published = (await send('POST', `/releases/${release.id}/publish`, {}, 200)).data;
    const ms = performance.now() - started;
    if (profile) {
      const { profile: taken } = await profile.post('Profiler.stop');
      await writeFile(`${process.env.BENCH_CPU_PROFILE}/release-${engine}.cpuprofile`, JSON.stringify(taken));
      profile.disconnect();
    }
    if (published.status !== 'published' || published.items.length !== ITEMS) throw new Error(`unexpected release: ${published.status}, ${published.items.length} items`);
    console.log(`${engine.padEnd(8)} publish of a release of ${ITEMS} items: ${Math.round(ms)} ms (target < 2000 ms)`);
  } finally {
    await app.close();
    await db.drop();
  }
}

const engines: Engine[] = engineArg === 'both' ? ['sqlite', 'postgres'] : [engineArg as Engine];
console.log(`load: ${(await import('node:os')).loadavg().map((l) => l.toFixed(2)).join(' ')} (1, 5, 15 min)`);
for (const engine of engines) await run(engine);
