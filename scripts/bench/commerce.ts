import jwt from 'jsonwebtoken';
import { loadConfig } from '../../config/index.js';
import { createApp } from '../../core/app.js';
import { newId } from '../../core/base/ids.js';
import { systemContext } from '../../core/base/request-context.js';
import type { DataRecord } from '../../core/data/records.repository.js';
import { freePort, JWT_SECRET, makeDatabase, serviceEnv, startProcess, stopProcess, type Engine } from './harness.js';

/** What run.ts measures with (autocannon with a warm-up) and the row it reports. */
export interface Measured {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
}
export type Measure = (label: string, url: string, options?: { method?: 'GET' | 'POST'; headers?: Record<string, string>; body?: string }) => Promise<Measured>;
export interface CommerceRow {
  engine: string;
  scenario: string;
  baseline: Measured | null;
  kernel: Measured;
  target: string;
  met: boolean | null;
}

const SERVICE_TENANT = 'shop-a';
const BASELINE_TENANT = 'shop-b';
/** Stock of the three products the orders take: enough for any run. */
const ORDER_STOCK = 1_000_000_000;

/**
 * Commerce scenarios: placing a 3-line order (stock taken by conditional updates, movements, order number,
 * order, outbox rows, one transaction) and the storefront's product by sku out of `products` products, with
 * and without If-None-Match; the service (core/main.ts) against scripts/bench/commerce-baseline-server.ts
 * doing the same work on the same tables (each on a tenant of its own).
 */
export async function benchCommerce(engine: Engine, products: number, measure: Measure, postgresUrl?: string): Promise<CommerceRow[]> {
  console.log(`\n== ${engine}: commerce (${products} products)`);
  const db = await makeDatabase(engine, postgresUrl);
  try {
    const { baseline, kernel, bPort, kPort, token, json, order, bh, kStore, bStore, etagOf } = await startCommerce(db.url, products);
    try {
      console.log('  comparator = hand-written Koa endpoint on the same tables, service = ERP pack');
      const bOrder = await measure('comparator: place 3-line order', `http://127.0.0.1:${bPort}/orders`, { method: 'POST', headers: { ...bh, ...json }, body: order });
      const kOrder = await measure('service: POST /erp/orders (3 lines)', `http://127.0.0.1:${kPort}/api/v1/erp/orders`, { method: 'POST', headers: { Authorization: `Bearer ${token}`, ...json }, body: order });
      const bRead = await measure('comparator: product by sku', bStore, { headers: bh });
      const kRead = await measure('service: storefront product by sku', kStore);
      const b304 = await measure('comparator: If-None-Match (304)', bStore, { headers: { ...bh, 'If-None-Match': await etagOf(bStore, bh) } });
      const k304 = await measure('service: If-None-Match (304)', kStore, { headers: { 'If-None-Match': await etagOf(kStore) } });
      const ratio = (k: Measured, b: Measured, share: number) => k.rps >= share * b.rps && k.non2xx === 0 && k.errors === 0;
      return [
        { engine, scenario: 'place 3-line order', baseline: bOrder, kernel: kOrder, target: '>= 70% req/s', met: ratio(kOrder, bOrder, 0.7) },
        { engine, scenario: `storefront by sku (${products} products)`, baseline: bRead, kernel: kRead, target: '>= 80% req/s', met: ratio(kRead, bRead, 0.8) },
        // A 304 is not a 2xx: judged on rate alone.
        { engine, scenario: 'storefront If-None-Match (304)', baseline: b304, kernel: k304, target: '304, >= 80% req/s', met: k304.rps >= 0.8 * b304.rps },
      ];
    } finally {
      await stopProcess(baseline);
      await stopProcess(kernel);
    }
  } finally {
    await db.drop();
  }
}

/** The service and the hand-written twin on a database loaded with `products` products, and what the scenarios send. */
export async function startCommerce(url: string, products: number, serviceExtraEnv: Record<string, string> = {}, nodeArgs: string[] = []) {
  const tables = await load(url, products);
  const bPort = await freePort();
  const baseline = await startProcess('scripts/bench/commerce-baseline-server.ts', {
    ...serviceEnv(url, bPort), BENCH_DATABASE_URL: url, ...baselineTables(tables),
  }, bPort, nodeArgs);
  const kPort = await freePort();
  const kernel = await startProcess('core/main.ts', { ...serviceEnv(url, kPort), ...serviceExtraEnv }, kPort, nodeArgs);
  const token = jwt.sign({ sub: 'bench-user', tenant_id: SERVICE_TENANT, roles: ['editor'] }, JWT_SECRET, { algorithm: 'HS256', expiresIn: 3600 });
  const sku = `SKU-${Math.floor(products / 2)}`;
  return {
    baseline, kernel, bPort, kPort, token, tables,
    json: { 'Content-Type': 'application/json' },
    order: JSON.stringify({ clientId: 1, paymentMethod: 'visa_card', items: [1, 2, 3].map((n) => ({ productId: n, quantity: 1, unitPrice: 1999 })) }),
    bh: { 'X-Tenant-Id': BASELINE_TENANT },
    kStore: `http://127.0.0.1:${kPort}/api/v1/public/tenant/${SERVICE_TENANT}/products/${sku}`,
    bStore: `http://127.0.0.1:${bPort}/products/${sku}`,
    etagOf: async (u: string, headers: Record<string, string> = {}) => (await fetch(u, { headers })).headers.get('etag')!,
  };
}

/** The twin's environment naming the record tables it works on. */
export function baselineTables(tables: BenchTables): Record<string, string> {
  return { PRODUCT_TABLE: tables.products, ORDER_TABLE: tables.orders, ORDER_SCHEMA_IDS: JSON.stringify(tables.orderSchemaIds) };
}

/** The record tables of the benchmark, and each tenant's order schema id (the twin keeps its record counter). */
interface BenchTables { products: string; orders: string; orderSchemaIds: Record<string, number> }

/** Two tenants with `count` products each (numbers 1..count; the first three carry the orders' stock). */
async function load(url: string, count: number): Promise<BenchTables> {
  const started = Date.now();
  const app = await createApp(loadConfig({ ...serviceEnv(url, 0), LOG_LEVEL: 'warn' }));
  try {
    const tables: BenchTables = { products: '', orders: '', orderSchemaIds: {} };
    for (const tenantId of [SERVICE_TENANT, BASELINE_TENANT]) {
      await app.kernel.tenants.create(systemContext(null), { id: tenantId, name: tenantId });
      const rc = systemContext(tenantId);
      const schema = await app.kernel.schemas.resolve(rc, 'erp', 'product');
      const orders = await app.kernel.schemas.resolve(rc, 'erp', 'order');
      Object.assign(tables, { products: schema.tableName, orders: orders.tableName });
      tables.orderSchemaIds[tenantId] = orders.id;
      const now = new Date().toISOString();
      const records: DataRecord[] = Array.from({ length: count }, (_, i) => ({
        id: newId(), number: i + 1, sku: `SKU-${i + 1}`, name: `Product ${i + 1}`, description: `The product number ${i + 1}`,
        priceCents: 1999, currency: 'EUR', physicalStock: i < 3 ? ORDER_STOCK : 100, taxRateBasisPoints: 1900, status: 'active',
        createdAt: now, updatedAt: now, version: 1,
      }));
      await app.kernel.db.transaction(rc, async (trx) => {
        await app.kernel.records.repository.bulkInsert(trx, schema, records);
        await app.kernel.db.sql(trx).run(app.kernel.db.query('erp_sequences').insert({ tenant_id: tenantId, name: 'product', value: count }));
      });
      await app.kernel.records.repository.analyze(schema);
    }
    console.log(`  loaded ${count} products for each of 2 tenants in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    return tables;
  } finally {
    await app.close();
  }
}
