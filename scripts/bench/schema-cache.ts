import { parseArgs } from 'node:util';
import type { Database } from '../../core/db/database.js';
import { systemContext } from '../../core/base/request-context.js';
import type { RegisteredSchema } from '../../core/metadata/schema-definition.js';
import { SCHEMA_CACHE_MAX, SchemaRegistry } from '../../core/metadata/schema-registry.js';

/**
 * npm run bench:schema-cache [-- --schemas 10000]
 *
 * Memory of the compiled-schema cache when `schemas` tenant schemas have been used: the registry with its
 * bounded LRU (SCHEMA_CACHE_MAX) against the same registry holding every schema (bound = schemas). Each
 * schema is a realistic content type (a dozen fields) compiled by ajv, as a first request for it does.
 * Heap is measured after a full GC (run with --expose-gc, as the npm script does).
 */
const { values: args } = parseArgs({ options: { schemas: { type: 'string', default: '10000' } } });
const COUNT = Number(args.schemas);

function schemaOf(i: number): RegisteredSchema {
  const properties: Record<string, unknown> = {
    title: { type: 'string', minLength: 1, maxLength: 200 },
    status: { type: 'string', enum: ['draft', 'published', 'archived'], default: 'draft' },
    price: { type: 'integer', minimum: 0 },
    tags: { type: 'array', items: { type: 'string', maxLength: 40 }, maxItems: 20 },
    address: { type: 'object', properties: { street: { type: 'string' }, city: { type: 'string' }, zip: { type: 'string', pattern: '^[0-9]{5}$' } } },
  };
  for (let f = 0; f < 8; f++) properties[`field_${f}_${i}`] = { type: 'string', maxLength: 500 };
  return {
    id: i, tenantId: `tenant-${i}`, namespace: 'bench', name: `type_${i}`, version: 1, scope: 'tenant', title: '', description: '',
    schema: { type: 'object', additionalProperties: false, required: ['title'], properties },
    indexes: [], unique: [], workflow: null, tableName: `rec_${i}`, createdAt: '', updatedAt: '',
  };
}

function heapMb(): number {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().heapUsed / 1024 / 1024;
}

/** Uses `COUNT` schemas through a registry whose cache holds at most `bound`; returns the heap growth in MB. */
function measure(bound: number): { mb: number; cached: number; ms: number } {
  const before = heapMb();
  const started = Date.now();
  const registry = new SchemaRegistry({} as Database, bound);
  // The registry's own path for a schema read from the database: compile, then remember (outside a transaction).
  const internals = registry as unknown as {
    compile(schema: Record<string, unknown>): unknown;
    remember(rc: unknown, schema: RegisteredSchema, validate: unknown): unknown;
  };
  const rc = systemContext(null);
  for (let i = 0; i < COUNT; i++) {
    const schema = schemaOf(i);
    internals.remember(rc, schema, internals.compile(schema.schema));
  }
  const ms = Date.now() - started;
  const mb = heapMb() - before;
  const cached = registry.cachedCount;
  return { mb, cached, ms };
}

if (!(globalThis as { gc?: unknown }).gc) console.warn('run with node --expose-gc for exact figures');
const unbounded = measure(COUNT);
const bounded = measure(SCHEMA_CACHE_MAX);
console.log(`${COUNT} schemas used, compiled by ajv`);
console.log(`  every schema kept:        ${unbounded.cached} cached, heap +${unbounded.mb.toFixed(1)} MB (${unbounded.ms} ms)`);
console.log(`  LRU bound ${SCHEMA_CACHE_MAX}:         ${bounded.cached} cached, heap +${bounded.mb.toFixed(1)} MB (${bounded.ms} ms)`);
console.log(`  per schema:               ${((unbounded.mb * 1024) / COUNT).toFixed(1)} KB`);
