import type { DeferredWrite, PoolClient, WriteCommitter } from './dialects/dialect.js';

/** What each transaction of a group came to: its writes' row counts, or why it failed (then nothing of it is written). */
export type GroupOutcome = { counts: number[] } | { error: unknown };

/** Commits the queued writes of several transactions on one connection; one outcome per transaction. */
export type CommitGroup = (connection: object, group: DeferredWrite[][]) => Promise<GroupOutcome[]>;

/** Transactions per group, at most. */
const GROUP_LIMIT = 64;
/** After this long, a group still committing no longer keeps the next one waiting (it may wait on a lock). */
const STALL_MS = 50;

/**
 * Group commit for transactions made of queued writes only. They wait for the next turn of the event loop
 * and for the group before them; then all that are waiting go to `commitGroup` together, on one
 * connection. A commit (and on a server database, a round trip) costs far more than the small writes of a
 * request, and a group pays for it once. One group commits at a time: while it does, the next one gathers
 * (measured on PostgreSQL: several small concurrent groups, contending for the same index pages and WAL
 * flushes, were slower than one growing group). A group that takes longer than STALL_MS, as one waiting on
 * a row lock would, lets the next one start beside it, so that one tenant's lock wait does not hold up the
 * writes of the others.
 */
export function groupCommitter(pool: PoolClient, commitGroup: CommitGroup): WriteCommitter {
  interface Member {
    writes: DeferredWrite[];
    resolve(counts: number[]): void;
    reject(err: unknown): void;
  }
  const queue: Member[] = [];
  let scheduled = false;
  let stallTimer: NodeJS.Timeout | null = null;
  /** Start times of the groups committing now, by group. */
  const committing = new Map<object, number>();

  const schedule = () => {
    if (scheduled || !queue.length) return;
    if (committing.size) {
      const waited = Date.now() - Math.min(...committing.values());
      if (waited < STALL_MS) {
        stallTimer ??= setTimeout(() => {
          stallTimer = null;
          schedule();
        }, STALL_MS - waited);
        stallTimer.unref();
        return;
      }
    }
    scheduled = true;
    setImmediate(drain);
  };

  const drain = async () => {
    const self = {};
    committing.set(self, Date.now());
    let connection: object | null = null;
    try {
      connection = await pool.acquireConnection();
      // Those that arrived while waiting for the connection join this group.
      const group = queue.splice(0, GROUP_LIMIT);
      scheduled = false;
      if (queue.length) schedule();
      await settle(connection, group);
    } catch (err) {
      // No connection: everyone waiting fails.
      scheduled = false;
      for (const m of queue.splice(0)) m.reject(err);
    } finally {
      if (connection) await pool.releaseConnection(connection);
      committing.delete(self);
      schedule();
    }
  };

  async function settle(connection: object, group: Member[]): Promise<void> {
    if (!group.length) return;
    try {
      const outcomes = await commitGroup(connection, group.map((m) => m.writes));
      group.forEach((m, i) => {
        const outcome = outcomes[i];
        if ('error' in outcome) m.reject(outcome.error);
        else m.resolve(outcome.counts);
      });
    } catch (err) {
      for (const m of group) m.reject(err);
    }
  }

  return (writes) => new Promise<number[]>((resolve, reject) => {
    queue.push({ writes, resolve, reject });
    schedule();
  });
}
