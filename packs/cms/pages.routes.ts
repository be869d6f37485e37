import { type PackContext, type PackRouter, queryFromString } from '../../core/pack-api.js';
import { contentItemResponse, contentListResponse } from './cms-responses.js';
import { contentItemRoutes } from './content-item.routes.js';

/** /cms/pages: the `page` content type of the caller's tenant. */
export function pagesRoutes(router: PackRouter, pack: PackContext): void {
  router.get('/cms/pages', {
    summary: 'List pages (the data API query language)', tags: ['cms'], auth: 'tenant', response: contentListResponse,
    errors: ['invalid_filter', 'invalid_cursor', 'module_disabled', 'tenant_required'],
  }, async (ctx) => pack.records.list(ctx.state.rc, 'cms', 'page', queryFromString(ctx.query)));

  contentItemRoutes(router, pack, 'page', '/cms/pages/:pageId', contentItemResponse);
}
