import type { Knex } from 'knex';
import { countQuery } from '../query-count.js';
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

/** `INSERT INTO t (cols) VALUES (...)` and nothing after: one row per statement. */
const SINGLE_ROW_INSERT = /^(INSERT INTO [A-Za-z_][A-Za-z0-9_]* \([^()]*\)) VALUES (\([^;]*\))$/s;
const INSERT_SELECT = /^(INSERT INTO [A-Za-z_][A-Za-z0-9_]* \([^()]*\))\s+(SELECT\b[^;]*)$/s;

/** One data-modifying statement of the combined statement, standing for one write or several merged ones. */
interface Part {
  sql: string;
  bindings: unknown[];
  /** What RETURNING gives back: `1` per row, or the rowsOf column. */
  returning: string;
  /** The writes it stands for, by their index in the group. */
  members: number[];
}

/**
 * Writes of the same SQL become one statement: single-row inserts one multi-row INSERT, INSERT ... SELECTs
 * that mark their rows (rowsOf) one INSERT ... SELECT ... UNION ALL. A statement opens its table and
 * every index of it once, which for a group of small inserts costs more than inserting the rows.
 */
function mergeWrites(writes: readonly DeferredWrite[]): Part[] {
  const parts: Part[] = [];
  const bySql = new Map<string, Part>();
  writes.forEach((w, i) => {
    const values = SINGLE_ROW_INSERT.exec(w.sql);
    const select = w.rowsOf ? INSERT_SELECT.exec(w.sql) : null;
    const key = values || select ? `${w.rowsOf?.column ?? ''}\u0000${w.sql}` : null;
    let part = key ? bySql.get(key) : undefined;
    if (!part) {
      part = { sql: select ? `${select[1]} (${select[2]})` : w.sql, bindings: [], returning: w.rowsOf ? w.rowsOf.column : '1', members: [] };
      parts.push(part);
      if (key) bySql.set(key, part);
    } else if (values) {
      part.sql += `, ${values[2]}`;
    } else {
      part.sql += ` UNION ALL (${select![2]})`;
    }
    part.members.push(i);
    part.bindings.push(...w.bindings);
  });
  return parts;
}

/**
 * Runs writes as one statement of data-modifying WITH items (`WITH w0 AS (INSERT ... RETURNING 1), ...`),
 * which PostgreSQL runs atomically without BEGIN/COMMIT, in one round trip; writes of the same SQL are
 * merged first (mergeWrites). The items share one snapshot and do not see each other's rows, which queued
 * inserts do not need; constraints are checked at the end of the statement. Returns each write's row count.
 */
async function runAsOneStatement(connection: object, writes: readonly DeferredWrite[]): Promise<number[]> {
  if (writes.length === 1) return [(await query(connection, writes[0].sql, writes[0].bindings)).rowCount ?? 0];
  const parts = mergeWrites(writes);
  const items = parts.map((p, i) => `w${i} AS (${p.sql} RETURNING ${p.returning})`);
  const results = parts.map((p, i) => (p.returning === '1' ? `(SELECT count(*) FROM w${i}) AS n${i}` : `(SELECT array_agg(${p.returning}) FROM w${i}) AS n${i}`));
  const result = await query(connection, `WITH ${items.join(', ')} SELECT ${results.join(', ')}`, parts.flatMap((p) => p.bindings));
  const row = result.rows[0] as Record<string, string | unknown[] | null>;
  const counts = new Array<number>(writes.length).fill(0);
  parts.forEach((p, i) => {
    const value = row[`n${i}`];
    if (p.returning === '1') {
      // A single write, or merged single-row inserts: every row was written when the statement succeeded.
      if (p.members.length === 1) counts[p.members[0]] = Number(value);
      else for (const m of p.members) counts[m] = 1;
      return;
    }
    const marks = (value as unknown[] | null) ?? [];
    for (const m of p.members) counts[m] = marks.filter((v) => v === writes[m].rowsOf!.value).length;
  });
  return counts;
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

/** Socket errors of a connection that cannot be made or was lost. */
const NETWORK_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);
/** SQLSTATEs of a server that is shutting down, starting up or full (class 08, connection exceptions, is matched by prefix). */
const UNAVAILABLE_STATES = new Set(['57P01', '57P02', '57P03', '53300']);

export const postgresDialect: Dialect = {
  name: 'postgres',
  jsonField(field: string, type: JsonScalarType, column = 'data') {
    assertSafeField(field);
    const text = `(${column}->>'${field}')`;
    if (type === 'number' || type === 'integer') return `(${text}::numeric)`;
    if (type === 'boolean') return `(${text}::boolean)`;
    return text;
  },
  jsonSet(column: string, field: string, value: string, type: 'integer' | 'string') {
    assertSafeField(field);
    return `jsonb_set(${column}, '{${field}}', to_jsonb((${value})::${type === 'integer' ? 'bigint' : 'text'}))`;
  },
  jsonText: (column: string) => `${column}::text`,
  toJson: (value) => JSON.stringify(value),
  fromJson: (value) => (typeof value === 'string' ? JSON.parse(value) : value) as any,
  likeOperator: 'ILIKE',
  isUniqueViolation: (error) => (error as { code?: string })?.code === '23505',
  isForeignKeyViolation: (error) => (error as { code?: string })?.code === '23503',
  isUnavailable(error) {
    const { code, message, name } = (error ?? {}) as { code?: unknown; message?: unknown; name?: unknown };
    if (typeof code === 'string' && (NETWORK_ERRORS.has(code) || code.startsWith('08') || UNAVAILABLE_STATES.has(code))) return true;
    if (name === 'KnexTimeoutError') return true;
    return typeof message === 'string' && /^(Connection terminated|Client has encountered a connection error)/.test(message);
  },
  beginSql: 'BEGIN',
  // The oldest transaction of this database still running (outbox_events.txid defaults to
  // pg_current_xact_id()), from the statement's own snapshot. Not pg_snapshot_xmin: transaction ids are
  // shared by every database of the server, and a migration or DROP DATABASE running for a second in
  // another one held every change stream back that long. A running id is passed over only when
  // pg_stat_activity shows it to a backend of another database; anything it does not show (a prepared
  // transaction, an id not yet published) keeps holding the horizon, so it errs on the safe side.
  commitHorizon: '(SELECT coalesce(min(x::text::bigint), pg_snapshot_xmax(pg_current_snapshot())::text::bigint) '
    + 'FROM pg_snapshot_xip(pg_current_snapshot()) AS x WHERE NOT EXISTS (SELECT 1 FROM pg_stat_activity a '
    + 'WHERE a.backend_xid IS NOT NULL AND a.datname <> current_database() '
    + 'AND a.backend_xid::text::bigint = (x::text::bigint & 4294967295)))',
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
    countQuery();
    // Through knex's connection handling (the pool, or the transaction's connection), as a named
    // prepared statement, which pg parses once per connection.
    const client = (conn as unknown as { client: KnexClient }).client;
    const connection = await client.acquireConnection();
    try {
      return (await query(connection, sql, bindings)).rows as T[];
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
  documentIndexSql(table: string) {
    assertSafeField(table);
    return `CREATE INDEX IF NOT EXISTS ${table}_doc ON ${table} USING gin (data jsonb_path_ops)`;
  },
  jsonEdit(column: string, set: Record<string, unknown>, unset: string[]) {
    let sql = column;
    for (const field of unset) {
      assertSafeField(field);
      sql = `${sql} - '${field}'`;
    }
    const fields = Object.keys(set);
    for (const field of fields) assertSafeField(field);
    if (fields.length) return { sql: `(${sql}) || ?::jsonb`, bindings: [JSON.stringify(set)] };
    return { sql, bindings: [] };
  },
  refersTo(field: string, many: boolean, id: string) {
    assertSafeField(field);
    return { sql: 'data @> ?::jsonb', bindings: [JSON.stringify({ [field]: many ? [id] : id })] };
  },
  documentEquals(field: string, value: string | number | boolean) {
    assertSafeField(field);
    return { sql: 'data @> ?::jsonb', bindings: [JSON.stringify({ [field]: value })] };
  },
  async estimateRows(conn: Knex, sql: string, bindings: readonly unknown[]) {
    const [row] = await postgresDialect.rows<{ 'QUERY PLAN': Array<{ Plan: { 'Plan Rows': number } }> }>(conn, `EXPLAIN (FORMAT JSON) ${sql}`, bindings);
    const plan = row?.['QUERY PLAN'];
    return plan ? Number(plan[0].Plan['Plan Rows']) : null;
  },
};
