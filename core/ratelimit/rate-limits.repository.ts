import type { Database } from '../db/database.js';
import type { RequestContext } from '../base/request-context.js';

/**
 * The counters of core/ratelimit. Counting is one atomic upsert (SQLite ≥ 3.35 and PostgreSQL alike), so
 * concurrent hits from any number of processes each see their own count.
 */
export class RateLimitsRepository {
  constructor(private readonly db: Database) {}

  /** Adds one hit to the tenant's bucket window and returns the window's count including it. */
  async increment(rc: RequestContext | null, tenantId: string, bucket: string, windowStart: string, expiresAt: string): Promise<number> {
    const rows = await this.db.sql(rc).rows<{ hits: number | string }>(
      'INSERT INTO rate_limits (tenant_id, bucket, window_start, expires_at, hits) VALUES (?, ?, ?, ?, 1) '
      + 'ON CONFLICT (tenant_id, bucket, window_start) DO UPDATE SET hits = rate_limits.hits + 1 RETURNING hits',
      [tenantId, bucket, windowStart, expiresAt]);
    return Number(rows[0].hits);
  }

  /** Deletes the windows that ended before `before` (any tenant); returns how many. */
  async deleteExpired(before: string): Promise<number> {
    return Number(await this.db.sql(null).run(this.db.query('rate_limits').where('expires_at', '<', before).delete()));
  }
}
