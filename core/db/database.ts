import knexFactory, { type Knex } from 'knex';
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
    // One pooled connection is held for the whole transaction. BEGIN and COMMIT run straight on it, and the
    // callback gets a knex bound to it: knex.transaction() builds a new knex instance and runs BEGIN/COMMIT
    // through its query pipeline for every transaction, which cost more than the writes themselves.
    const client = this.knex.client as unknown as PoolClient;
    const connection = await client.acquireConnection();
    const afterCommit: Array<() => void | Promise<void>> = [];
    let result: T;
    try {
      await this.dialect.exec(connection, this.dialect.beginSql);
      try {
        const inner: RequestContext = { ...rc, trx: boundKnex(this.knex, connection), afterCommit: (cb) => { afterCommit.push(cb); } };
        result = await fn(inner);
        await this.dialect.exec(connection, 'COMMIT');
      } catch (err) {
        await this.dialect.exec(connection, 'ROLLBACK').catch(() => {});
        throw err;
      }
    } finally {
      await client.releaseConnection(connection);
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
}

interface PoolClient {
  acquireConnection(): Promise<object>;
  releaseConnection(connection: object): Promise<unknown>;
}

/** A knex instance per driver connection whose queries all run on that connection (built once, reused). */
const boundInstances = new WeakMap<object, Knex.Transaction>();

function boundKnex(base: Knex, connection: object): Knex.Transaction {
  let bound = boundInstances.get(connection);
  if (!bound) {
    const PoolClientClass = base.client.constructor as new (config: Knex.Config) => Knex.Client;
    class BoundClient extends PoolClientClass {
      override async acquireConnection() {
        return connection;
      }
      override async releaseConnection() {}
    }
    // No `connection` in the config: the bound client opens no pool and no driver of its own.
    bound = knexFactory({ client: BoundClient as unknown as typeof Knex.Client, useNullAsDefault: true }) as unknown as Knex.Transaction;
    boundInstances.set(connection, bound);
  }
  return bound;
}
