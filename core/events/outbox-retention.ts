import type { Logger } from 'pino';
import type { Database } from '../db/database.js';
import type { BackgroundTask } from '../base/background.js';
import { PeriodicRun } from '../base/periodic-run.js';
import { OutboxRetentionRepository } from './outbox-retention.repository.js';

const DAY_MS = 24 * 60 * 60 * 1000;
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
  private readonly periodic: PeriodicRun<PruneResult>;

  constructor(db: Database, private readonly retentionDays: number, private readonly logger: Logger) {
    this.repository = new OutboxRetentionRepository(db);
    this.periodic = new PeriodicRun('outbox retention', logger);
  }

  start(): void {
    this.periodic.start(() => this.pruneOnce());
  }

  stop(): Promise<void> {
    return this.periodic.stop();
  }

  /** One pass over every tenant; `now` decides the cutoff. */
  pruneOnce(now = new Date()): Promise<PruneResult> {
    return this.periodic.once(() => this.prune(new Date(now.getTime() - this.retentionDays * DAY_MS).toISOString()));
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
}
