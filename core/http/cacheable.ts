import { createHash } from 'node:crypto';
import type { AppContext } from './app-state.js';
import { bffSuccess, JSON_TYPE } from './envelope.js';
import { matchesEtag } from './conditional.js';

/**
 * Renders a public response with `Cache-Control` and a strong `ETag` over the body, and answers a
 * matching `If-None-Match` with 304 and no body.
 */
export function sendCacheable(ctx: AppContext, data: unknown, maxAgeSeconds: number): void {
  sendCacheableBody(ctx, JSON.stringify(bffSuccess(data)), null, maxAgeSeconds);
}

/**
 * Like sendCacheable, for a body rendered before (the JSON of the whole envelope). `tag` is its ETag when
 * known without the body (it must change whenever the body would: a record's number and version, say);
 * null hashes the body.
 */
export function sendCacheableBody(ctx: AppContext, body: string, tag: string | null, maxAgeSeconds: number): void {
  const etag = tag === null ? `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` : `"${tag}"`;
  if (answerNotModified(ctx, etag, maxAgeSeconds)) return;
  ctx.res.setHeader('Content-Type', JSON_TYPE);
  ctx.status = 200;
  ctx.body = body;
}

/** Cache-Control per max-age (the few lifetimes routes declare), made once. */
const CACHE_CONTROL = new Map<number, string>();

/**
 * Sets the cache headers; true (and a 304) when If-None-Match matches `etag`. The headers go straight to the
 * response (Koa's ctx.set checks and looks up what is known here). A 304 gets no body and no content type
 * (Koa ends it without them; the route wrapper leaves a 304 without a body as it is).
 */
function answerNotModified(ctx: AppContext, etag: string, maxAgeSeconds: number): boolean {
  const res = ctx.res;
  let cacheControl = CACHE_CONTROL.get(maxAgeSeconds);
  if (cacheControl === undefined) CACHE_CONTROL.set(maxAgeSeconds, (cacheControl = `public, max-age=${maxAgeSeconds}`));
  res.setHeader('Cache-Control', cacheControl);
  res.setHeader('ETag', etag);
  res.setHeader('Vary', 'Accept-Encoding');
  const ifNoneMatch = ctx.req.headers['if-none-match'];
  if (ifNoneMatch === undefined || !matchesEtag(ifNoneMatch, etag)) return false;
  ctx.status = 304;
  return true;
}
