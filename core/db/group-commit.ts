import type { DeferredWrite, PoolClient, WriteCommitter } from './dialects/dialect.js';

/** What each transaction of a group came to: its writes' row counts, or why it failed (then nothing of it is written). */
export type GroupOutcome = { counts: number[] } | { error: unknown };

/** Commits the queued writes of several transactions on one connection; one outcome per transaction. */
export type CommitGroup = (connection: object, group: DeferredWrite[][]) => Promise<GroupOutcome[]>;

/** Transactions per group, at most. */
const GROUP_LIMIT = 64;

/**
 * Group commit for transactions made of queued writes only. Each waits for the next turn of the event
 * loop (or for a connection); then all that are waiting go to `commitGroup` together, on one connection.
 * A commit (and on a server database, a round trip) costs far more than the small writes of a request,
 * and a group pays for it once. While one group commits, the next one gathers.
 */
export function groupCommitter(pool: PoolClient, commitGroup: CommitGroup): WriteCommitter {
  interface Member {
    writes: DeferredWrite[];
    resolve(counts: number[]): void;
    reject(err: unknown): void;
  }
  const queue: Member[] = [];
  let scheduled = false;
  const schedule = () => {
    scheduled = true;
    setImmediate(drain);
  };
  const drain = async () => {
    let connection: object;
    try {
      connection = await pool.acquireConnection();
    } catch (err) {
      scheduled = false;
      for (const m of queue.splice(0)) m.reject(err);
      return;
    }
    // Those that arrived while the connection was busy join this group.
    const group = queue.splice(0, GROUP_LIMIT);
    scheduled = false;
    if (queue.length) schedule();
    try {
      const outcomes = await commitGroup(connection, group.map((m) => m.writes));
      group.forEach((m, i) => {
        const outcome = outcomes[i];
        if ('error' in outcome) m.reject(outcome.error);
        else m.resolve(outcome.counts);
      });
    } catch (err) {
      for (const m of group) m.reject(err);
    } finally {
      await pool.releaseConnection(connection);
    }
  };
  return (writes) => new Promise<number[]>((resolve, reject) => {
    queue.push({ writes, resolve, reject });
    if (!scheduled) schedule();
  });
}
