import type { AppContext } from '../http/app-state.js';
import type { ErrorCode, PackRouter } from '../http/route.js';
import type { SchemaRegistry } from '../metadata/schema-registry.js';
import { assertIdentifier } from '../metadata/schema-registry.js';
import type { RecordsService, DataRecord } from './records.service.js';
import { queryFromString, splitLocale } from './list-query.js';
import { successEnvelope } from '../http/envelope.js';
import { PAGE_QUERY_PROPERTIES, pageResponse } from '../http/response-schemas.js';
import type { RevisionQuery } from './records.service.js';
import type { Page } from '../http/envelope.js';
import type { RecordQuery } from './list-query.js';
import type { LocaleChoice } from './locales.js';

/**
 * The content workflow's share of the record routes (core/workflow/, CONTRACT.md 17.1): `POST ?draft=true`
 * creates a draft-only record, `GET ?drafts=include|only` lists with drafts.
 */
export interface RecordDrafts {
  createDraftOnly(rc: AppContext['state']['rc'], namespace: string, name: string, input: unknown, locale: LocaleChoice | null): Promise<unknown>;
  list(rc: AppContext['state']['rc'], namespace: string, name: string, mode: unknown, query: RecordQuery, locale: LocaleChoice | null): Promise<Page<Record<string, unknown>>>;
}

/** A revision as GET /data/{ns}/{schema}/{id}/revisions lists it (CONTRACT.md 16.3). */
const revisionSchema = {
  type: 'object',
  required: ['version', 'action', 'at', 'actor', 'data'],
  properties: {
    version: { type: 'integer', minimum: 1 },
    action: { type: 'string', enum: ['create', 'update', 'delete'] },
    at: { type: 'string', format: 'date-time' },
    actor: {
      type: 'object', required: ['type', 'id'],
      properties: { type: { type: 'string', enum: ['user', 'token', 'system'] }, id: { type: 'string' }, email: { type: 'string' } },
    },
    data: { type: 'object', description: 'The record after the change; for a delete, the record before it' },
  },
} as const;

/** The namespace and schema of a /data/:ns/:schema route, checked (400 invalid_identifier). */
export function target(ctx: AppContext): readonly [string, string] {
  assertIdentifier('namespace', ctx.params.ns);
  assertIdentifier('schema', ctx.params.schema);
  return [ctx.params.ns, ctx.params.schema] as const;
}

/**
 * The one generic router of the universal data API. The namespace's licensed module gates every route,
 * the schema is resolved first (404 schema_not_found) and the record service does the rest.
 */
export function dataRoutes(router: PackRouter, registry: SchemaRegistry, records: RecordsService, drafts?: RecordDrafts): void {
  const module = (ctx: AppContext) => registry.moduleOf(ctx.params.ns);
  const withEtag = (ctx: AppContext, item: DataRecord) => {
    ctx.set('ETag', `"${item.version}"`);
    return { item };
  };
  const tags = ['data'];
  const errors: ErrorCode[] = ['invalid_identifier', 'schema_not_found', 'module_disabled'];

  // `?locale=` (CONTRACT.md 17.2): the locale whose values of the localised fields a write sets or a read returns.
  const writeLocale = (ctx: AppContext) => records.chooseLocale(ctx.state.rc, { locale: ctx.query.locale, fallback: ctx.query.fallback }, { all: false });
  const readLocale = (ctx: AppContext) => records.chooseLocale(ctx.state.rc, { locale: ctx.query.locale, fallback: ctx.query.fallback });

  router.post('/data/:ns/:schema', {
    summary: 'Create a record (Idempotency-Key honoured; ?locale= names the locale of the localised values); ?draft=true: a draft-only record, `{ item, draft }`',
    tags, auth: 'tenant', role: 'editor', policies: true, module, status: 201, idempotent: true,
    errors: [...errors, 'validation_failed', 'conflict', 'forbidden', 'not_found'],
  }, async (ctx) => {
    const [ns, schema] = target(ctx);
    if (drafts && ctx.query.draft === 'true') return drafts.createDraftOnly(ctx.state.rc, ns, schema, ctx.state.body, await writeLocale(ctx));
    return withEtag(ctx, await records.create(ctx.state.rc, ns, schema, ctx.state.body, { locale: await writeLocale(ctx) }));
  });

  router.get('/data/:ns/:schema', {
    summary: 'List records: filter[field][op]=v, sort, limit, offset, cursor, fields, count, expand, locale, fallback; drafts=include|only (editors)',
    tags, auth: 'tenant', policies: true, module, errors: [...errors, 'invalid_filter', 'invalid_cursor', 'validation_failed', 'forbidden', 'not_found'],
  }, async (ctx) => {
    const [ns, schema] = target(ctx);
    const { drafts: mode, ...rest } = ctx.query;
    const query = queryFromString(splitLocale(rest).rest);
    if (drafts && mode !== undefined) return drafts.list(ctx.state.rc, ns, schema, mode, query, await readLocale(ctx));
    return records.listJson(ctx.state.rc, ns, schema, query, { locale: await readLocale(ctx) });
  });

  router.get('/data/:ns/:schema/:id', {
    summary: 'Read a record (expand=a,b.c embeds referenced records; locale, fallback)', tags, auth: 'tenant', policies: true, module,
    errors: [...errors, 'not_found', 'invalid_filter', 'validation_failed'],
  }, async (ctx) => {
    const [ns, schema] = target(ctx);
    return withEtag(ctx, await records.get(ctx.state.rc, ns, schema, ctx.params.id, { expand: ctx.query.expand, locale: await readLocale(ctx) }));
  });

  router.patch('/data/:ns/:schema/:id', {
    summary: 'Update a record with a JSON merge patch (If-Match optional)', tags, auth: 'tenant', role: 'editor', policies: true, module,
    errors: [...errors, 'not_found', 'validation_failed', 'version_mismatch', 'conflict', 'forbidden'],
  }, async (ctx) => {
    const [ns, schema] = target(ctx);
    const item = await records.update(ctx.state.rc, ns, schema, ctx.params.id, ctx.state.body, { ifMatch: ctx.get('If-Match') || null, locale: await writeLocale(ctx) });
    return withEtag(ctx, item);
  });

  router.delete('/data/:ns/:schema/:id', {
    summary: 'Delete a record (If-Match optional); relations to it are restricted, cleared or cascaded', tags, auth: 'tenant', role: 'editor', policies: true, module,
    errors: [...errors, 'not_found', 'version_mismatch', 'conflict', 'forbidden'],
  }, async (ctx) => {
    const [ns, schema] = target(ctx);
    await records.delete(ctx.state.rc, ns, schema, ctx.params.id, { ifMatch: ctx.get('If-Match') || null });
    return null;
  });

  router.get('/data/:ns/:schema/:id/revisions', {
    summary: 'A record\'s revisions, newest first (also of a deleted record); paged as lists', tags, auth: 'tenant', policies: true, module,
    query: {
      type: 'object', additionalProperties: false,
      properties: PAGE_QUERY_PROPERTIES,
    },
    response: pageResponse(revisionSchema),
    errors: [...errors, 'not_found', 'invalid_cursor', 'validation_failed'],
  }, async (ctx) => {
    const [ns, schema] = target(ctx);
    return records.revisionsOf(ctx.state.rc, ns, schema, ctx.params.id, ctx.state.query as RevisionQuery);
  });

  router.post('/data/:ns/:schema/:id/revisions/:version/restore', {
    summary: 'Restore a revision: its data becomes the record\'s next version (201 when the record was deleted and is created again)',
    description: 'Runs as a write through `/data`: the sealed rule, the current schema version\'s validation (400 naming the path when the '
      + 'revision no longer fits), hooks, relations, a revision of its own and the record event.',
    tags, auth: 'tenant', role: 'editor', policies: true, module, idempotent: true,
    answers: { 201: 'The record was deleted and is created again with the revision\'s data: `{ item }`' },
    response: { type: 'object', required: ['item'], properties: { item: { type: 'object' } } },
    errors: [...errors, 'not_found', 'validation_failed', 'conflict', 'forbidden'],
  }, async (ctx) => {
    const [ns, schema] = target(ctx);
    const version = /^[1-9][0-9]{0,14}$/.test(ctx.params.version) ? Number(ctx.params.version) : Number.NaN;
    const { record, created } = await records.restore(ctx.state.rc, ns, schema, ctx.params.id, version);
    const body = withEtag(ctx, record);
    if (!created) return body;
    ctx.status = 201;
    ctx.body = successEnvelope('jsend', body);
    return undefined;
  });
}
