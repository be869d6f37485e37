import type { Logger } from 'pino';
import type { BackgroundTask } from '../base/background.js';
import { PeriodicRun, type PeriodicTiming } from '../base/periodic-run.js';
import { isMissingTable } from '../db/translate-error.js';

/** Scheduled publishes are looked for this often: each goes live within 30 s after its time (CONTRACT.md 17.1). */
export const SCHEDULE_TIMING: PeriodicTiming = { firstMs: 1_000, everyMs: 5_000 };

/**
 * Publishes what is scheduled (drafts, releases) once its time has come, in every process: each publish is
 * claimed in the database by the one process that does it (DraftsService.publishDue, ReleasesService.publishDue).
 */
export class ScheduledPublish implements BackgroundTask {
  readonly name = 'scheduled-publish';
  private readonly periodic: PeriodicRun<number>;

  constructor(private readonly runs: Array<(now: Date) => Promise<number>>, logger: Logger) {
    this.periodic = new PeriodicRun('scheduled publish', logger, SCHEDULE_TIMING);
  }

  start(): void {
    this.periodic.start(() => this.runOnce());
  }

  stop(): Promise<void> {
    return this.periodic.stop();
  }

  /** One pass now (or joins the one under way); resolves with how many were published. */
  runOnce(now = new Date()): Promise<number> {
    return this.periodic.once(async () => {
      let published = 0;
      try {
        for (const run of this.runs) published += await run(now);
      } catch (err) {
        // Before `npm run migrate` there is nothing scheduled.
        if (!isMissingTable(err)) throw err;
      }
      return published;
    });
  }
}
