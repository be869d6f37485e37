import type { Logger } from 'pino';

/** When a periodic run first comes after start (not during boot), and how often after that. */
export interface PeriodicTiming {
  firstMs: number;
  everyMs: number;
}

/**
 * Claims a tenant's share of one run of a sweep, so that of several processes one does it: true for the process
 * that may go on (a counter row of the run's window, allowed once: the kernel's rate limits).
 */
export type TenantClaim = (tenantId: string) => Promise<boolean>;

/** Sweeps such as retention: a minute after start, then every ten minutes. */
export const SWEEP_TIMING: PeriodicTiming = { firstMs: 60 * 1000, everyMs: 10 * 60 * 1000 };

/**
 * A unit of background work run on a timer (a retention sweep): never twice at once in a process (`once` joins
 * a run under way), each failure logged, and stopped by waiting for the run under way. The timer does not keep
 * the process alive.
 */
export class PeriodicRun<T> {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<T> | null = null;

  constructor(private readonly what: string, private readonly logger: Logger, private readonly timing: PeriodicTiming = SWEEP_TIMING) {}

  /** Runs `run` now, or joins the run under way. */
  once(run: () => Promise<T>): Promise<T> {
    this.running ??= run().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  /** Starts the timer: `run` after `timing.firstMs`, then every `timing.everyMs` after each run ends. */
  start(run: () => Promise<T>): void {
    this.schedule(run, this.timing.firstMs);
  }

  async stop(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running?.catch(() => {});
  }

  private schedule(run: () => Promise<T>, delayMs: number): void {
    this.timer = setTimeout(() => {
      this.once(run)
        .catch((err) => this.logger.error({ err }, `${this.what} failed`))
        .finally(() => {
          if (this.timer) this.schedule(run, this.timing.everyMs);
        });
    }, delayMs);
    this.timer.unref();
  }
}
