import { createHash } from 'node:crypto';
import type { AppContext } from './app-state.js';
import { bffSuccess, JSON_TYPE } from './envelope.js';
import { matchesEtag } from './conditional.js';

/**
 * Renders a public response with `Cache-Control` and a strong `ETag` over the body, and answers a
 * matching `If-None-Match` with 304 and no body.
 */
export function sendCacheable(ctx: AppContext, data: unknown, maxAgeSeconds: number): void {
  const body = JSON.stringify(bffSuccess(data));
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
  if (answerNotModified(ctx, etag, maxAgeSeconds)) return;
  sendBody(ctx, body);
}

/**
 * Like sendCacheable, for a resource whose ETag is known before its body: `tag` must change whenever the
 * body would (a record's number and version, say). A matching `If-None-Match` answers 304 without
 * building the body; else `build` makes the data. A promise only when `build` returns one.
 */
export function sendCacheableTagged(ctx: AppContext, tag: string, build: () => unknown, maxAgeSeconds: number): Promise<void> | void {
  const etag = `"${tag}"`;
  if (answerNotModified(ctx, etag, maxAgeSeconds)) return;
  const data = build();
  if (data instanceof Promise) return data.then((built) => sendBody(ctx, JSON.stringify(bffSuccess(built))));
  sendBody(ctx, JSON.stringify(bffSuccess(data)));
}

/**
 * Sets the cache headers; true (and a 304) when If-None-Match matches `etag`. The headers go straight to the
 * response (Koa's ctx.set checks and looks up what is known here). A 304 gets no body and no content type
 * (Koa ends it without them; the route wrapper leaves a 304 without a body as it is).
 */
function answerNotModified(ctx: AppContext, etag: string, maxAgeSeconds: number): boolean {
  const res = ctx.res;
  res.setHeader('Cache-Control', `public, max-age=${maxAgeSeconds}`);
  res.setHeader('ETag', etag);
  res.setHeader('Vary', 'Accept-Encoding');
  const ifNoneMatch = ctx.req.headers['if-none-match'];
  if (ifNoneMatch === undefined || !matchesEtag(ifNoneMatch, etag)) return false;
  ctx.status = 304;
  return true;
}

/** The JSON body, its type set straight on the response (ctx.type looks it up per request). */
function sendBody(ctx: AppContext, body: string): void {
  ctx.res.setHeader('Content-Type', JSON_TYPE);
  ctx.status = 200;
  ctx.body = body;
}
