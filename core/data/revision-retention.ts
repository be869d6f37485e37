import type { Logger } from 'pino';
import type { BackgroundTask } from '../base/background.js';
import { PeriodicRun, type TenantClaim } from '../base/periodic-run.js';
import type { RevisionsRepository } from './revisions.repository.js';

const DAY_MS = 24 * 60 * 60 * 1000;
const BATCH = 500;

/**
 * Keeps revisions for `retentionDays` (REVISION_RETENTION_DAYS, CONTRACT.md 16.3): older ones are deleted, except
 * the newest revision of a record that is not deleted. Each tenant's share of a scheduled run is claimed first
 * (`claim`), so one process of many does it; the deletes are bounded, led by the tenant and idempotent anyway.
 */
export class RevisionRetention implements BackgroundTask {
  readonly name = 'revision-retention';
  private readonly periodic: PeriodicRun<number>;

  constructor(
    private readonly repository: RevisionsRepository, private readonly retentionDays: number, private readonly logger: Logger, private readonly claim: TenantClaim,
  ) {
    this.periodic = new PeriodicRun('revision retention', logger);
  }

  start(): void {
    this.periodic.start(() => this.prune(this.cutoff(new Date()), this.claim));
  }

  stop(): Promise<void> {
    return this.periodic.stop();
  }

  /** One pass over every tenant, unclaimed (operations, tests); `now` decides the cutoff. Resolves with the number deleted. */
  pruneOnce(now = new Date()): Promise<number> {
    return this.periodic.once(() => this.prune(this.cutoff(now), null));
  }

  private cutoff(now: Date): string {
    return new Date(now.getTime() - this.retentionDays * DAY_MS).toISOString();
  }

  private async prune(cutoff: string, claim: TenantClaim | null): Promise<number> {
    let total = 0;
    for (const tenantId of await this.repository.tenantIds()) {
      if (claim && !(await claim(tenantId))) continue;
      let deleted: number;
      do {
        deleted = await this.repository.deleteOlderThan(tenantId, cutoff, BATCH);
        total += deleted;
      } while (deleted === BATCH);
    }
    if (total) this.logger.info({ revisions: total, cutoff }, 'revision retention');
    return total;
  }
}
