import type { AppContext } from './app-state.js';

/** The request headers a storefront in a browser may send to the public runtime. */
const ALLOWED_HEADERS = 'Content-Type, X-Cart-Token, Idempotency-Key, If-None-Match, If-Match, X-Request-Id';
/** The response headers a storefront's script may read. */
const EXPOSED_HEADERS = 'ETag, X-Request-Id, Retry-After, Idempotent-Replayed';
const ALLOWED_METHODS = 'GET, POST, PUT, PATCH, DELETE';

/**
 * CORS for the public runtime (`/api/v1/public/...`): storefronts call it from their own origins, without
 * credentials (it never reads or sets a cookie), so every origin is allowed (`*`) and the cart's
 * `X-Cart-Token` may be sent (CONTRACT 15.2). A preflight (OPTIONS with Access-Control-Request-Method) is
 * answered here, 204, before the rate limit and the routes; other requests get the headers and go on, so an
 * error answer (a 429, a 404) is readable by the page too. A step of core/http/request-pipeline.ts: it
 * returns true when it has answered the request.
 */
export function publicCors(prefix = '/api/v1/public/'): (ctx: AppContext) => boolean {
  if (!prefix.startsWith('/')) throw new Error('publicCors: the prefix must be a path');
  return function publicCors(ctx) {
    if (!ctx.state.path.startsWith(prefix)) return false;
    // Straight to the response, as core/http/cacheable.ts sets its headers: Koa's ctx.set checks and converts
    // what is known here, on every public request.
    const res = ctx.res;
    res.setHeader('Access-Control-Allow-Origin', '*');
    if (ctx.method === 'OPTIONS' && ctx.req.headers['access-control-request-method']) {
      res.setHeader('Access-Control-Allow-Methods', ALLOWED_METHODS);
      res.setHeader('Access-Control-Allow-Headers', ALLOWED_HEADERS);
      res.setHeader('Access-Control-Max-Age', '600');
      ctx.status = 204;
      return true;
    }
    res.setHeader('Access-Control-Expose-Headers', EXPOSED_HEADERS);
    return false;
  };
}
