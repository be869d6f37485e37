/** Longest wait between two attempts. */
export const MAX_RETRY_DELAY_MS = 6 * 60 * 60 * 1000;
/** Longest Retry-After honoured (a receiver cannot park a delivery for longer). */
export const MAX_RETRY_AFTER_MS = 24 * 60 * 60 * 1000;

/**
 * Delay before the next attempt after `failedAttempts` failures: base · 2^(n-1), capped at 6 h, with
 * ±20 % jitter so that retries of many deliveries do not arrive together. `random` is in [0, 1).
 */
export function backoffDelay(failedAttempts: number, baseMs: number, random: number = Math.random()): number {
  const exponential = Math.min(MAX_RETRY_DELAY_MS, baseMs * 2 ** Math.min(30, Math.max(0, failedAttempts - 1)));
  return Math.round(exponential * (0.8 + 0.4 * random));
}

/** Retry-After as milliseconds (delta seconds or an HTTP date), or null when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, now: number): number | null {
  if (!value) return null;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Math.min(MAX_RETRY_AFTER_MS, Number(trimmed) * 1000);
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return null;
  return Math.min(MAX_RETRY_AFTER_MS, Math.max(0, date - now));
}

/**
 * When to try again after a failed attempt, or null when the retry window (72 h from the delivery's
 * creation) is over and the delivery fails. The last attempt is placed at the window's end.
 */
export function nextAttemptTime(
  options: { failedAttempts: number; createdAt: number; now: number; baseMs: number; windowMs: number; retryAfterMs: number | null },
): number | null {
  const end = options.createdAt + options.windowMs;
  if (options.now >= end) return null;
  const delay = options.retryAfterMs ?? backoffDelay(options.failedAttempts, options.baseMs);
  return Math.min(end, options.now + delay);
}
