import type { Knex } from 'knex';
import { countQuery } from '../query-count.js';
import {
  assertSafeField, counterStatements, safeTimeZone, isCounterWrite, sumCounters, writeStatement, type DeferredWrite, type Dialect, type JsonScalarType, type PoolClient,
} from './dialect.js';
import { groupCommitter, type GroupOutcome } from '../group-commit.js';
import { TransactionGroups } from '../transaction-groups.js';

interface KnexClient {
  acquireConnection(): Promise<BetterSqliteConnection>;
  releaseConnection(connection: BetterSqliteConnection): Promise<unknown>;
}

interface Statement {
  reader: boolean;
  all(...args: unknown[]): unknown[];
  run(...args: unknown[]): { changes: number };
  raw(toggle?: boolean): Statement;
  iterate(...args: unknown[]): IterableIterator<unknown>;
}

interface BetterSqliteConnection {
  prepare(sql: string): Statement;
  readonly inTransaction: boolean;
}

const statementCache = new WeakMap<BetterSqliteConnection, Map<string, Statement>>();

function prepared(connection: BetterSqliteConnection, sql: string): Statement {
  let cache = statementCache.get(connection);
  if (!cache) statementCache.set(connection, (cache = new Map()));
  let statement = cache.get(sql);
  if (!statement) {
    statement = connection.prepare(sql);
    if (cache.size >= 1000) cache.delete(cache.keys().next().value!);
    cache.set(sql, statement);
  }
  return statement;
}

/** SQLite stores booleans as 1/0 and has no undefined. */
function driverArgs(bindings: readonly unknown[]): unknown[] {
  return bindings.map((v) => (v === true ? 1 : v === false ? 0 : v === undefined ? null : v));
}

/** Runs a statement of queued writes. */
function run(connection: BetterSqliteConnection, { sql, bindings }: { sql: string; bindings: unknown[] }): number {
  return prepared(connection, sql).run(...driverArgs(bindings)).changes;
}

/**
 * Runs queued writes in order, their counter writes summed into one statement at the end (the order of
 * additions does not matter); a counter write counts 1.
 */
function runWritesNow(connection: BetterSqliteConnection, writes: readonly DeferredWrite[]): number[] {
  const counts = writes.map((w) => (isCounterWrite(w) ? 1 : run(connection, writeStatement(w, 'shared'))));
  for (const statement of counterStatements(sumCounters(writes), 'shared')) run(connection, statement);
  return counts;
}

/**
 * One SQLite transaction for the whole group, each member with more than one statement in its own savepoint,
 * so that one that fails (a unique violation, say) is rolled back alone and the others commit (a single
 * statement that fails undoes only itself). The counter writes of the members that succeeded go last, summed
 * per counter row, one statement for the group. It runs synchronously: nothing else runs on the connection
 * in between. A commit costs SQLite far more than a request's few small writes (the WAL frames of every page
 * touched), and the group pays for it once.
 */
async function commitGroup(connection: object, group: DeferredWrite[][]): Promise<GroupOutcome[]> {
  const db = connection as BetterSqliteConnection;
  const exec = (sql: string) => prepared(db, sql).run();
  const outcomes: GroupOutcome[] = [];
  const counters: DeferredWrite[] = [];
  try {
    exec('BEGIN IMMEDIATE');
    for (const writes of group) {
      const statements = writes.filter((w) => !isCounterWrite(w)).length;
      if (statements > 1) exec('SAVEPOINT hp_member');
      try {
        outcomes.push({ counts: writes.map((w) => (isCounterWrite(w) ? 1 : run(db, writeStatement(w, 'shared')))) });
        if (statements > 1) exec('RELEASE hp_member');
        for (const w of writes) if (isCounterWrite(w)) counters.push(w);
      } catch (error) {
        // Some errors (disk full, I/O) roll back the whole transaction: then the whole group fails.
        if (!db.inTransaction) throw error;
        if (statements > 1) {
          exec('ROLLBACK TO hp_member');
          exec('RELEASE hp_member');
        }
        outcomes.push({ error });
      }
    }
    for (const statement of counterStatements(sumCounters(counters), 'shared')) run(db, statement);
    exec('COMMIT');
  } catch (error) {
    if (db.inTransaction) exec('ROLLBACK');
    throw error;
  }
  return outcomes;
}

/** What rowsOf reads of knex's tarn pool (its `free` list is tarn's, not part of its documented API). */
interface TarnPool {
  numUsed(): number;
  numPendingAcquires(): number;
  numPendingCreates(): number;
  free: Array<{ resource: BetterSqliteConnection }>;
}

/**
 * The pool's connection when no one holds it or waits for it (a transaction holds it from BEGIN to COMMIT),
 * else null; also null for a transaction's connections (a UnitOfWork has no tarn pool).
 */
function idleConnection(conn: PoolClient): BetterSqliteConnection | null {
  const pool = (conn as { pool?: Partial<TarnPool> }).pool;
  if (!pool || !Array.isArray(pool.free) || pool.free.length !== 1) return null;
  const tarn = pool as TarnPool;
  if (tarn.numUsed() !== 0 || tarn.numPendingAcquires() !== 0 || tarn.numPendingCreates() !== 0) return null;
  const connection = tarn.free[0]!.resource;
  // One knex would no longer hand out (its pool validation refuses it): let the pool replace it. And never
  // one inside a transaction (transactions and their groups hold the connection until COMMIT; this is a guard).
  return (connection as { __knex__disposed?: unknown }).__knex__disposed || connection.inTransaction ? null : connection;
}

function runStatement<T>(connection: BetterSqliteConnection, sql: string, bindings: readonly unknown[]): T[] {
  const statement = prepared(connection, sql);
  const args = driverArgs(bindings);
  if (statement.reader) return statement.all(...args) as T[];
  statement.run(...args);
  return [];
}

/**
 * Hands each row of a SELECT to `onRow` (its values in order) as better-sqlite3 steps to it, synchronously,
 * so nothing can take the connection in between. A statement of its own (raw mode is the statement's).
 */
function eachRowOf(connection: BetterSqliteConnection, sql: string, bindings: readonly unknown[], onRow: (row: unknown[]) => void): number {
  const statement = prepared(connection, `${sql} -- rows`).raw(true);
  let count = 0;
  for (const row of statement.iterate(...driverArgs(bindings))) {
    count += 1;
    onRow(row as unknown[]);
  }
  return count;
}

/**
 * On a connection of the pool or of the transaction, with prepared statements kept per connection: knex
 * prepares every statement anew. On the pool's connection while it is idle, the statement runs at once:
 * better-sqlite3 runs it synchronously, so nothing can take the connection in between, and acquiring and
 * releasing it through tarn (a pending operation with its timeout timer and a handful of promises, per
 * statement) would change nothing but the cost.
 */
function rowsOf<T>(conn: PoolClient, sql: string, bindings: readonly unknown[]): Promise<T[]> {
  return onConnection(conn, (connection) => runStatement<T>(connection, sql, bindings));
}

/**
 * Runs `use` on the pool's connection at once if it is idle (see rowsOf), else on one acquired from `conn`.
 * The answer is a settled promise when the connection was idle: no async function layers per statement (each
 * returned promise one of them resolves with costs the request further microtasks).
 */
function onConnection<T>(conn: PoolClient, use: (connection: BetterSqliteConnection) => T): Promise<T> {
  const idle = idleConnection(conn);
  if (!idle) return onAcquired(conn, use);
  try {
    return Promise.resolve(use(idle));
  } catch (err) {
    return Promise.reject(err);
  }
}

async function onAcquired<T>(conn: PoolClient, use: (connection: BetterSqliteConnection) => T): Promise<T> {
  const client = conn as unknown as KnexClient;
  const connection = await client.acquireConnection();
  try {
    return use(connection);
  } finally {
    await client.releaseConnection(connection);
  }
}

export const sqliteDialect: Dialect = {
  name: 'sqlite',
  jsonField(field: string, _type: JsonScalarType, column = 'data') {
    assertSafeField(field);
    // json_extract yields SQL integers/reals/text and 1/0 for booleans, so one expression serves every type.
    return `json_extract(${column}, '$.${field}')`;
  },
  jsonSet(column: string, field: string, value: string) {
    assertSafeField(field);
    return `json_set(${column}, '$.${field}', ${value})`;
  },
  jsonText: (column: string) => column,
  // hp_local_day is registered on every connection (core/db/connect.ts, core/base/time-zones.ts).
  localDay: (expression: string, timeZone: string) => `hp_local_day(${expression}, '${safeTimeZone(timeZone)}')`,
  toJson: (value) => JSON.stringify(value),
  fromJson: (value) => (typeof value === 'string' ? JSON.parse(value) : value) as any,
  likeOperator: 'LIKE',
  fixedParameter: '+?',
  rowsPerInsert: 400,
  isUniqueViolation(error) {
    const code = (error as { code?: string })?.code;
    return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
  },
  isForeignKeyViolation(error) {
    return (error as { code?: string })?.code === 'SQLITE_CONSTRAINT_FOREIGNKEY';
  },
  isUnavailable(error) {
    // Locked past busy_timeout by another process, or the file cannot be opened or read.
    const code = (error as { code?: unknown })?.code;
    return typeof code === 'string' && /^SQLITE_(BUSY|LOCKED|CANTOPEN|IOERR)/.test(code);
  },
  rows<T>(conn: PoolClient, sql: string, bindings: readonly unknown[]): Promise<T[]> {
    countQuery();
    return rowsOf<T>(conn, sql, bindings);
  },
  async eachRow(conn: PoolClient, sql: string, bindings: readonly unknown[], onRow: (row: unknown[]) => void): Promise<number> {
    countQuery();
    return onConnection(conn, (connection) => eachRowOf(connection, sql, bindings, onRow));
  },
  async runWrites(_client: PoolClient, connection: object, writes: readonly DeferredWrite[], then?: 'COMMIT') {
    const counts = runWritesNow(connection as BetterSqliteConnection, writes);
    if (then) prepared(connection as BetterSqliteConnection, then).run();
    return counts;
  },
  committer: (pool: PoolClient) => groupCommitter(pool, commitGroup),
  // One connection, one writer at a time: transactions that follow each other share a COMMIT.
  transactionGroups(pool: PoolClient) {
    const filename = (pool as unknown as { config?: { connection?: { filename?: string } } }).config?.connection?.filename;
    return new TransactionGroups(pool, {
      exec: (connection, sql) => { prepared(connection as BetterSqliteConnection, sql).run(); },
      inTransaction: (connection) => (connection as BetterSqliteConnection).inTransaction,
    }, filename && filename !== ':memory:' ? filename : null);
  },
  jsonArrayValues(column: string, alias: string) {
    // json_each yields a `value` column.
    return `json_each(${column}) AS ${alias}`;
  },
  // IMMEDIATE takes the write lock at once, so two processes on one file never deadlock upgrading a read lock.
  beginSql: 'BEGIN IMMEDIATE',
  // One writer at a time: a row is visible only once committed, in commit order; txid is always 0.
  commitHorizon: '1',
  async exec(connection: unknown, sql: string) {
    prepared(connection as BetterSqliteConnection, sql).run();
  },
  async externalChangeToken(conn: PoolClient) {
    // PRAGMA data_version changes when any other connection commits; the service itself holds one.
    // Not counted as a query of the request (core/db/query-count.ts): it is read every 10 ms, not per request.
    const rows = await rowsOf<{ data_version: number }>(conn, 'PRAGMA data_version', []);
    return Number(rows[0]?.data_version);
  },
  snapshotToken(conn: PoolClient) {
    return this.externalChangeToken(conn);
  },
  async analyze(knex: Knex, table: string) {
    assertSafeField(table);
    await knex.raw(`ANALYZE ${table}`);
  },
  // No index over a whole JSON document: a field is served only by an index declared for it.
  documentIndexSql: () => null,
  refersTo(field: string, many: boolean, id: string) {
    assertSafeField(field);
    if (!many) return { sql: `json_extract(data, '$.${field}') = ?`, bindings: [id] };
    // No index holds an array's elements on SQLite: each record of the tenant is read. Its text is first
    // searched for the id as a JSON string (memchr-fast), and only a record that holds it is parsed; ids
    // that a JSON writer might escape (quotes, backslashes, control and non-ASCII characters) go without.
    const contains = `EXISTS (SELECT 1 FROM json_each(data, '$.${field}') WHERE value = ?)`;
    if (!/^[\x20-\x7e]*$/.test(id) || /["\\]/.test(id)) return { sql: contains, bindings: [id] };
    return { sql: `instr(data, ?) > 0 AND ${contains}`, bindings: [`"${id}"`, id] };
  },
  jsonEdit(column: string, set: Record<string, unknown>, unset: string[]) {
    let sql = column;
    for (const field of unset) assertSafeField(field);
    if (unset.length) sql = `json_remove(${sql}, ${unset.map((f) => `'$.${f}'`).join(', ')})`;
    const fields = Object.keys(set);
    for (const field of fields) assertSafeField(field);
    if (fields.length) sql = `json_set(${sql}, ${fields.map((f) => `'$.${f}', json(?)`).join(', ')})`;
    return { sql, bindings: fields.map((f) => JSON.stringify(set[f])) };
  },
  documentEquals: () => null,
  estimateRows: async () => null,
};
