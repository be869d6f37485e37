import type { DeferredWrite, Dialect, PoolClient, WriteCommitter } from './dialects/dialect.js';
import { countQuery } from './query-count.js';
import type { Query, Sql } from './sql.js';
import type { GroupMember, TransactionGroups } from './transaction-groups.js';

const FINISHED = 'The transaction has finished; use the rc it was opened with only inside it';

/**
 * One transaction (`rc.trx`, opened by Database.transaction): its queued writes and, once something needed
 * it, its connection. The connection is taken from the pool and BEGIN run on the first statement that needs
 * it; queued writes run before any statement, in order. To the dialects it is a PoolClient that keeps
 * handing out its one connection. With `groups` (SQLite), it opens as a member of a transaction group
 * (core/db/transaction-groups.ts) instead of a BEGIN of its own.
 */
export class UnitOfWork implements Sql, PoolClient {
  private pending: DeferredWrite[] = [];
  private opening: Promise<object> | null = null;
  private connection: object | null = null;
  private member: GroupMember | null = null;
  private finished = false;

  constructor(private readonly pool: PoolClient, private readonly dialect: Dialect, private readonly groups: TransactionGroups | null = null) {}

  async run<T>(query: Query<T>): Promise<T> {
    countQuery();
    return await query.connection(await this.acquireConnection());
  }

  rows<T = Record<string, unknown>>(sql: string, bindings: readonly unknown[] = []): Promise<T[]> {
    return this.dialect.rows<T>(this, sql, bindings);
  }

  async writeAtCommit(write: DeferredWrite): Promise<void> {
    if (this.finished) throw new Error(FINISHED);
    this.pending.push(write);
  }

  /** The transaction's connection: taken from the pool and BEGIN run on first use; queued writes run first. */
  async acquireConnection(): Promise<object> {
    if (this.finished) throw new Error(FINISHED);
    this.opening ??= this.open();
    const connection = await this.opening;
    // Ended while waiting for its turn (a statement beside one that failed): the connection is no longer its own.
    if (this.finished) throw new Error(FINISHED);
    if (this.pending.length) await this.flushPending(connection);
    return connection;
  }

  /** Runs the queued writes on the connection, with `then` (the COMMIT) in the same round trip when given. */
  private async flushPending(connection: object, then?: 'COMMIT'): Promise<void> {
    const writes = this.pending;
    this.pending = [];
    const counts = await this.dialect.runWrites(this.pool, connection, writes, then);
    writes.forEach((w, i) => w.done?.(counts[i]));
  }

  /** The connection stays with the transaction until it ends (release). */
  async releaseConnection(): Promise<void> {}

  positionBindings(sql: string): string {
    return this.pool.positionBindings(sql);
  }

  private async open(): Promise<object> {
    if (this.groups) {
      this.member = await this.groups.enter();
      return this.member.connection;
    }
    const connection = await this.pool.acquireConnection();
    try {
      await this.dialect.exec(connection, this.dialect.beginSql);
    } catch (err) {
      await this.pool.releaseConnection(connection);
      throw err;
    }
    this.connection = connection;
    return connection;
  }

  async commit(committer: WriteCommitter): Promise<void> {
    if (this.opening && !this.groups && this.pending.length) {
      // The last queued writes and the COMMIT in one round trip (PostgreSQL's pipeline).
      const connection = await this.opening;
      if (this.finished) throw new Error(FINISHED);
      await this.flushPending(connection, 'COMMIT');
    } else if (this.opening) {
      const connection = await this.acquireConnection();
      if (this.member) {
        this.finished = true;
        const member = this.member;
        this.member = null;
        await member.commit();
      } else await this.dialect.exec(connection, 'COMMIT');
    } else if (this.pending.length) {
      const writes = this.pending;
      this.pending = [];
      const counts = await committer(writes);
      writes.forEach((w, i) => w.done?.(counts[i]));
    }
    this.finished = true;
  }

  async rollback(): Promise<void> {
    this.finished = true;
    this.pending = [];
    if (!this.opening) return;
    const connection = await this.opening.catch(() => null);
    if (this.member) {
      const member = this.member;
      this.member = null;
      member.rollback();
      return;
    }
    if (connection && !this.groups) await this.dialect.exec(connection, 'ROLLBACK').catch(() => {});
  }

  async release(): Promise<void> {
    this.finished = true;
    const connection = this.connection;
    this.connection = null;
    if (connection) await this.pool.releaseConnection(connection);
  }
}
