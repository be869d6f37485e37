import type { Knex } from 'knex';
import { assertSafeField, type Dialect, type JsonScalarType } from './dialect.js';

interface KnexClient {
  acquireConnection(): Promise<BetterSqliteConnection>;
  releaseConnection(connection: BetterSqliteConnection): Promise<unknown>;
}

interface Statement {
  reader: boolean;
  all(...args: unknown[]): unknown[];
  run(...args: unknown[]): unknown;
}

interface BetterSqliteConnection {
  prepare(sql: string): Statement;
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

export const sqliteDialect: Dialect = {
  name: 'sqlite',
  jsonField(field: string, _type: JsonScalarType, column = 'data') {
    assertSafeField(field);
    // json_extract yields SQL integers/reals/text and 1/0 for booleans, so one expression serves every type.
    return `json_extract(${column}, '$.${field}')`;
  },
  toJson: (value) => JSON.stringify(value),
  fromJson: (value) => (typeof value === 'string' ? JSON.parse(value) : value) as any,
  likeOperator: 'LIKE',
  isUniqueViolation(error) {
    const code = (error as { code?: string })?.code;
    return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
  },
  isForeignKeyViolation(error) {
    return (error as { code?: string })?.code === 'SQLITE_CONSTRAINT_FOREIGNKEY';
  },
  async rows<T>(conn: Knex, sql: string, bindings: readonly unknown[]): Promise<T[]> {
    // Through knex's own connection handling (the pool, or the transaction's connection), but with
    // prepared statements kept per connection: knex prepares every statement anew.
    const client = (conn as unknown as { client: KnexClient }).client;
    const connection = await client.acquireConnection();
    try {
      const statement = prepared(connection, sql);
      const args = bindings.map((v) => (v === true ? 1 : v === false ? 0 : v === undefined ? null : v));
      if (statement.reader) return statement.all(...args) as T[];
      statement.run(...args);
      return [];
    } finally {
      await client.releaseConnection(connection);
    }
  },
  // IMMEDIATE takes the write lock at once, so two processes on one file never deadlock upgrading a read lock.
  beginSql: 'BEGIN IMMEDIATE',
  async exec(connection: unknown, sql: string) {
    prepared(connection as BetterSqliteConnection, sql).run();
  },
  async externalChangeToken(conn: Knex) {
    // PRAGMA data_version changes when any other connection commits; the service itself holds one.
    const rows = await sqliteDialect.rows<{ data_version: number }>(conn, 'PRAGMA data_version', []);
    return Number(rows[0]?.data_version);
  },
  async analyze(knex: Knex, table: string) {
    assertSafeField(table);
    await knex.raw(`ANALYZE ${table}`);
  },
};
