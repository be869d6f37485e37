import type { PackContext, PackRouter } from '../../core/pack-api.js';
import { contentItemResponse, contentListResponse } from './cms-responses.js';

const tags = ['cms'];

/** /cms/pages: the `page` content type of the caller's tenant. */
export function pagesRoutes(router: PackRouter, pack: PackContext): void {
  router.get('/cms/pages', {
    summary: 'List pages (the data API query language)', tags, auth: 'tenant', response: contentListResponse,
    errors: ['invalid_filter', 'invalid_cursor', 'module_disabled', 'tenant_required'],
  }, async (ctx) => pack.records.list(ctx.state.rc, 'cms', 'page', ctx.query));

  router.get('/cms/pages/:pageId', {
    summary: 'Read a page', tags, auth: 'tenant', response: contentItemResponse, errors: ['not_found', 'module_disabled'],
  }, async (ctx) => {
    const page = await pack.records.get(ctx.state.rc, 'cms', 'page', ctx.params.pageId);
    ctx.set('ETag', `"${page.version}"`);
    return page;
  });

  router.patch('/cms/pages/:pageId', {
    summary: 'Update a page with a JSON merge patch (status "published" publishes it; If-Match optional)',
    tags, auth: 'tenant', role: 'editor', body: { type: 'object' }, response: contentItemResponse,
    errors: ['not_found', 'validation_failed', 'version_mismatch', 'conflict', 'module_disabled'],
  }, async (ctx) => {
    const page = await pack.records.update(ctx.state.rc, 'cms', 'page', ctx.params.pageId, ctx.state.body, { ifMatch: ctx.get('If-Match') || null });
    ctx.set('ETag', `"${page.version}"`);
    return page;
  });
}
