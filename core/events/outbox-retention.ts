import type { Logger } from 'pino';
import type { Database } from '../db/database.js';
import type { BackgroundTask } from '../base/background.js';
import { OutboxRetentionRepository } from './outbox-retention.repository.js';

const DAY_MS = 24 * 60 * 60 * 1000;
/** How often retention runs; the first run comes a minute after start, not during boot. */
const INTERVAL_MS = 10 * 60 * 1000;
const FIRST_RUN_MS = 60 * 1000;
const BATCH = 500;

export interface PruneResult {
  deliveries: number;
  events: number;
}

/**
 * Keeps the outbox from growing without bound: deliveries that are finished (delivered, failed or cancelled)
 * and unchanged for `retentionDays`, with their attempt log, and events older than that with no delivery
 * left are deleted. Pending work is never touched. Several processes may run it at once: deletes are
 * idempotent and every statement is bounded and led by the tenant.
 */
export class OutboxRetention implements BackgroundTask {
  readonly name = 'outbox-retention';
  private readonly repository: OutboxRetentionRepository;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<PruneResult> | null = null;

  constructor(db: Database, private readonly retentionDays: number, private readonly logger: Logger) {
    this.repository = new OutboxRetentionRepository(db);
  }

  start(): void {
    this.schedule(FIRST_RUN_MS);
  }

  async stop(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running?.catch(() => {});
  }

  /** One pass over every tenant; `now` decides the cutoff. */
  async pruneOnce(now = new Date()): Promise<PruneResult> {
    this.running ??= this.prune(new Date(now.getTime() - this.retentionDays * DAY_MS).toISOString()).finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async prune(cutoff: string): Promise<PruneResult> {
    const result: PruneResult = { deliveries: 0, events: 0 };
    for (const tenantId of await this.repository.tenantIds()) {
      let deleted: number;
      do {
        deleted = await this.repository.deleteFinishedDeliveries(tenantId, cutoff, BATCH);
        result.deliveries += deleted;
      } while (deleted === BATCH);
      do {
        deleted = await this.repository.deleteSettledEvents(tenantId, cutoff, BATCH);
        result.events += deleted;
      } while (deleted === BATCH);
    }
    if (result.deliveries || result.events) this.logger.info({ ...result, cutoff }, 'outbox retention');
    return result;
  }

  private schedule(delayMs: number): void {
    this.timer = setTimeout(() => {
      this.pruneOnce()
        .catch((err) => this.logger.error({ err }, 'outbox retention failed'))
        .finally(() => {
          if (this.timer) this.schedule(INTERVAL_MS);
        });
    }, delayMs);
    this.timer.unref();
  }
}
