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
  ctx.set('Cache-Control', `public, max-age=${maxAgeSeconds}`);
  ctx.set('ETag', etag);
  ctx.set('Vary', 'Accept-Encoding');
  if (matchesEtag(ctx.get('If-None-Match'), etag)) {
    ctx.status = 304;
    ctx.body = '';
    return;
  }
  ctx.status = 200;
  ctx.type = 'application/json';
  ctx.body = body;
}
