import { NotFound } from '../base/errors.js';
import type { PackRouter } from '../http/route.js';
import { sendObject } from './send-object.js';
import type { StorageService } from './storage.service.js';

/** How long browsers and CDNs may keep a public asset before asking again (ETag makes that cheap). */
export const PUBLIC_ASSET_CACHE_CONTROL = 'public, max-age=300';

/** GET /public/assets/{tenantId}/{path...} (CONTRACT.md section 7). */
export function publicAssetRoutes(router: PackRouter, storage: StorageService): void {
  router.get('/public/assets/:tenantId/*path', {
    summary: 'A public object of a tenant',
    description: 'Streams `tenants/{tenantId}/{path}` when it was stored with public visibility. Private and unknown objects and '
      + 'any path that is not plain key segments (`..`, percent-encoding, backslashes) answer 404. Answers Range and If-None-Match.',
    tags: ['public', 'storage'], auth: 'public', tenantParam: 'tenantId', ownParamChecks: ['path'],
    answers: { 206: 'Partial content (a Range request)', 304: 'Not modified (If-None-Match)' },
    errors: ['tenant_not_found', 'not_found', 'range_not_satisfiable'],
  }, async (ctx) => {
    // The raw (undecoded) path, so that an encoded `/`, `.` or `\` can never become a separator.
    const segments = ctx.path.split('/');
    const prefixLength = '/api/v1/public/assets/'.split('/').length; // ['', api, v1, public, assets, tenant]
    const path = segments.slice(prefixLength).join('/');
    const object = await storage.findPublic(ctx.state.tenant!.id, path);
    if (!object) throw NotFound('No such asset');
    await sendObject(ctx, storage, object, PUBLIC_ASSET_CACHE_CONTROL);
  });
}
