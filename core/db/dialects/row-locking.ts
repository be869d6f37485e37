import type { Dialect } from './dialect.js';

/**
 * The locking clause of a queue's claim sub-select. PostgreSQL: `FOR UPDATE SKIP LOCKED`, so concurrent
 * claimers in several processes each take different rows without waiting. SQLite has no row locks: a single
 * UPDATE statement holds the write lock for its whole run (one process serves a SQLite file).
 */
export function skipLockedClause(dialect: Dialect): string {
  return dialect.name === 'postgres' ? ' for update skip locked' : '';
}

/**
 * The locking clause of a read that the transaction will write after (read-modify-write). PostgreSQL:
 * `FOR UPDATE`, so a concurrent modification waits for this one to commit. SQLite: nothing, as its write
 * transactions begin IMMEDIATE and hold the database's write lock from the start.
 */
export function forUpdateClause(dialect: Dialect): string {
  return dialect.name === 'postgres' ? ' for update' : '';
}

/** Rows of a raw `... returning *` statement, whatever the driver's result shape. */
export function rawRows<T = Record<string, unknown>>(result: unknown): T[] {
  if (Array.isArray(result)) return result as T[];
  return ((result as { rows?: T[] }).rows ?? []);
}
