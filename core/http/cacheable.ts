import { createHash } from 'node:crypto';
import type { AppContext } from './app-state.js';
import { bffSuccess } from './envelope.js';
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
 * building the body; else `build` makes the data.
 */
export async function sendCacheableTagged(ctx: AppContext, tag: string, build: () => unknown, maxAgeSeconds: number): Promise<void> {
  const etag = `"${tag}"`;
  if (answerNotModified(ctx, etag, maxAgeSeconds)) return;
  sendBody(ctx, JSON.stringify(bffSuccess(await build())));
}

/** Sets the cache headers; true (and a 304 with no body) when If-None-Match matches `etag`. */
function answerNotModified(ctx: AppContext, etag: string, maxAgeSeconds: number): boolean {
  ctx.set('Cache-Control', `public, max-age=${maxAgeSeconds}`);
  ctx.set('ETag', etag);
  ctx.set('Vary', 'Accept-Encoding');
  if (!matchesEtag(ctx.get('If-None-Match'), etag)) return false;
  ctx.status = 304;
  ctx.body = '';
  return true;
}

function sendBody(ctx: AppContext, body: string): void {
  ctx.status = 200;
  ctx.type = 'application/json';
  ctx.body = body;
}
