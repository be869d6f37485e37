import { type AppContext, assertIdentifier, type ErrorCode, type PackContext, type PackRouter } from '../../core/pack-api.js';
import { contentItemResponse, contentListResponse } from './cms-responses.js';
import { listContent } from './content-item.routes.js';

const tags = ['cms'];
const errors: ErrorCode[] = ['invalid_identifier', 'schema_not_found', 'module_disabled', 'forbidden', 'tenant_not_found'];

function contentType(ctx: AppContext): string {
  assertIdentifier('contentType', ctx.params.contentType);
  return ctx.params.contentType;
}

/**
 * /tenant/{tenantId}/content/{contentType}: the records of /data/cms/{contentType} in the BFF envelope,
 * with the data API's query language (filter[field][op]=v, sort, limit, offset, cursor, fields, count).
 */
export function contentRoutes(router: PackRouter, pack: PackContext): void {
  router.get('/tenant/:tenantId/content/:contentType', {
    summary: 'List content items of a type (the data API query language; ?locale=, * for every locale, fallback=false)', tags, auth: 'tenant', tenantParam: 'tenantId',
    response: contentListResponse, errors: [...errors, 'invalid_filter', 'invalid_cursor', 'validation_failed'],
  }, (ctx) => listContent(pack, ctx, contentType(ctx)));

  router.post('/tenant/:tenantId/content/:contentType', {
    summary: 'Create a content item (slug generated from the title when absent; draft unless status says otherwise)',
    tags, auth: 'tenant', tenantParam: 'tenantId', role: 'editor', status: 201, idempotent: true, body: { type: 'object' }, response: contentItemResponse,
    errors: [...errors, 'validation_failed', 'conflict'],
  }, async (ctx) => {
    const item = await pack.records.create(ctx.state.rc, 'cms', contentType(ctx), ctx.state.body);
    ctx.set('ETag', `"${item.version}"`);
    return item;
  });
}
