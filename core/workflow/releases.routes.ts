import type { PackRouter } from '../http/route.js';
import { LIST_LIMITS, OFFSET_QUERY, pageResponse } from '../http/response-schemas.js';
import { IDENTIFIER } from '../metadata/schema-definition.js';
import { releaseView, type ReleasesService } from './releases.service.js';

const itemError = {
  type: 'object', required: ['namespace', 'schema', 'id', 'code', 'message'],
  properties: { path: { type: 'string' }, namespace: { type: 'string' }, schema: { type: 'string' }, id: { type: 'string' }, code: { type: 'string' }, message: { type: 'string' } },
} as const;

/** A release (CONTRACT.md 17.3). */
const releaseSchema = {
  type: 'object',
  required: ['id', 'name', 'description', 'status', 'items', 'scheduledAt', 'publishedAt', 'errors', 'createdAt'],
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    description: { type: 'string' },
    status: { type: 'string', enum: ['open', 'scheduled', 'published', 'failed', 'rolled_back'] },
    items: {
      type: 'array',
      items: {
        type: 'object', required: ['id', 'namespace', 'schema', 'version'],
        properties: {
          id: { type: 'string', description: 'The record\'s id' }, namespace: { type: 'string' }, schema: { type: 'string' },
          version: { type: ['integer', 'null'], description: 'The live version the publish made; null until published' },
        },
      },
    },
    scheduledAt: { type: ['string', 'null'], format: 'date-time' },
    publishedAt: { type: ['string', 'null'], format: 'date-time' },
    errors: { type: 'array', items: itemError, description: 'Why a scheduled publish failed (status failed)' },
    createdAt: { type: 'string', format: 'date-time' },
  },
} as const;

const identifier = { type: 'string', pattern: IDENTIFIER.source, 'x-error': 'invalid_identifier' } as const;

/** /releases (CONTRACT.md 17.3): drafts of several records published together, scheduled and rolled back. */
export function releasesRoutes(router: PackRouter, releases: ReleasesService): void {
  const tags = ['releases'];
  const one = '/releases/:id';

  router.post('/releases', {
    summary: 'Create a release (open): drafts are bound to it, then published together', tags, auth: 'tenant', role: 'editor', status: 201,
    body: {
      type: 'object', required: ['name'], additionalProperties: false,
      properties: { name: { type: 'string', minLength: 1, maxLength: 200 }, description: { type: 'string', maxLength: 2000 } },
    },
    response: releaseSchema, errors: ['validation_failed'],
  }, async (ctx) => releaseView(await releases.create(ctx.state.rc, ctx.state.body)));

  router.get('/releases', {
    summary: 'The tenant\'s releases, newest first', tags, auth: 'tenant',
    query: {
      type: 'object', additionalProperties: false,
      properties: { limit: { type: 'integer', minimum: 1, maximum: LIST_LIMITS.maxLimit, default: LIST_LIMITS.defaultLimit }, offset: OFFSET_QUERY },
    },
    response: pageResponse(releaseSchema), errors: ['validation_failed'],
  }, async (ctx) => {
    const page = await releases.list(ctx.state.rc, ctx.state.query as { limit?: number; offset?: number });
    return { items: page.items.map(releaseView), pagination: page.pagination };
  });

  router.get(one, {
    summary: 'Read a release with its items', tags, auth: 'tenant', response: releaseSchema, errors: ['not_found'],
  }, async (ctx) => releaseView(await releases.get(ctx.state.rc, ctx.params.id)));

  router.post(`${one}/items`, {
    summary: 'Bind a record\'s current draft to the release (409 when it is in another release; 400 without a draft)', tags, auth: 'tenant', role: 'editor',
    body: {
      type: 'object', required: ['namespace', 'schema', 'id'], additionalProperties: false,
      properties: { namespace: identifier, schema: identifier, id: { type: 'string', maxLength: 36 } },
    },
    response: releaseSchema, errors: ['validation_failed', 'invalid_identifier', 'schema_not_found', 'not_found', 'conflict'],
  }, async (ctx) => releaseView(await releases.addItem(ctx.state.rc, ctx.params.id, ctx.state.body)));

  router.delete(`${one}/items/:recordId`, {
    summary: 'Take a record\'s draft out of the release (the draft stays)', tags, auth: 'tenant', role: 'editor',
    response: releaseSchema, errors: ['not_found', 'conflict'],
  }, async (ctx) => releaseView(await releases.removeItem(ctx.state.rc, ctx.params.id, ctx.params.recordId)));

  router.post(`${one}/publish`, {
    summary: 'Publish every draft of the release in one transaction, all or none (409 naming the items); with { at }, at that time',
    description: 'Each item is written through the one write path with its own record events; then `release.published`. '
      + 'A scheduled release is published within 30 s after `at`, once; when it cannot be, it is left `failed` with `errors`, nothing published.',
    tags, auth: 'tenant', role: 'admin',
    body: { type: 'object', additionalProperties: false, properties: { at: { type: 'string', format: 'date-time' } } },
    response: releaseSchema, errors: ['validation_failed', 'not_found', 'conflict'],
  }, async (ctx) => {
    const { at } = ctx.state.body;
    return releaseView(at === undefined ? await releases.publish(ctx.state.rc, ctx.params.id) : await releases.schedule(ctx.state.rc, ctx.params.id, at));
  });

  router.delete(`${one}/schedule`, {
    summary: 'Unschedule a scheduled release (it is open again)', tags, auth: 'tenant', role: 'admin', response: releaseSchema, errors: ['not_found', 'conflict'],
  }, async (ctx) => releaseView(await releases.unschedule(ctx.state.rc, ctx.params.id)));

  router.post(`${one}/rollback`, {
    summary: 'Put every item back to its live version from before the release, in one transaction (409 naming items changed since, unless force)',
    description: 'New versions through the one write path (events, hooks, revisions, knowledge, caches); a record the release created is deleted. '
      + 'Then `release.rolled_back` with each record\'s live version after it (null when deleted).',
    tags, auth: 'tenant', role: 'admin',
    body: { type: 'object', additionalProperties: false, properties: { force: { type: 'boolean' } } },
    response: releaseSchema, errors: ['not_found', 'conflict', 'validation_failed'],
  }, async (ctx) => releaseView(await releases.rollback(ctx.state.rc, ctx.params.id, ctx.state.body.force === true)));
}
