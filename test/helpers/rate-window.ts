/**
 * Rate limits count in fixed windows (core/ratelimit). A test that needs its hits in one window waits
 * for the next window when fewer than `neededMs` are left of the current one.
 */
export async function withinOneWindow(windowMs: number, neededMs: number): Promise<void> {
  const left = windowMs - (Date.now() % windowMs);
  if (left < neededMs) await new Promise((r) => setTimeout(r, left + 20));
}

/** The seconds until the current fixed window ends. */
export function secondsToWindowEnd(windowMs: number, now = Date.now()): number {
  return (windowMs - (now % windowMs)) / 1000;
}
