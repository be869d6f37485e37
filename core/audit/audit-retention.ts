import type { Logger } from 'pino';
import type { BackgroundTask } from '../base/background.js';
import { PeriodicRun, type TenantClaim } from '../base/periodic-run.js';
import type { AuditLog } from './audit-log.repository.js';

const DAY_MS = 24 * 60 * 60 * 1000;
const BATCH = 1000;

/**
 * Deletes audit entries older than `retentionDays` (AUDIT_RETENTION_DAYS, CONTRACT.md 16.4); each tenant's share of a
 * scheduled run is claimed first (`claim`), so one process of many does it.
 */
export class AuditRetention implements BackgroundTask {
  readonly name = 'audit-retention';
  private readonly periodic: PeriodicRun<number>;

  constructor(private readonly log: AuditLog, private readonly retentionDays: number, private readonly logger: Logger, private readonly claim: TenantClaim) {
    this.periodic = new PeriodicRun('audit retention', logger);
  }

  start(): void {
    this.periodic.start(() => this.prune(new Date(), this.claim));
  }

  stop(): Promise<void> {
    return this.periodic.stop();
  }

  /** One pass over every tenant, unclaimed (operations, tests); `now` decides the cutoff. Resolves with the number deleted. */
  pruneOnce(now = new Date()): Promise<number> {
    return this.prune(now, null);
  }

  private prune(now: Date, claim: TenantClaim | null): Promise<number> {
    const cutoff = new Date(now.getTime() - this.retentionDays * DAY_MS).toISOString();
    return this.periodic.once(async () => {
      let total = 0;
      for (const tenantId of await this.log.tenantIds()) {
        if (claim && !(await claim(tenantId))) continue;
        let deleted: number;
        do {
          deleted = await this.log.deleteOlderThan(tenantId, cutoff, BATCH);
          total += deleted;
        } while (deleted === BATCH);
      }
      if (total) this.logger.info({ entries: total, cutoff }, 'audit retention');
      return total;
    });
  }
}
