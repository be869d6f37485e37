import type { createApp } from '../../core/app.js';
import type { DataRecord } from '../../core/data/records.repository.js';
import { newId } from '../../core/base/ids.js';
import { systemContext } from '../../core/base/request-context.js';
import { BENCH_CATEGORY_SCHEMA, BENCH_LINKED_SCHEMA, BENCH_SCHEMA, BENCH_TAGGED_SCHEMA, benchBody, CATEGORIES } from './bench-schema.js';

type App = Awaited<ReturnType<typeof createApp>>;

/**
 * Creates a tenant with `records` bench.item records (one a second, ending now), and ten bench.category
 * records with `records / 10` bench.linked records that refer to one of them and `records / 10` bench.tagged
 * records that refer to three (the expansion scenarios), loaded directly in one transaction each. Returns
 * the bench.item records.
 */
export async function loadBenchTenant(app: App, tenantId: string, records: number, base: number): Promise<DataRecord[]> {
  await app.kernel.tenants.create(systemContext(null), { id: tenantId, name: tenantId });
  const rc = systemContext(tenantId);
  const items = await insertAll(app, rc, await app.kernel.schemas.registerForTenant(rc, BENCH_SCHEMA),
    Array.from({ length: records }, (_, i) => ({ ...benchBody(i), ...stamp(base, i) })));
  const categories = await insertAll(app, rc, await app.kernel.schemas.registerForTenant(rc, BENCH_CATEGORY_SCHEMA),
    CATEGORIES.map((name) => ({ name, slug: name, ...stamp(base, 0) })));
  await insertAll(app, rc, await app.kernel.schemas.registerForTenant(rc, BENCH_LINKED_SCHEMA),
    Array.from({ length: Math.ceil(records / 10) }, (_, i) => ({ title: `Linked ${i}`, priceCents: i, category: categories[i % categories.length].id, ...stamp(base, i) })));
  await insertAll(app, rc, await app.kernel.schemas.registerForTenant(rc, BENCH_TAGGED_SCHEMA),
    Array.from({ length: Math.ceil(records / 10) }, (_, i) => ({
      title: `Tagged ${i}`, priceCents: i, categories: [0, 3, 7].map((k) => categories[(i + k) % categories.length].id), ...stamp(base, i),
    })));
  return items;
}

function stamp(base: number, i: number) {
  const at = new Date(base + i * 1000).toISOString();
  return { id: newId(), createdAt: at, updatedAt: at, version: 1 };
}

async function insertAll(app: App, rc: ReturnType<typeof systemContext>, schema: Awaited<ReturnType<App['kernel']['schemas']['registerForTenant']>>, records: DataRecord[]): Promise<DataRecord[]> {
  await app.kernel.db.transaction(rc, (trx) => app.kernel.records.repository.bulkInsert(trx, schema, records));
  await app.kernel.records.repository.analyze(schema);
  return records;
}
