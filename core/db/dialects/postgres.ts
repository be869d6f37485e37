import type { Knex } from 'knex';
import { assertSafeField, type DeferredWrite, type Dialect, type JsonScalarType, type PoolClient } from './dialect.js';
import { groupCommitter, type GroupOutcome } from '../group-commit.js';

interface KnexClient {
  acquireConnection(): Promise<PgConnection>;
  releaseConnection(connection: PgConnection): Promise<unknown>;
}

interface PgConnection {
  query(config: { text: string; name: string; values: unknown[] }): Promise<{ rows: unknown[]; rowCount: number | null }>;
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

function query(connection: object, sql: string, values: readonly unknown[]) {
  const { text, name } = numbered(sql);
  return (connection as PgConnection).query({ text, name, values: values as unknown[] });
}

/**
 * Runs writes as one statement, each a data-modifying WITH item (`WITH w0 AS (INSERT ... RETURNING 1),
 * ...`), which PostgreSQL runs atomically without BEGIN/COMMIT, in one round trip. Such items share one
 * snapshot and do not see each other's rows, which queued inserts do not need; constraints are checked at
 * the end of the statement. Returns each write's row count.
 */
async function runAsOneStatement(connection: object, writes: readonly DeferredWrite[]): Promise<number[]> {
  if (writes.length === 1) return [(await query(connection, writes[0].sql, writes[0].bindings)).rowCount ?? 0];
  const items = writes.map((w, i) => `w${i} AS (${w.sql} RETURNING 1)`);
  const counts = writes.map((_, i) => `(SELECT count(*) FROM w${i}) AS n${i}`);
  const result = await query(connection, `WITH ${items.join(', ')} SELECT ${counts.join(', ')}`, writes.flatMap((w) => w.bindings));
  const row = result.rows[0] as Record<string, string>;
  return writes.map((_, i) => Number(row[`n${i}`]));
}

/**
 * The whole group as one statement, one round trip. Should it fail (one member's unique violation
 * fails them all, and nothing is written), each member is committed on its own, so that only the
 * guilty one fails.
 */
async function commitGroup(connection: object, group: DeferredWrite[][]): Promise<GroupOutcome[]> {
  if (group.length > 1) {
    try {
      const counts = await runAsOneStatement(connection, group.flat());
      let at = 0;
      return group.map((writes) => ({ counts: counts.slice(at, (at += writes.length)) }));
    } catch {
      // Retried member by member below.
    }
  }
  const outcomes: GroupOutcome[] = [];
  for (const writes of group) {
    try {
      outcomes.push({ counts: await runAsOneStatement(connection, writes) });
    } catch (error) {
      outcomes.push({ error });
    }
  }
  return outcomes;
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
  jsonText: (column: string) => `${column}::text`,
  toJson: (value) => JSON.stringify(value),
  fromJson: (value) => (typeof value === 'string' ? JSON.parse(value) : value) as any,
  likeOperator: 'ILIKE',
  isUniqueViolation: (error) => (error as { code?: string })?.code === '23505',
  isForeignKeyViolation: (error) => (error as { code?: string })?.code === '23503',
  beginSql: 'BEGIN',
  async exec(connection: unknown, sql: string) {
    await (connection as { query(sql: string): Promise<unknown> }).query(sql);
  },
  runWrites(connection: object, writes: readonly DeferredWrite[]) {
    // All sent at once: pg runs a connection's queries in the order they were given.
    return Promise.all(writes.map(async (w) => (await query(connection, w.sql, w.bindings)).rowCount ?? 0));
  },
  committer: (pool: PoolClient) => groupCommitter(pool, commitGroup),
  jsonArrayValues(column: string, alias: string) {
    return `jsonb_array_elements_text(${column}) AS ${alias}(value)`;
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
