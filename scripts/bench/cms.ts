/**
 * CMS benchmark (short): time to import the 4-page test site, and knowledge search latency on 10,000
 * entries. Runs against the real app on a fresh database: TEST_DB=sqlite|postgres (default sqlite).
 *   node --import tsx scripts/bench/cms.ts [--entries 10000] [--imports 5] [--searches 200]
 */
import { performance } from 'node:perf_hooks';
import { systemContext } from '../../core/base/request-context.js';
import { createTenant, startTestApp } from '../../test/helpers/test-app.js';
import { as } from '../../test/helpers/tokens.js';
import { startTestSite } from '../../test/packs/cms/test-site.js';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

const summary = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return { n: sorted.length, min: +sorted[0]!.toFixed(2), p50: +percentile(sorted, 50).toFixed(2), p95: +percentile(sorted, 95).toFixed(2), max: +sorted[sorted.length - 1]!.toFixed(2) };
};

const COMMON = ('coffee roast bean espresso grinder kettle filter brew crema latte milk sugar cup mug farm harvest cherry washed natural honey '
  + 'altitude acidity body aroma flavour chocolate caramel citrus berry floral nutty spice sweet bitter fresh origin blend single lot batch '
  + 'shipping order parcel return refund invoice account password login team office river workshop lisbon colombia ethiopia brazil kenya').split(' ');
// A vocabulary of 5,000 words drawn with a Zipf-like skew, as in real text: a few words everywhere, most rare.
const SYLLABLES = 'ka lo mi ne ru sa ti vo be da fe gi ho ju ly po qu ri se to'.split(' ');
const WORDS = [...COMMON, ...Array.from({ length: 5000 - COMMON.length }, (_, i) => {
  let w = '';
  for (let n = i + 400; n > 0; n = Math.floor(n / SYLLABLES.length)) w += SYLLABLES[n % SYLLABLES.length];
  return w;
})];

const app = await startTestApp();
const site = await startTestSite();
try {
  // 1. Import of the 4-page test site (depth 2), each into a fresh tenant.
  const importMs: number[] = [];
  for (let i = 0; i < arg('imports', 5); i++) {
    const tenant = await createTenant(app, 'bench');
    const started = performance.now();
    const res = await app.http.post('/api/v1/cms/import-url').set(as(tenant, 'editor')).send({ url: `${site.url}/`, depth: 2, publish: true });
    importMs.push(performance.now() - started);
    if (res.status !== 200 || res.body.data.pages.length !== 4) throw new Error(`import failed: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
  }

  // 2. 10,000 knowledge entries in one tenant, then searches through the public endpoint.
  const entries = arg('entries', 10_000);
  const tenant = await createTenant(app, 'bench');
  const rc = systemContext(tenant);
  let seed = 42;
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const zipf = () => WORDS[Math.min(WORDS.length - 1, Math.floor(Math.exp(random() * Math.log(WORDS.length + 1)) - 1))]!;
  const text = (n: number) => Array.from({ length: n }, zipf).join(' ');
  const loadStarted = performance.now();
  for (let batch = 0; batch < entries; batch += 500) {
    await app.app.kernel.db.transaction(rc, async (rc) => {
      for (let i = batch; i < Math.min(entries, batch + 500); i++) {
        await app.app.kernel.knowledge.upsertForSource(rc, { sourceModule: 'bench', sourceRef: `doc-${i}`, title: `${text(3)} ${i}`, content: `${text(60)}.\n\n${text(60)}.`, url: `/doc/${i}` });
      }
    });
  }
  const loadMs = performance.now() - loadStarted;
  await app.app.kernel.db.dialect.analyze(app.app.kernel.db.knex, 'knowledge_entries');

  const serviceMs: number[] = [];
  const httpMs: number[] = [];
  for (let i = 0; i < arg('searches', 200); i++) {
    // Half one word, half two words, drawn from the corpus distribution (common words are asked for most).
    const q = random() < 0.5 ? zipf() : `${zipf()} ${zipf()}`;
    let started = performance.now();
    await app.app.kernel.knowledge.search(rc, q, { limit: 10 });
    serviceMs.push(performance.now() - started);
    started = performance.now();
    const res = await app.http.get(`/api/v1/public/tenant/${tenant}/knowledge`).query({ q, limit: 10 });
    httpMs.push(performance.now() - started);
    if (res.status !== 200) throw new Error(`search failed: ${res.status}`);
  }

  console.log(JSON.stringify({
    engine: app.engine,
    importFourPageSiteMs: summary(importMs),
    knowledge: { entries, loadSeconds: +(loadMs / 1000).toFixed(1), searchServiceMs: summary(serviceMs), searchHttpMs: summary(httpMs) },
  }, null, 2));
} finally {
  await site.stop();
  await app.close();
}
