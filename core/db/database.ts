import knexFactory, { type Knex } from 'knex';
import type { DeferredWrite, Dialect, PoolClient, WriteCommitter } from './dialects/dialect.js';
import type { RequestContext } from '../base/request-context.js';
import { localChangeFeed, postgresChangeFeed, type ChangeFeed } from './change-feed.js';
import { countQuery } from './query-count.js';
import { uniqueConflict } from './translate-error.js';
import type { Query, Sql } from './sql.js';
import type { TransactionGroups } from './transaction-groups.js';
import { UnitOfWork } from './unit-of-work.js';

export type { DeferredWrite } from './dialects/dialect.js';
export type { Query, Sql } from './sql.js';

/**
 * The database handle that repositories use. `sql(rc)` is where rc's statements run: its transaction when
 * there is one, else the pool; queries are built with `query`, which runs nothing on its own.
 * `transaction(rc, fn)` runs fn with a copy of rc that carries the transaction (`rc.trx`, a UnitOfWork);
 * nested calls join the outer transaction. Callbacks registered with rc.afterCommit run once the outermost
 * commits.
 *
 * A transaction is a unit of work that opens lazily: writes queued with `writeAtCommit` wait in it, and the
 * first statement that needs the connection (any read, any other write) takes a pooled connection, runs
 * BEGIN and the queued writes, in order. A transaction that only queued writes (a record and its outbox
 * event, say) never holds a connection while its code runs: at commit its writes go to the dialect's
 * committer in one go, as a single statement on PostgreSQL and through group commit on SQLite (see the
 * dialects).
 */
export class Database {
  /** Cross-process news of shared state that processes keep in memory (core/db/change-feed.ts). */
  readonly changes: ChangeFeed;
  /**
   * Builds queries (knex's query builder and raw) to run through `sql(rc).run`. It holds no connection:
   * a query awaited by itself fails at once ("Unable to acquire a connection") instead of running outside
   * rc's transaction.
   */
  readonly query: Knex;
  private readonly pool: PoolClient;
  private readonly committer: WriteCommitter;
  private readonly groups: TransactionGroups | null;
  private readonly poolSql: Sql;

  /** `options.url`: the PostgreSQL URL, for the change feed's own LISTEN connection. */
  constructor(readonly knex: Knex, readonly dialect: Dialect, options: { url?: string; log?: { warn(obj: object, message: string): void } } = {}) {
    this.pool = knex.client as unknown as PoolClient;
    this.committer = dialect.committer(this.pool);
    this.groups = dialect.transactionGroups?.(this.pool) ?? null;
    // The pool's client class and options, without a connection: no pool and no driver of its own.
    const { useNullAsDefault, log } = knex.client.config as Knex.Config;
    this.query = knexFactory({ client: knex.client.constructor as typeof Knex.Client, useNullAsDefault, log });
    this.poolSql = new PoolSql(this.pool, dialect, this.committer);
    this.changes = dialect.name === 'postgres' && options.url
      ? postgresChangeFeed(options.url, (rc, sql, bindings) => this.sql(rc).rows(sql, bindings), options.log)
      : localChangeFeed();
  }

  /** Closes the change feed and the pool. */
  async close(): Promise<void> {
    this.groups?.close();
    await this.changes.close();
    await this.knex.destroy();
  }

  /** Where rc's statements run: its transaction when there is one, else the pool. */
  sql(rc: RequestContext | null | undefined): Sql {
    return rc?.trx ?? this.poolSql;
  }

  /**
   * Inserts one row, queued in rc's transaction until it commits or a statement needs the connection (see
   * writeAtCommit). Column names come from code, never from users.
   */
  insertAtCommit(rc: RequestContext | null | undefined, table: string, row: Record<string, unknown>, done?: (changes: number) => void): Promise<void> {
    return this.sql(rc).writeAtCommit({ table, rows: [row], done });
  }

  /** `sql(rc).writeAtCommit(write)` (see Sql.writeAtCommit). */
  writeAtCommit(rc: RequestContext | null | undefined, write: DeferredWrite): Promise<void> {
    return this.sql(rc).writeAtCommit(write);
  }

  /** The planner's estimate of the rows a SELECT returns, in rc's transaction; null when the engine gives none cheaply. */
  estimateRows(rc: RequestContext | null | undefined, sql: string, bindings: readonly unknown[]): Promise<number | null> {
    return this.dialect.estimateRows(this.connections(rc), sql, bindings);
  }

  /**
   * Runs a SELECT in rc's transaction (else on the pool), handing each row to `onRow` as the driver reads it
   * instead of collecting them.
   */
  eachRow(rc: RequestContext | null | undefined, sql: string, bindings: readonly unknown[], onRow: (row: unknown[]) => void): Promise<number> {
    return this.dialect.eachRow(this.connections(rc), sql, bindings, onRow);
  }

  /** See Dialect.externalChangeToken; read in rc's transaction when there is one. */
  externalChangeToken(rc: RequestContext | null | undefined): Promise<number | null> {
    return this.dialect.externalChangeToken(this.connections(rc));
  }

  /** See Dialect.snapshotToken; read in rc's transaction when there is one. */
  snapshotToken(rc: RequestContext | null | undefined): Promise<number | string | null> {
    return this.dialect.snapshotToken(this.connections(rc));
  }

  async transaction<T>(rc: RequestContext, fn: (rc: RequestContext) => Promise<T>): Promise<T> {
    if (rc.trx) return fn(rc);
    const unit = new UnitOfWork(this.pool, this.dialect, this.groups);
    const afterCommit: Array<() => void | Promise<void>> = [];
    const whenDone: Array<() => void> = [];
    let result: T;
    try {
      result = await fn({ ...rc, trx: unit, afterCommit: (cb) => { afterCommit.push(cb); }, whenDone: (cb) => { whenDone.push(cb); }, heldGates: new Set() });
      await unit.commit(this.committer);
    } catch (err) {
      await unit.rollback();
      // One error for a taken unique value on both engines, whoever wrote (see uniqueConflict).
      throw uniqueConflict(err) ?? err;
    } finally {
      await unit.release();
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

  /** The connections rc's statements take: its transaction's, else the pool's. */
  private connections(rc: RequestContext | null | undefined): PoolClient {
    return rc?.trx ? (rc.trx as UnitOfWork) : this.pool;
  }
}

/** The pool as an Sql: each statement takes a pooled connection and gives it back. */
class PoolSql implements Sql {
  constructor(private readonly pool: PoolClient, private readonly dialect: Dialect, private readonly committer: WriteCommitter) {}

  async run<T>(query: Query<T>): Promise<T> {
    countQuery();
    const connection = await this.pool.acquireConnection();
    try {
      return await query.connection(connection);
    } finally {
      await this.pool.releaseConnection(connection);
    }
  }

  rows<T = Record<string, unknown>>(sql: string, bindings: readonly unknown[] = []): Promise<T[]> {
    return this.dialect.rows<T>(this.pool, sql, bindings);
  }

  async writeAtCommit(write: DeferredWrite): Promise<void> {
    const [changes] = await this.committer([write]);
    write.done?.(changes);
  }
}
