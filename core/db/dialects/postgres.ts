import type { Knex } from 'knex';
import { assertSafeField, type Dialect, type JsonScalarType } from './dialect.js';

interface KnexClient {
  acquireConnection(): Promise<PgConnection>;
  releaseConnection(connection: PgConnection): Promise<unknown>;
}

interface PgConnection {
  query(config: { text: string; name: string; values: unknown[] }): Promise<{ rows: unknown[] }>;
}

const numberedCache = new Map<string, { text: string; name: string }>();

/** `?` placeholders become `$1, $2, ...`; each distinct statement gets a stable name. */
function numbered(sql: string): { text: string; name: string } {
  let found = numberedCache.get(sql);
  if (!found) {
    let n = 0;
    found = { text: sql.replace(/\?/g, () => `$${++n}`), name: `hp_${numberedCache.size + 1}` };
    if (numberedCache.size < 5000) numberedCache.set(sql, found);
    else found = { text: found.text, name: '' };
  }
  return found;
}

export const postgresDialect: Dialect = {
  name: 'postgres',
  jsonField(field: string, type: JsonScalarType, column = 'data') {
    assertSafeField(field);
    const text = `(${column}->>'${field}')`;
    if (type === 'number' || type === 'integer') return `(${text}::numeric)`;
    if (type === 'boolean') return `(${text}::boolean)`;
    return text;
  },
  toJson: (value) => JSON.stringify(value),
  fromJson: (value) => (typeof value === 'string' ? JSON.parse(value) : value) as any,
  likeOperator: 'ILIKE',
  isUniqueViolation: (error) => (error as { code?: string })?.code === '23505',
  isForeignKeyViolation: (error) => (error as { code?: string })?.code === '23503',
  beginSql: 'BEGIN',
  async exec(connection: unknown, sql: string) {
    await (connection as { query(sql: string): Promise<unknown> }).query(sql);
  },
  async rows<T>(conn: Knex, sql: string, bindings: readonly unknown[]): Promise<T[]> {
    // Through knex's connection handling (the pool, or the transaction's connection), as a named
    // prepared statement, which pg parses once per connection.
    const client = (conn as unknown as { client: KnexClient }).client;
    const connection = await client.acquireConnection();
    try {
      const { text, name } = numbered(sql);
      return (await connection.query({ text, name, values: bindings as unknown[] })).rows as T[];
    } finally {
      await client.releaseConnection(connection);
    }
  },
  async externalChangeToken() {
    // Several processes share one PostgreSQL: nothing tells cheaply that another one wrote.
    return null;
  },
  async analyze(knex: Knex, table: string) {
    assertSafeField(table);
    await knex.raw(`ANALYZE ${table}`);
  },
};
