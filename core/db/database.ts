import knexFactory, { type Knex } from 'knex';
import type { DeferredWrite, Dialect, PoolClient, WriteCommitter } from './dialects/dialect.js';
import type { RequestContext } from '../kernel/request-context.js';
import { localChangeFeed, postgresChangeFeed, type ChangeFeed } from './change-feed.js';

export type { DeferredWrite } from './dialects/dialect.js';

/**
 * The database handle that repositories use. `conn(rc)` is the request's transaction when there is one,
 * else the pool. `transaction(rc, fn)` runs fn with a copy of rc that carries the transaction; nested calls
 * join the outer transaction. Callbacks registered with rc.afterCommit run once the outermost commits.
 *
 * A transaction is a unit of work that opens lazily: writes queued with `insertAtCommit` / `writeAtCommit`
 * wait in it, and the first statement that needs the connection (any read, any other write) takes a
 * pooled connection, runs BEGIN and the queued writes, in order. A transaction that only queued writes
 * (a record and its outbox event, say) never holds a connection while its code runs: at commit its
 * writes go to the dialect's committer in one go, as a single statement on PostgreSQL and through group
 * commit on SQLite (see the dialects).
 */
export class Database {
  /** Cross-process news of shared state that processes keep in memory (core/db/change-feed.ts). */
  readonly changes: ChangeFeed;
  private readonly committer: WriteCommitter;
  private readonly idle: Knex.Transaction[] = [];

  /** `options.url`: the PostgreSQL URL, for the change feed's own LISTEN connection. */
  constructor(readonly knex: Knex, readonly dialect: Dialect, options: { url?: string; log?: { warn(obj: object, message: string): void } } = {}) {
    this.committer = dialect.committer(knex.client as unknown as PoolClient);
    this.changes = dialect.name === 'postgres' && options.url
      ? postgresChangeFeed(options.url, (rc, sql, bindings) => dialect.rows(this.conn(rc), sql, bindings), options.log)
      : localChangeFeed();
  }

  /** Closes the change feed and the pool. */
  async close(): Promise<void> {
    await this.changes.close();
    await this.knex.destroy();
  }

  conn(rc: RequestContext | null | undefined): Knex | Knex.Transaction {
    return rc?.trx ?? this.knex;
  }

  /**
   * Inserts one row, queued in rc's transaction until it commits or a statement needs the connection (see
   * writeAtCommit). Column names come from code, never from users.
   */
  insertAtCommit(rc: RequestContext | null | undefined, table: string, row: Record<string, unknown>, done?: (changes: number) => void): Promise<void> {
    return this.writeAtCommit(rc, { table, rows: [row], done });
  }

  /**
   * Queues a write whose result the transaction's code does not need: rows to insert, or an INSERT ... SELECT
   * (see DeferredWrite). It runs before COMMIT, in order with the transaction's other statements; `done`
   * learns how many rows it wrote. Outside a transaction it runs at once, on its own (through group commit).
   */
  async writeAtCommit(rc: RequestContext | null | undefined, write: DeferredWrite): Promise<void> {
    const unit = rc?.trx ? unitOf(rc.trx) : null;
    if (unit) {
      unit.pending.push(write);
      return;
    }
    if (rc?.trx) {
      // A transaction opened outside this class (knex.transaction): run the write in it now.
      const [changes] = await this.dialect.runWrites(this.knex.client as unknown as PoolClient, await acquire(rc.trx), [write]);
      write.done?.(changes);
      return;
    }
    const [changes] = await this.committer([write]);
    write.done?.(changes);
  }

  async transaction<T>(rc: RequestContext, fn: (rc: RequestContext) => Promise<T>): Promise<T> {
    if (rc.trx) return fn(rc);
    const unit = new UnitOfWork(this.knex.client as unknown as PoolClient, this.dialect);
    const trx = this.lease(unit);
    const afterCommit: Array<() => void | Promise<void>> = [];
    const whenDone: Array<() => void> = [];
    let result: T;
    try {
      result = await fn({ ...rc, trx, afterCommit: (cb) => { afterCommit.push(cb); }, whenDone: (cb) => { whenDone.push(cb); }, heldGates: new Set() });
      await unit.commit(this.committer);
    } catch (err) {
      await unit.rollback();
      throw err;
    } finally {
      await unit.release();
      this.giveBack(trx);
      for (const cb of whenDone) cb();
    }
    for (const cb of afterCommit) {
      try {
        await cb();
      } catch (err) {
        rc.logger?.error({ err }, 'after-commit callback failed');
      }
    }
    return result;
  }

  /**
   * A knex instance whose queries run in `unit`. Instances are reused: building one per transaction
   * (as knex.transaction() does) costs more than a small write.
   */
  private lease(unit: UnitOfWork): Knex.Transaction {
    const trx = this.idle.pop() ?? unitKnex(this.knex);
    (trx.client as unknown as UnitClient).unit = unit;
    return trx;
  }

  private giveBack(trx: Knex.Transaction): void {
    (trx.client as unknown as UnitClient).unit = null;
    if (this.idle.length < 100) this.idle.push(trx);
  }
}

/** One transaction: its queued writes and, once something needed it, its connection. */
class UnitOfWork {
  pending: DeferredWrite[] = [];
  private opening: Promise<object> | null = null;
  private connection: object | null = null;
  private finished = false;

  constructor(private readonly pool: PoolClient, private readonly dialect: Dialect) {}

  /** The transaction's connection: taken from the pool and BEGIN run on first use; queued writes run first. */
  async acquire(): Promise<object> {
    if (this.finished) throw new Error('The transaction has finished; use the rc it was opened with only inside it');
    this.opening ??= this.open();
    const connection = await this.opening;
    if (this.pending.length) {
      const writes = this.pending;
      this.pending = [];
      const counts = await this.dialect.runWrites(this.pool, connection, writes);
      writes.forEach((w, i) => w.done?.(counts[i]));
    }
    return connection;
  }

  private async open(): Promise<object> {
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
    if (this.opening) {
      const connection = await this.acquire();
      await this.dialect.exec(connection, 'COMMIT');
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
    if (connection) await this.dialect.exec(connection, 'ROLLBACK').catch(() => {});
  }

  async release(): Promise<void> {
    this.finished = true;
    const connection = this.connection;
    this.connection = null;
    if (connection) await this.pool.releaseConnection(connection);
  }
}

interface UnitClient {
  unit: UnitOfWork | null;
}

function unitOf(trx: Knex | Knex.Transaction): UnitOfWork | null {
  return (trx.client as unknown as Partial<UnitClient>).unit ?? null;
}

/** The driver connection behind a knex instance (a pool's or a transaction's). */
function acquire(trx: Knex | Knex.Transaction): Promise<object> {
  return (trx.client as unknown as PoolClient).acquireConnection();
}

/** A knex instance whose client hands out the connection of its current unit of work. */
function unitKnex(base: Knex): Knex.Transaction {
  const PoolClientClass = base.client.constructor as new (config: Knex.Config) => Knex.Client;
  class TransactionClient extends PoolClientClass {
    unit: UnitOfWork | null = null;
    override async acquireConnection() {
      if (!this.unit) throw new Error('The transaction has finished; use the rc it was opened with only inside it');
      return this.unit.acquire();
    }
    override async releaseConnection() {}
  }
  // No `connection` in the config: this client opens no pool and no driver of its own.
  return knexFactory({ client: TransactionClient as unknown as typeof Knex.Client, useNullAsDefault: true }) as unknown as Knex.Transaction;
}
