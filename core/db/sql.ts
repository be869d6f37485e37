import type { Knex } from 'knex';
import type { DeferredWrite } from './dialects/dialect.js';

/** A query built with `Database.query` (a knex query builder or raw): it runs only when handed to `Sql.run`. */
export type Query<T> = Knex.ChainableInterface<T>;

/**
 * Where a repository's statements run: `Database.sql(rc)` is rc's transaction (`rc.trx`) when there is
 * one, else the pool (each statement on its own). Repositories build queries with `Database.query`,
 * which holds no connection, and run them here, so that a query can never escape its transaction.
 */
export interface Sql {
  /**
   * Runs a query built with `Database.query` and returns what knex gives for it (rows, `first()`'s row,
   * `pluck`, `returning`, a count of changed rows: knex's own per-engine result handling).
   */
  run<T>(query: Query<T>): Promise<T>;
  /** Runs a parameterised statement (`?` placeholders) and returns its rows, as a prepared statement. */
  rows<T = Record<string, unknown>>(sql: string, bindings?: readonly unknown[]): Promise<T[]>;
  /**
   * Queues a write whose result the code does not need (see DeferredWrite): in a transaction it runs
   * before COMMIT, in order with the transaction's other statements; on the pool, at once, on its own
   * (through group commit). `done` learns how many rows it wrote.
   */
  writeAtCommit(write: DeferredWrite): Promise<void>;
}
