/**
 * A fixed-window counter per key (client address and form). Kept in process memory: each process
 * limits on its own, which bounds abuse without a round trip to the database on every submission.
 */
export class RateLimiter {
  private readonly windows = new Map<string, { startedAt: number; count: number }>();

  constructor(readonly limit: number, readonly windowMs: number, private readonly maxKeys = 100_000) {
    if (limit < 1 || windowMs < 1) throw new Error('RateLimiter: limit and windowMs must be positive');
  }

  /** Counts a hit; returns 0 when allowed, else the seconds until the window ends. */
  hit(key: string, now = Date.now()): number {
    let window = this.windows.get(key);
    if (!window || now - window.startedAt >= this.windowMs) {
      if (!window && this.windows.size >= this.maxKeys) this.sweep(now);
      window = { startedAt: now, count: 0 };
      this.windows.set(key, window);
    }
    window.count += 1;
    if (window.count <= this.limit) return 0;
    return Math.max(1, Math.ceil((window.startedAt + this.windowMs - now) / 1000));
  }

  private sweep(now: number): void {
    for (const [key, w] of this.windows) if (now - w.startedAt >= this.windowMs) this.windows.delete(key);
    if (this.windows.size >= this.maxKeys) this.windows.clear();
  }
}
