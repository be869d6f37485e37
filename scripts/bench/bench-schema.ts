import type { App } from '../../core/app.js';
import { newId } from '../../core/base/ids.js';
import { systemContext } from '../../core/base/request-context.js';
import type { SchemaInput } from '../../core/metadata/schema-definition.js';
import type { CompiledSchema } from '../../core/metadata/schema-registry.js';

/** The schema both sides of the benchmark validate and store. */
export const BENCH_SCHEMA: SchemaInput = {
  namespace: 'bench',
  name: 'item',
  title: 'Benchmark item',
  schema: {
    type: 'object',
    additionalProperties: false,
    required: ['sku', 'title'],
    properties: {
      sku: { type: 'string', minLength: 1, maxLength: 64 },
      title: { type: 'string', minLength: 1, maxLength: 200 },
      priceCents: { type: 'integer', minimum: 0 },
      category: { type: 'string', maxLength: 40 },
      active: { type: 'boolean', default: true },
      tags: { type: 'array', items: { type: 'string', maxLength: 40 }, maxItems: 10 },
    },
  },
  indexes: [['category']],
};

export const CATEGORIES = Array.from({ length: 10 }, (_, i) => `cat-${i}`);

/** A deterministic record body: the i-th of a tenant's load. */
export function benchBody(i: number): Record<string, unknown> {
  return {
    sku: `SKU-${String(i).padStart(7, '0')}`,
    title: `Item number ${i}`,
    priceCents: (i * 37) % 100_000,
    category: CATEGORIES[i % CATEGORIES.length],
    active: i % 3 !== 0,
    tags: ['bench', `t${i % 7}`],
  };
}

/** Relations (CONTRACT.md 12.2): records that refer to one of ten categories, for the expansion scenario. */
export const BENCH_CATEGORY_SCHEMA: SchemaInput = {
  namespace: 'bench',
  name: 'category',
  schema: { type: 'object', additionalProperties: false, properties: { name: { type: 'string' }, slug: { type: 'string' } } },
};

export const BENCH_LINKED_SCHEMA: SchemaInput = {
  namespace: 'bench',
  name: 'linked',
  schema: {
    type: 'object',
    additionalProperties: false,
    required: ['title'],
    properties: {
      title: { type: 'string', maxLength: 200 },
      priceCents: { type: 'integer', minimum: 0 },
      category: { type: 'string', 'x-ref': 'bench.category' },
    },
  },
};

/** A many-relation (CONTRACT.md 12.2): records that refer to three of the ten categories each, for the many-expansion scenario. */
export const BENCH_TAGGED_SCHEMA: SchemaInput = {
  namespace: 'bench',
  name: 'tagged',
  schema: {
    type: 'object',
    additionalProperties: false,
    required: ['title'],
    properties: {
      title: { type: 'string', maxLength: 200 },
      priceCents: { type: 'integer', minimum: 0 },
      categories: { type: 'array', items: { type: 'string' }, maxItems: 10, 'x-ref': 'bench.category' },
    },
  },
};

/**
 * A tenant with `records` bench items, written through the repository in batches of 20 000 (created 10 ms apart,
 * the oldest first), its table analysed: the load of the list and export benchmarks.
 */
export async function loadBenchItems(app: App, tenant: string, records: number): Promise<CompiledSchema> {
  await app.kernel.tenants.create(systemContext(null), { id: tenant, name: tenant });
  const rc = systemContext(tenant);
  const schema = await app.kernel.schemas.registerForTenant(rc, BENCH_SCHEMA);
  const base = Date.now() - records * 10;
  for (let from = 0; from < records; from += 20_000) {
    const batch = Array.from({ length: Math.min(20_000, records - from) }, (_, i) => {
      const at = new Date(base + (from + i) * 10).toISOString();
      return { id: newId(), ...benchBody(from + i), createdAt: at, updatedAt: at, version: 1 };
    });
    await app.kernel.db.transaction(rc, (trx) => app.kernel.records.repository.bulkInsert(trx, schema, batch));
  }
  await app.kernel.records.repository.analyze(schema);
  return schema;
}
