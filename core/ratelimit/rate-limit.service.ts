import type { Logger } from 'pino';
import type { Database } from '../db/database.js';
import { RateLimited } from '../base/errors.js';
import type { RequestContext } from '../base/request-context.js';
import { RateLimitsRepository } from './rate-limits.repository.js';

export interface RateLimit {
  /** Hits allowed per window. */
  limit: number;
  /** The window length; windows are fixed (aligned to multiples of it since the epoch). */
  windowMs: number;
}

export interface RateLimitResult {
  allowed: boolean;
  /** Seconds until the current window ends (at least 1): the Retry-After of a refused hit. */
  retryAfterSeconds: number;
  /** Hits left in the current window. */
  remaining: number;
}

/** Expired windows are deleted at most this often per process. */
const PRUNE_INTERVAL_MS = 60_000;

/**
 * Fixed-window rate limits kept in the database, so that every service process on it shares them.
 * `hit` counts with one atomic upsert; called with a request context inside a transaction it counts in
 * that transaction (a rolled-back request does not count). Packs reach it as `pack.rateLimits`.
 */
export class RateLimitService {
  private readonly repository: RateLimitsRepository;
  private nextPruneAt = 0;

  constructor(db: Database, private readonly logger: Logger) {
    this.repository = new RateLimitsRepository(db);
  }

  async hit(rcOrTenant: RequestContext | string, bucket: string, rate: RateLimit, now = Date.now()): Promise<RateLimitResult> {
    if (!(rate.limit >= 1 && rate.windowMs >= 1)) throw new Error('rate limit: limit and windowMs must be positive');
    const rc = typeof rcOrTenant === 'string' ? null : rcOrTenant;
    const tenantId = typeof rcOrTenant === 'string' ? rcOrTenant : rcOrTenant.tenantId;
    if (!tenantId) throw new Error('rate limit: a tenant is required');
    const start = Math.floor(now / rate.windowMs) * rate.windowMs;
    const end = start + rate.windowMs;
    const count = await this.repository.increment(rc, tenantId, bucket, new Date(start).toISOString(), new Date(end).toISOString());
    await this.prune(rc, now);
    return {
      allowed: count <= rate.limit,
      retryAfterSeconds: Math.max(1, Math.ceil((end - now) / 1000)),
      remaining: Math.max(0, rate.limit - count),
    };
  }

  /** Counts a hit like `hit`, and refuses one over the limit with 429 rate_limited and Retry-After. */
  async enforce(rcOrTenant: RequestContext | string, bucket: string, rate: RateLimit): Promise<void> {
    const result = await this.hit(rcOrTenant, bucket, rate);
    if (!result.allowed) throw RateLimited(result.retryAfterSeconds, [], { 'Retry-After': String(result.retryAfterSeconds) });
  }

  /** Now and then deletes ended windows, outside any transaction (after it commits). */
  private async prune(rc: RequestContext | null, now: number): Promise<void> {
    if (now < this.nextPruneAt) return;
    this.nextPruneAt = now + PRUNE_INTERVAL_MS;
    const prune = async () => {
      try {
        await this.repository.deleteExpired(new Date(now).toISOString());
      } catch (err) {
        this.logger.warn({ err }, 'rate limit: pruning expired windows failed');
      }
    };
    if (rc?.trx && rc.afterCommit) rc.afterCommit(prune);
    else if (!rc?.trx) await prune();
  }
}
