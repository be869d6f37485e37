import type { AppContext } from '../http/app-state.js';
import { successEnvelope } from '../http/envelope.js';
import { ValidationFailed } from '../http/errors.js';
import type { PackRouter } from '../http/route.js';
import type { SchemaRegistry } from '../metadata/schema-registry.js';
import { BULK_LIMIT, BulkWriter, itemDetails, ItemsFailed, type ItemError } from './bulk.js';
import { target } from './data.routes.js';
import type { RecordsService } from './records.service.js';

/** A bulk body of 1000 records of a few KiB each. */
const BULK_BODY_LIMIT = 16 * 1024 * 1024;

/**
 * The bulk routes of the data API (CONTRACT.md 12.3). Mounted before the generic record routes, so that
 * `/data/{ns}/{schema}/export` is not read as a record id.
 */
export function bulkRoutes(router: PackRouter, registry: SchemaRegistry, records: RecordsService, db: import('../db/database.js').Database): void {
  const module = (ctx: AppContext) => registry.moduleOf(ctx.params.ns);
  const bulk = new BulkWriter(db, records);
  const tags = ['data'];
  const errors = ['invalid_identifier', 'schema_not_found', 'module_disabled'];

  router.post('/data/:ns/:schema/bulk', {
    summary: 'Create (or, with upsert, create or update) up to 1000 records at once, all or none',
    description: 'Body `{ "items": [ ... ] }`. Every item goes through the validation, hooks and events of a single write, in one transaction. '
      + 'Errors name `/items/<i>/<path>`. With `?upsert=<field>` (a field declared unique on its own) an item whose value is stored already '
      + 'updates that record as a JSON merge patch; the answer is then 200 with `{ items, created, updated }`.',
    tags, auth: 'tenant', role: 'editor', module, status: 201, bodyLimit: BULK_BODY_LIMIT,
    body: {
      type: 'object', required: ['items'], additionalProperties: false,
      properties: { items: { type: 'array', minItems: 1, maxItems: BULK_LIMIT } },
    },
    query: { type: 'object', properties: { upsert: { type: 'string', maxLength: 64 } } },
    response: {
      type: 'object', required: ['items'],
      properties: { items: { type: 'array', items: { type: 'object' } }, created: { type: 'integer' }, updated: { type: 'integer' } },
    },
    errors: [...errors, 'validation_failed', 'conflict', 'payload_too_large'],
  }, async (ctx) => {
    const [ns, name] = target(ctx);
    const rc = ctx.state.rc;
    const schema = await registry.resolve(rc, ns, name);
    const upsert = bulk.upsertField(schema, (ctx.state.query as { upsert?: string }).upsert);
    const items = (ctx.state.body as { items: unknown[] }).items;
    const failed: ItemError[] = [];
    const checked: Array<Record<string, unknown>> = [];
    items.forEach((item, index) => {
      const outcome = bulk.check(schema, item, upsert);
      if ('errors' in outcome) failed.push(...outcome.errors.map((e) => ({ index, ...e })));
      else checked.push(outcome.data);
    });
    if (failed.length) throw itemsFailed(failed, items.length);
    let result;
    try {
      result = await bulk.write(rc, schema, checked, upsert);
    } catch (err) {
      if (err instanceof ItemsFailed) throw itemsFailed(err.errors, items.length);
      throw err;
    }
    if (!upsert) return { items: result.items };
    ctx.status = 200;
    ctx.body = successEnvelope('jsend', result);
    return undefined;
  });
}

function itemsFailed(errors: ItemError[], total: number) {
  const items = new Set(errors.map((e) => e.index)).size;
  return ValidationFailed(`${items} of ${total} items failed; nothing was written`, itemDetails(errors));
}
