import type { Knex } from 'knex';
import type { Dialect } from './dialects/dialect.js';
import type { RequestContext } from '../kernel/request-context.js';

/**
 * The database handle that repositories use. `conn(rc)` is the request's transaction when there is one,
 * else the pool. `transaction(rc, fn)` runs fn with a copy of rc that carries the transaction; nested calls
 * join the outer transaction. Callbacks registered with rc.afterCommit run once the outermost commits.
 */
export class Database {
  constructor(readonly knex: Knex, readonly dialect: Dialect) {}

  conn(rc: RequestContext | null | undefined): Knex | Knex.Transaction {
    return rc?.trx ?? this.knex;
  }

  /**
   * Inserts one row as a cached prepared statement (no query builder): for hot write paths such as the
   * outbox. Joins rc's transaction when there is one. Column names come from code, never from users.
   */
  async insert(rc: RequestContext | null | undefined, table: string, row: Record<string, unknown>): Promise<void> {
    const columns = Object.keys(row);
    const sql = `INSERT INTO ${table} (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`;
    await this.dialect.rows(this.conn(rc), sql, columns.map((c) => row[c]));
  }

  async transaction<T>(rc: RequestContext, fn: (rc: RequestContext) => Promise<T>): Promise<T> {
    if (rc.trx) return fn(rc);
    const afterCommit: Array<() => void | Promise<void>> = [];
    const result = await this.knex.transaction(async (trx) => {
      const inner: RequestContext = { ...rc, trx, afterCommit: (cb) => { afterCommit.push(cb); } };
      return fn(inner);
    });
    for (const cb of afterCommit) {
      try {
        await cb();
      } catch (err) {
        rc.logger?.error({ err }, 'after-commit callback failed');
      }
    }
    return result;
  }
}
