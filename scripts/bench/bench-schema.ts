import type { SchemaInput } from '../../core/metadata/schema-definition.js';

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
