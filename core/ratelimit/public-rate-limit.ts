import type { AppContext } from '../http/app-state.js';
import { clientKey } from '../http/client-key.js';
import { RateLimited } from '../base/errors.js';

/**
 * Fixed-window counters kept in this process's memory: one Map for the current window, replaced when the
 * window ends (so ended windows cost nothing to forget and memory holds one entry per client seen in the
 * current window). Nothing is shared between processes: behind N processes a client gets up to N times the
 * limit. That is the point: a per-request database write cost the public runtime most of its speed.
 */
export class LocalRateLimiter {
  private windowStart = -1;
  private hits = new Map<string, number>();

  constructor(readonly limit: number, readonly windowMs: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new Error('LocalRateLimiter: limit must be a positive integer');
    if (!Number.isInteger(windowMs) || windowMs < 1) throw new Error('LocalRateLimiter: windowMs must be a positive integer');
  }

  /** Counts a hit of `key`: null when allowed, else the seconds until the window ends (at least 1). */
  hit(key: string, now = Date.now()): number | null {
    const start = now - (now % this.windowMs);
    if (start !== this.windowStart) {
      this.windowStart = start;
      this.hits = new Map();
    }
    const count = (this.hits.get(key) ?? 0) + 1;
    this.hits.set(key, count);
    if (count <= this.limit) return null;
    return Math.max(1, Math.ceil((start + this.windowMs - now) / 1000));
  }

  /** Clients counted in the current window (for tests and metrics). */
  get size(): number {
    return this.hits.size;
  }
}

/** The methods routes are declared with (core/http/route.ts), and HEAD and OPTIONS, which they answer too. */
const SERVED_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * The public runtime (`/api/v1/public/...`, no authentication) is limited per client address (an IPv6 client
 * by its /64), over all tenants: past `perMinute` requests in a minute (fixed windows aligned to the clock),
 * 429 rate_limited with Retry-After (seconds until the window ends). A fairness guard per process, counted in
 * memory (see LocalRateLimiter); limits that must hold across processes (forms, invitations, events
 * publishing) use the database-backed RateLimitService. The returned check is a step of
 * core/http/request-pipeline.ts; it throws the 429.
 */
export function publicRateLimit(perMinute: number, refuses: (method: string, path: string) => boolean = () => false, prefix = '/api/v1/public/'): (ctx: AppContext) => void {
  if (!Number.isInteger(perMinute) || perMinute < 1) throw new Error('publicRateLimit: perMinute must be a positive integer');
  const limiter = new LocalRateLimiter(perMinute, 60_000);
  return function publicRateLimit(ctx) {
    // Payment providers' webhooks are not limited (CONTRACT 15.3): a refused one would only be sent again later.
    if (!ctx.state.path.startsWith(prefix) || ctx.state.path.startsWith(`${prefix}payments/`)) return;
    const retryAfter = limiter.hit(clientKey(ctx.ip));
    if (retryAfter === null) return;
    // Past the limit, a request no route would serve (TRACE, CONNECT, ..., or a method not this path's) still gets its
    // 405 with Allow, as the document says: the route table is asked then only, not on every public request.
    if (!SERVED_METHODS.has(ctx.method) || refuses(ctx.method, ctx.state.path)) return;
    throw RateLimited(retryAfter, [], { 'Retry-After': String(retryAfter) });
  };
}
