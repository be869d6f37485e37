import type { PackContext, PackRouter } from '../../core/pack-api.js';
import { contentItemResponse, contentListResponse } from './cms-responses.js';
import { contentItemRoutes, listContent } from './content-item.routes.js';

/** /cms/pages: the `page` content type of the caller's tenant. */
export function pagesRoutes(router: PackRouter, pack: PackContext): void {
  router.get('/cms/pages', {
    summary: 'List pages (the data API query language; ?locale=, * for every locale, fallback=false)', tags: ['cms'], auth: 'tenant', response: contentListResponse,
    errors: ['invalid_filter', 'invalid_cursor', 'module_disabled', 'tenant_required', 'validation_failed'],
  }, (ctx) => listContent(pack, ctx, 'page'));

  contentItemRoutes(router, pack, 'page', '/cms/pages/:pageId', contentItemResponse);
}
