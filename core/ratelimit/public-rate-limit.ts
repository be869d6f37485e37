import type { Middleware } from 'koa';
import type { AppState } from '../http/app-state.js';
import { clientKey } from '../http/client-key.js';
import type { RateLimitService } from './rate-limit.service.js';

/** The counters of the public runtime belong to no tenant; tenant ids cannot start with `_`. */
const PUBLIC_BUCKET_OWNER = '_public';

/**
 * The public runtime (`/api/v1/public/...`, no authentication) is limited per client address (an IPv6 client
 * by its /64), over all tenants, so that one client cannot starve the others: past `perMinute` requests
 * a minute, 429 rate_limited with Retry-After. Counted in the database, so every process shares the limit.
 */
export function publicRateLimit(rateLimits: RateLimitService, perMinute: number, prefix = '/api/v1/public/'): Middleware<AppState> {
  if (!Number.isInteger(perMinute) || perMinute < 1) throw new Error('publicRateLimit: perMinute must be a positive integer');
  const rate = { limit: perMinute, windowMs: 60_000 };
  return async function publicRateLimit(ctx, next) {
    if (ctx.path.startsWith(prefix)) await rateLimits.enforce(PUBLIC_BUCKET_OWNER, `public:${clientKey(ctx.ip)}`, rate);
    await next();
  };
}
