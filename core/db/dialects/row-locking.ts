import type { Dialect } from './dialect.js';

/**
 * The locking clause of a queue's claim sub-select. PostgreSQL: `FOR UPDATE SKIP LOCKED`, so concurrent
 * claimers in several processes each take different rows without waiting. SQLite has no row locks: a single
 * UPDATE statement holds the write lock for its whole run (one process serves a SQLite file).
 */
export function skipLockedClause(dialect: Dialect): string {
  return dialect.name === 'postgres' ? ' for update skip locked' : '';
}

/** Rows of a raw `... returning *` statement, whatever the driver's result shape. */
export function rawRows<T = Record<string, unknown>>(result: unknown): T[] {
  if (Array.isArray(result)) return result as T[];
  return ((result as { rows?: T[] }).rows ?? []);
}
