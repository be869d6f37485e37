import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import jwt from 'jsonwebtoken';
import pino from 'pino';
import { loadConfig } from '../../config/index.js';
import { createApp, type App } from '../../core/app.js';
import { createLogger } from '../../core/base/logger.js';
import { packModulesOf } from '../../core/kernel/pack-loader.js';
import { countOperations } from '../../core/openapi/openapi.builder.js';
import { OpenApiService } from '../../core/openapi/openapi.service.js';

/**
 * node --import tsx scripts/bench/observability.ts [seconds] [rounds]:
 * the cost of request logging and HTTP metrics on the data API. Two apps run in this process on their own
 * SQLite files: one with LOG_LEVEL=info (JSON lines to a file, as in production) and HTTP metrics, one with
 * LOG_LEVEL=silent and the metrics middleware off. Each round measures create (POST) and list (GET) on
 * both, alternating, so that drift of a shared machine hits both alike; the median of the rounds is reported,
 * as throughput and as process CPU time per request (less sensitive to other load on the machine).
 * Also reports the OpenAPI document's size and number of operations. Results go to bench-results/.
 */

interface AutocannonResult {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number };
  non2xx: number;
  errors: number;
}
type Autocannon = (options: Record<string, unknown>) => Promise<AutocannonResult>;
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

const seconds = Number(process.argv[2] ?? 4);
const rounds = Number(process.argv[3] ?? 3);
const connections = 10;
const JWT_SECRET = 'bench-jwt-secret-0123456789abcdef';
const TENANT = 'bench';

interface Variant {
  name: 'with' | 'without';
  app: App;
  url: string;
  dir: string;
}

async function startVariant(name: Variant['name']): Promise<Variant> {
  const dir = mkdtempSync(join(tmpdir(), `hp-bench-obs-${name}-`));
  const config = loadConfig({
    NODE_ENV: 'test', DATABASE_URL: `sqlite:${join(dir, 'bench.db')}`, AUTH_JWT_SECRET: JWT_SECRET, TEST_API_KEY: 'bench-test-key-0123',
    LOG_LEVEL: name === 'with' ? 'info' : 'silent', STORAGE_DIR: join(dir, 'storage'), DISPATCHER_ENABLED: 'false',
  });
  const logger = createLogger(config, pino.destination({ dest: join(dir, 'requests.log'), sync: false }));
  const app = await createApp(config, { logger, httpMetrics: name === 'with' });
  const server = await app.listen(0, '127.0.0.1');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const key = { Authorization: 'Bearer bench-test-key-0123', 'Content-Type': 'application/json' };
  await post(`${url}/api/v1/admin/tenants`, key, { id: TENANT, name: 'Bench' });
  await post(`${url}/api/v1/metadata/schemas`, { ...key, 'X-Tenant-Id': TENANT }, {
    namespace: 'shop', name: 'product',
    schema: {
      type: 'object', required: ['sku', 'title'], additionalProperties: false,
      properties: { sku: { type: 'string' }, title: { type: 'string' }, priceCents: { type: 'integer', minimum: 0 }, active: { type: 'boolean' } },
    },
    indexes: [['priceCents']],
  });
  return { name, app, url, dir };
}

async function post(url: string, headers: Record<string, string>, body: unknown): Promise<void> {
  const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body) });
  if (res.status !== 201) throw new Error(`POST ${url}: ${res.status} ${await res.text()}`);
}

const token = jwt.sign({ sub: 'bench-user', tenant_id: TENANT, roles: ['editor'] }, JWT_SECRET, { algorithm: 'HS256', expiresIn: 3600 });
const headers = { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' };

const scenarios = {
  create: (v: Variant) => ({
    url: `${v.url}/api/v1/data/shop/product`, method: 'POST', headers,
    body: JSON.stringify({ sku: 'SKU-1', title: 'Desk lamp', priceCents: 4900, active: true }),
  }),
  list: (v: Variant) => ({ url: `${v.url}/api/v1/data/shop/product?limit=20&filter[active]=true&sort=-createdAt`, method: 'GET', headers }),
};

type Scenario = keyof typeof scenarios;

/** One run, with the process CPU time per request (server and load generator share this process). */
async function measure(v: Variant, scenario: Scenario): Promise<AutocannonResult & { cpuMicros: number }> {
  const cpu = process.cpuUsage();
  const result = await autocannon({ ...scenarios[scenario](v), connections, duration: seconds });
  const used = process.cpuUsage(cpu);
  if (result.non2xx || result.errors) throw new Error(`${scenario} on ${v.name}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return { ...result, cpuMicros: (used.user + used.system) / Math.max(1, result.requests.total) };
}

/** The two costs in isolation: one access-log line (real logger, to a file) and one metrics observation. */
function isolatedCosts(v: Variant): { logLineMicros: number; metricsMicros: number } {
  const line = {
    requestId: '0190a3b2-1234-7abc-8def-0123456789ab', method: 'GET', route: '/api/v1/data/:ns/:schema',
    path: '/api/v1/data/shop/product', status: 200, ms: 3.2, tenantId: TENANT, userId: 'bench-user',
  };
  const n = 50_000;
  let started = process.hrtime.bigint();
  for (let i = 0; i < n; i += 1) v.app.logger.info(line, 'request');
  const logLineMicros = Number(process.hrtime.bigint() - started) / n / 1000;
  started = process.hrtime.bigint();
  for (let i = 0; i < n; i += 1) v.app.kernel.metrics.observeRequest('GET', '/api/v1/data/:ns/:schema', 200, 0.004);
  const metricsMicros = Number(process.hrtime.bigint() - started) / n / 1000;
  return { logLineMicros, metricsMicros };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

const variants = [await startVariant('with'), await startVariant('without')];
try {
  // Warm up both (JIT, SQLite page cache, a few hundred rows to list).
  for (const v of variants) for (const s of ['create', 'list'] as Scenario[]) await autocannon({ ...scenarios[s](v), connections, duration: 1 });

  const samples: Record<Scenario, Record<Variant['name'], Array<AutocannonResult & { cpuMicros: number }>>> = {
    create: { with: [], without: [] }, list: { with: [], without: [] },
  };
  for (let round = 0; round < rounds; round += 1) {
    for (const s of ['create', 'list'] as Scenario[]) {
      const order = round % 2 === 0 ? variants : [...variants].reverse();
      for (const v of order) samples[s][v.name].push(await measure(v, s));
    }
  }

  const openapi = new OpenApiService({
    routes: variants[0].app.routes, config: variants[0].app.config, schemas: variants[0].app.kernel.schemas,
    tenants: variants[0].app.kernel.tenants, packModules: packModulesOf(variants[0].app.packs),
  });
  const platform = openapi.platformDocument();
  const tenantDoc = await openapi.tenantDocument({ tenantId: TENANT, principal: null, requestId: 'bench' });

  const lines = [
    `Observability overhead on the data API (${rounds} rounds of ${seconds} s, ${connections} connections, SQLite, median of rounds)`,
    '',
    '| scenario | with logs+metrics req/s | without req/s | throughput overhead | CPU µs/request with / without | CPU overhead | p50 with / without (ms) | p99 with / without (ms) |',
    '|---|---|---|---|---|---|---|---|',
  ];
  const summary: Record<string, unknown> = {};
  for (const s of ['create', 'list'] as Scenario[]) {
    const withRps = median(samples[s].with.map((r) => r.requests.average));
    const withoutRps = median(samples[s].without.map((r) => r.requests.average));
    const overhead = ((withoutRps - withRps) / withoutRps) * 100;
    const p = (name: Variant['name'], key: 'p50' | 'p99') => median(samples[s][name].map((r) => r.latency[key]));
    const withCpu = median(samples[s].with.map((r) => r.cpuMicros));
    const withoutCpu = median(samples[s].without.map((r) => r.cpuMicros));
    const cpuOverhead = ((withCpu - withoutCpu) / withoutCpu) * 100;
    lines.push(`| ${s} | ${withRps.toFixed(0)} | ${withoutRps.toFixed(0)} | ${overhead.toFixed(1)} % | ${withCpu.toFixed(0)} / ${withoutCpu.toFixed(0)} | ${cpuOverhead.toFixed(1)} % `
      + `| ${p('with', 'p50')} / ${p('without', 'p50')} | ${p('with', 'p99')} / ${p('without', 'p99')} |`);
    summary[s] = {
      withRps, withoutRps, overheadPercent: Number(overhead.toFixed(2)),
      cpuMicrosPerRequest: { with: Math.round(withCpu), without: Math.round(withoutCpu), overheadPercent: Number(cpuOverhead.toFixed(2)) },
      rounds: { with: samples[s].with.map((r) => r.requests.average), without: samples[s].without.map((r) => r.requests.average) },
    };
  }
  const isolated = isolatedCosts(variants[0]);
  lines.push('', `In isolation: one request log line ${isolated.logLineMicros.toFixed(1)} µs, one metrics observation ${isolated.metricsMicros.toFixed(1)} µs.`);
  summary.isolatedMicros = { logLine: Number(isolated.logLineMicros.toFixed(2)), metrics: Number(isolated.metricsMicros.toFixed(2)) };
  const platformBytes = Buffer.byteLength(JSON.stringify(platform));
  const tenantBytes = Buffer.byteLength(JSON.stringify(tenantDoc));
  lines.push(
    '',
    `OpenAPI platform document: ${countOperations(platform)} operations, ${platformBytes} bytes (compact JSON)`,
    `OpenAPI tenant document (platform + ${TENANT}'s shop.product and the platform schemas): ${countOperations(tenantDoc)} operations, ${tenantBytes} bytes`,
  );
  summary.openapi = { platform: { operations: countOperations(platform), bytes: platformBytes }, tenant: { operations: countOperations(tenantDoc), bytes: tenantBytes } };
  console.log(lines.join('\n'));
  mkdirSync('bench-results', { recursive: true });
  writeFileSync(join('bench-results', 'observability.json'), `${JSON.stringify({ seconds, rounds, connections, ...summary }, null, 2)}\n`);
} finally {
  for (const v of variants) {
    await v.app.close();
    rmSync(v.dir, { recursive: true, force: true });
  }
}
