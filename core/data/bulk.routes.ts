import type { Config } from '../../config/index.js';
import type { Database } from '../db/database.js';
import type { AppContext } from '../http/app-state.js';
import { successEnvelope } from '../http/envelope.js';
import { PayloadTooLarge } from '../base/errors.js';
import type { ErrorCode, PackRouter } from '../http/route.js';
import type { SchemaRegistry } from '../metadata/schema-registry.js';
import { BULK_LIMIT, type BulkWriter } from './bulk.js';
import { target } from './data.routes.js';
import { RecordTransfer, transferFormat } from './import-export.js';
import type { RecordsService } from './records.service.js';

/** A bulk body of 1000 records of a few KiB each. */
const BULK_BODY_LIMIT = 16 * 1024 * 1024;

/**
 * The bulk routes of the data API (CONTRACT.md 12.3). Mounted before the generic record routes, so that
 * `/data/{ns}/{schema}/export` is not read as a record id.
 */
export function bulkRoutes(router: PackRouter, registry: SchemaRegistry, records: RecordsService, bulk: BulkWriter, db: Database, config: Config): void {
  const module = (ctx: AppContext) => registry.moduleOf(ctx.params.ns);
  const transfer = new RecordTransfer(db, registry, records, bulk);
  const tags = ['data'];
  const errors: ErrorCode[] = ['invalid_identifier', 'schema_not_found', 'module_disabled'];

  router.post('/data/:ns/:schema/bulk', {
    summary: 'Create (or, with upsert, create or update) up to 1000 records at once, all or none',
    description: 'Body `{ "items": [ ... ] }`. Every item goes through the validation, hooks and events of a single write, in one transaction. '
      + 'Errors name `/items/<i>/<path>`. With `?upsert=<field>` (a field declared unique on its own) an item whose value is stored already '
      + 'updates that record as a JSON merge patch; the answer is then 200 with `{ items, created, updated }`.',
    tags, auth: 'tenant', role: 'editor', policies: true, module, status: 201, bodyLimit: BULK_BODY_LIMIT, idempotent: true,
    answers: { 200: 'With upsert: `{ items, created, updated }`' },
    body: {
      type: 'object', required: ['items'], additionalProperties: false,
      properties: { items: { type: 'array', minItems: 1, maxItems: BULK_LIMIT, items: { type: 'object', description: 'A record, as for a single create (with upsert: as its merge patch)' } } },
    },
    query: { type: 'object', properties: { upsert: { type: 'string', maxLength: 64 } } },
    response: {
      type: 'object', required: ['items'],
      properties: { items: { type: 'array', items: { type: 'object' } }, created: { type: 'integer' }, updated: { type: 'integer' } },
    },
    errors: [...errors, 'validation_failed', 'conflict', 'payload_too_large', 'forbidden'],
  }, async (ctx) => {
    const [ns, name] = target(ctx);
    const upsert = (ctx.state.query as { upsert?: string }).upsert ?? null;
    const result = await bulk.writeAll(ctx.state.rc, ns, name, (ctx.state.body as { items: unknown[] }).items, { upsert });
    if (!upsert) return { items: result.items };
    ctx.status = 200;
    ctx.body = successEnvelope('jsend', result);
    return undefined;
  });

  router.get('/data/:ns/:schema/export', {
    summary: 'Export every record matching the list\'s filters and sort, as NDJSON or CSV (streamed, no page limit)',
    description: 'Takes the list\'s `filter[...]` and `sort` (paging parameters are ignored). NDJSON: one record per line, as the API returns it. '
      + 'CSV: a header row `id`, the schema\'s top-level properties, `createdAt`, `updatedAt`, `version`; nested values as JSON text.',
    tags, auth: 'tenant', policies: true, module, produces: ['application/x-ndjson', 'text/csv'],
    // The list's filters and sort go to the export as they came (paging parameters too, which it ignores).
    query: {
      type: 'object',
      patternProperties: { '^filter\\[': { type: 'string' } },
      properties: { format: { type: 'string', enum: ['ndjson', 'csv'], default: 'ndjson' }, sort: { type: 'string' } },
    },
    errors: [...errors, 'invalid_filter', 'validation_failed'],
  }, async (ctx) => {
    const [ns, name] = target(ctx);
    const format = transferFormat((ctx.state.query as { format?: string }).format);
    const schema = await registry.resolve(ctx.state.rc, ns, name);
    const stream = await transfer.export(ctx.state.rc, schema, ctx.query, format);
    ctx.status = 200;
    ctx.type = format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8';
    ctx.set('Content-Disposition', `attachment; filename="${ns}-${name}.${format}"`);
    ctx.body = stream;
    return undefined;
  });

  router.post('/data/:ns/:schema/import', {
    summary: 'Import records from an NDJSON or CSV body (streamed, written in batches of up to 1000)',
    description: 'Each record is validated on its own and written through the hooks and events of a single write. The answer counts '
      + '`created`, `updated` and `failed` and lists up to 100 `errors` `{ line, path, message, code }` (`line` counts records from 1; a CSV header '
      + 'is not counted; `code` is validation_failed, invalid_json, conflict or forbidden; a line nested deeper than 64 levels, or with a '
      + 'NUL or a lone surrogate, fails on its own). CSV values are read as the schema types them, objects and arrays as JSON text. `id`, `createdAt`, `updatedAt` '
      + 'and `version` in the input are ignored, so an export imports back. `?upsert=<field>` updates records whose unique value is stored; '
      + '`?atomic=true` writes nothing when any record fails (400 `validation_failed` with the errors). Body up to IMPORT_MAX_BYTES.',
    tags, auth: 'tenant', role: 'editor', policies: true, module, body: 'raw',
    query: {
      type: 'object',
      properties: { format: { type: 'string', enum: ['ndjson', 'csv'], default: 'ndjson' }, upsert: { type: 'string', maxLength: 64 }, atomic: { type: 'boolean', default: false } },
    },
    response: {
      type: 'object', required: ['created', 'updated', 'failed', 'errors'],
      properties: {
        created: { type: 'integer' }, updated: { type: 'integer' }, failed: { type: 'integer' },
        errors: { type: 'array', items: { type: 'object', properties: {
          line: { type: 'integer' }, path: { type: 'string' }, message: { type: 'string' },
          code: { type: 'string', enum: ['validation_failed', 'invalid_json', 'conflict', 'forbidden'] },
        } } },
      },
    },
    errors: [...errors, 'validation_failed', 'payload_too_large', 'forbidden'],
  }, async (ctx) => {
    const [ns, name] = target(ctx);
    const query = ctx.state.query as { format?: string; upsert?: string; atomic?: boolean };
    const format = transferFormat(query.format);
    const schema = await registry.resolve(ctx.state.rc, ns, name);
    const length = ctx.request.length;
    if (length !== undefined && length > config.importMaxBytes) throw PayloadTooLarge(config.importMaxBytes, [], { Connection: 'close' });
    return transfer.import(ctx.state.rc, schema, ctx.req, { format, upsert: query.upsert ?? null, atomic: query.atomic === true, maxBytes: config.importMaxBytes });
  });
}

