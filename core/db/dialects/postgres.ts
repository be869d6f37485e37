import type { Knex } from 'knex';
import type { QueryArrayConfig } from 'pg';
import { countQuery } from '../query-count.js';
import {
  assertSafeField, safeTimeZone, columnsOf, counterStatements, insertHead, isCounterWrite, isRowsWrite, isStatementWrite, rowPlaceholders, sameColumns, sumCounters, writeStatement,
  type DeferredWrite, type Dialect, type JsonScalarType, type PoolClient, type RowsWrite, type SelectWrite,
} from './dialect.js';
import { groupCommitter, type GroupOutcome } from '../group-commit.js';

interface KnexClient {
  acquireConnection(): Promise<PgConnection>;
  releaseConnection(connection: PgConnection): Promise<unknown>;
  positionBindings(sql: string): string;
}

interface PgConnection {
  query(config: { text: string; name: string; values: unknown[] }): Promise<{ rows: unknown[]; rowCount: number | null }>;
}

const numberedCache = new Map<string, { text: string; name: string }>();

/** `?` placeholders become `$1, $2, ...` (by knex); each distinct statement gets a stable name. */
function numbered(client: Pick<PoolClient, 'positionBindings'>, sql: string): { text: string; name: string } {
  let found = numberedCache.get(sql);
  if (!found) {
    found = { text: client.positionBindings(sql), name: `hp_${numberedCache.size + 1}` };
    if (numberedCache.size < 5000) numberedCache.set(sql, found);
    else found = { text: found.text, name: '' };
  }
  return found;
}

function query(client: Pick<PoolClient, 'positionBindings'>, connection: object, sql: string, values: readonly unknown[]) {
  const { text, name } = numbered(client, sql);
  return (connection as PgConnection).query({ text, name, values: values as unknown[] });
}

/** What pg's client holds of its pipeline mode (pg >= 8.16; `_sentQueryQueue`: sent, not yet answered). */
interface PipelinedConnection extends PgConnection {
  pipeline?: boolean;
  readyForQuery?: boolean;
  _queryQueue?: unknown[];
  _sentQueryQueue?: unknown[];
  once(event: 'drain', listener: () => void): void;
}

/**
 * Runs `sends` on one connection in one round trip: with pg's pipeline mode turned on for them, when the
 * connection is idle (else, and on a pg without it, one after the other). Queuing queries on a busy
 * client (what Promise.all over client.query did) is deprecated and goes away in pg 9 ("Calling
 * client.query() when the client is already executing a query"). Pipeline mode is turned off again once
 * every query sent in it was answered, so the connection's other queries run as before.
 */
async function pipelined<T>(connection: PgConnection, sends: Array<() => Promise<T>>): Promise<T[]> {
  const pg = connection as PipelinedConnection;
  const idle = pg.pipeline === false && pg.readyForQuery === true && pg._queryQueue?.length === 0 && pg._sentQueryQueue?.length === 0;
  if (sends.length < 2 || !idle) {
    const results: T[] = [];
    for (const send of sends) results.push(await send());
    return results;
  }
  pg.pipeline = true;
  let settled: Array<PromiseSettledResult<T>>;
  try {
    settled = await Promise.allSettled(sends.map((send) => send()));
  } finally {
    // Whatever else was queued meanwhile went out in the pipeline too: wait for its answers before leaving it.
    if (pg._sentQueryQueue?.length || pg.readyForQuery === false) await new Promise<void>((resolve) => pg.once('drain', resolve));
    pg.pipeline = false;
  }
  const failed = settled.find((r) => r.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.map((r) => (r as PromiseFulfilledResult<T>).value);
}

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
 * Writes of the same shape become one statement, and counter writes, summed per counter, one more (their
 * parts stand for no member: a counter write counts 1): rows into the same table and columns, one multi-row
 * INSERT (rows that skip conflicts stay alone: only their own statement can tell how many it wrote);
 * INSERT ... SELECTs of the same SELECT into the same table and columns that mark their rows (rowsOf), one
 * INSERT ... SELECT ... UNION ALL. A statement opens its table and every index of it once, which for a group
 * of small inserts costs more than inserting the rows. Parts are found by table or SELECT text, then by
 * comparing columns: no key is joined for each write (a group holds several per request).
 */
function mergeWrites(writes: readonly DeferredWrite[]): Part[] {
  const parts: Part[] = [];
  const byTable = new Map<string, Array<Part & { columns: readonly string[] }>>();
  const bySelect = new Map<string, Array<Part & { write: SelectWrite }>>();
  writes.forEach((w, i) => {
    if (isCounterWrite(w)) return;
    if (isRowsWrite(w) && !w.skipConflictsOn) {
      const columns = columnsOf(w);
      const same = byTable.get(w.table);
      const part = same?.find((p) => sameColumns(p.columns, columns));
      if (part) {
        const row = rowPlaceholders(columns.length);
        for (const r of w.rows) {
          part.sql += `, ${row}`;
          for (const c of columns) part.bindings.push(r[c]);
        }
        part.members.push(i);
      } else {
        const created = { ...writeStatement(w, 'own'), returning: '1', members: [i], columns };
        parts.push(created);
        if (same) same.push(created);
        else byTable.set(w.table, [created]);
      }
      return;
    }
    if (isRowsWrite(w) || isStatementWrite(w)) {
      parts.push({ ...writeStatement(w, 'own'), returning: '1', members: [i] });
      return;
    }
    const same = w.rowsOf ? bySelect.get(w.select) : undefined;
    const part = same?.find((p) => p.write.table === w.table && p.write.rowsOf!.column === w.rowsOf!.column && sameColumns(p.write.columns, w.columns));
    if (part) {
      part.sql += ` UNION ALL (${w.select})`;
      part.bindings.push(...w.bindings);
      part.members.push(i);
      return;
    }
    // Inside WITH, a SELECT merged with UNION ALL needs its parentheses from the start.
    const created = { sql: `${insertHead(w.table, w.columns)} (${w.select})`, bindings: [...w.bindings], returning: w.rowsOf ? w.rowsOf.column : '1', members: [i], write: w };
    parts.push(created);
    if (!w.rowsOf) return;
    if (same) same.push(created);
    else bySelect.set(w.select, [created]);
  });
  for (const { sql, bindings } of counterStatements(sumCounters(writes), 'own')) parts.push({ sql, bindings, returning: '1', members: [] });
  return parts;
}

/**
 * Runs writes as one statement of data-modifying WITH items (`WITH w0 AS (INSERT ... RETURNING 1), ...`),
 * which PostgreSQL runs atomically without BEGIN/COMMIT, in one round trip; writes of the same SQL are
 * merged first (mergeWrites). The items share one snapshot and do not see each other's rows, which queued
 * inserts do not need; constraints are checked at the end of the statement. Returns each write's row count.
 */
async function runAsOneStatement(client: Pick<PoolClient, 'positionBindings'>, connection: object, writes: readonly DeferredWrite[]): Promise<number[]> {
  if (writes.length === 1) {
    const { sql, bindings } = writeStatement(writes[0], 'own');
    const { rowCount } = await query(client, connection, sql, bindings);
    return [isCounterWrite(writes[0]) ? 1 : rowCount ?? 0];
  }
  const parts = mergeWrites(writes);
  const items = parts.map((p, i) => `w${i} AS (${p.sql} RETURNING ${p.returning})`);
  const results = parts.map((p, i) => (p.returning === '1' ? `(SELECT count(*) FROM w${i}) AS n${i}` : `(SELECT array_agg(${p.returning}) FROM w${i}) AS n${i}`));
  const result = await query(client, connection, `WITH ${items.join(', ')} SELECT ${results.join(', ')}`, parts.flatMap((p) => p.bindings));
  const row = result.rows[0] as Record<string, string | unknown[] | null>;
  const counts = writes.map((w): number => (isCounterWrite(w) ? 1 : 0));
  parts.forEach((p, i) => {
    const value = row[`n${i}`];
    if (p.returning === '1') {
      // A single write, or merged rows: every row was written when the statement succeeded.
      if (p.members.length === 1) counts[p.members[0]] = Number(value);
      else for (const m of p.members) counts[m] = (writes[m] as RowsWrite).rows.length;
      return;
    }
    const marks = (value as unknown[] | null) ?? [];
    for (const m of p.members) counts[m] = marks.filter((v) => v === (writes[m] as SelectWrite).rowsOf!.value).length;
  });
  return counts;
}

/**
 * The whole group as one statement, one round trip. Should it fail (one member's unique violation
 * fails them all, and nothing is written), each member is committed on its own, so that only the
 * guilty one fails.
 */
async function commitGroup(client: Pick<PoolClient, 'positionBindings'>, connection: object, group: DeferredWrite[][]): Promise<GroupOutcome[]> {
  if (group.length > 1) {
    try {
      const counts = await runAsOneStatement(client, connection, group.flat());
      let at = 0;
      return group.map((writes) => ({ counts: counts.slice(at, (at += writes.length)) }));
    } catch {
      // Retried member by member below.
    }
  }
  const outcomes: GroupOutcome[] = [];
  for (const writes of group) {
    try {
      outcomes.push({ counts: await runAsOneStatement(client, connection, writes) });
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
  localDay: (expression: string, timeZone: string) => `to_char((${expression})::timestamptz AT TIME ZONE '${safeTimeZone(timeZone)}', 'YYYY-MM-DD')`,
  toJson: (value) => JSON.stringify(value),
  fromJson: (value) => (typeof value === 'string' ? JSON.parse(value) : value) as any,
  likeOperator: 'ILIKE',
  fixedParameter: '?',
  rowsPerInsert: 1000,
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
  async runWrites(client: PoolClient, connection: object, writes: readonly DeferredWrite[], then?: 'COMMIT') {
    // All sent at once, in one round trip, through pg's pipeline mode (see pipelined); the server runs them in
    // the order given. Counter writes are summed into one statement (a counter write counts 1). A COMMIT sent
    // after them ends the transaction in the same round trip: after a failed write the server runs it as a
    // ROLLBACK (the transaction is aborted), and the write's error is what pipelined throws.
    const statements: Array<{ sql: string; bindings: readonly unknown[] }> = [];
    const own: number[] = [];
    for (const w of writes) {
      if (isCounterWrite(w)) {
        own.push(-1);
        continue;
      }
      own.push(statements.length);
      statements.push(writeStatement(w, 'own'));
    }
    statements.push(...counterStatements(sumCounters(writes), 'own'));
    if (then) statements.push({ sql: then, bindings: [] });
    const results = await pipelined(connection as PgConnection, statements.map(({ sql, bindings }) => () => query(client, connection, sql, bindings)));
    return own.map((at) => (at < 0 ? 1 : results[at].rowCount ?? 0));
  },
  committer: (pool: PoolClient) => groupCommitter(pool, (connection, group) => commitGroup(pool, connection, group)),
  jsonArrayValues(column: string, alias: string) {
    return `jsonb_array_elements_text(${column}) AS ${alias}(value)`;
  },
  async rows<T>(conn: PoolClient, sql: string, bindings: readonly unknown[]): Promise<T[]> {
    countQuery();
    // On a connection of the pool or of the transaction, as a named prepared statement, which pg parses
    // once per connection.
    const client = conn as unknown as KnexClient;
    const connection = await client.acquireConnection();
    try {
      return (await query(client, connection, sql, bindings)).rows as T[];
    } finally {
      await client.releaseConnection(connection);
    }
  },
  async eachRow(conn: PoolClient, sql: string, bindings: readonly unknown[], onRow: (row: unknown[]) => void): Promise<number> {
    countQuery();
    const client = conn as unknown as KnexClient;
    const { text, name } = numbered(client, sql);
    const { default: pg } = await import('pg');
    const connection = await client.acquireConnection();
    try {
      return await new Promise<number>((resolve, reject) => {
        // pg collects no rows for a query that has a row listener. A failing onRow must not break the
        // protocol's parsing: the rest of the rows are read and dropped, then the query fails with it.
        const config: QueryArrayConfig = { text, name, values: bindings as unknown[], rowMode: 'array' };
        const query = new pg.Query(config);
        let count = 0;
        let failed: unknown = null;
        query.on('row', (row: unknown[]) => {
          if (failed) return;
          count += 1;
          try {
            onRow(row);
          } catch (err) {
            failed = err;
          }
        });
        query.on('error', reject);
        query.on('end', () => (failed ? reject(failed) : resolve(count)));
        (connection as { query(q: unknown): unknown }).query(query);
      });
    } finally {
      await client.releaseConnection(connection);
    }
  },
  async externalChangeToken() {
    // Several processes share one PostgreSQL: nothing tells cheaply that another one wrote.
    return null;
  },
  async snapshotToken(conn: PoolClient) {
    const rows = await this.rows<{ s: string }>(conn, 'SELECT pg_current_snapshot()::text AS s', []);
    return rows[0].s;
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
  embedding: {
    referencedBy(id: string, rows: string, field: string, many: boolean) {
      assertSafeField(rows);
      assertSafeField(field);
      // An array built once (an InitPlan), probed by the id index: cheaper than a semi-join, whatever the target's size.
      const ids = many ? `SELECT jsonb_array_elements_text(data -> '${field}') FROM ${rows} WHERE jsonb_typeof(data -> '${field}') = 'array'`
        : `SELECT data ->> '${field}' FROM ${rows}`;
      return `${id} = ANY(ARRAY(${ids}))`;
    },
  },
  refersTo(field: string, many: boolean, id: string) {
    assertSafeField(field);
    return { sql: 'data @> ?::jsonb', bindings: [JSON.stringify({ [field]: many ? [id] : id })] };
  },
  documentEquals(field: string, value: string | number | boolean) {
    assertSafeField(field);
    return { sql: 'data @> ?::jsonb', bindings: [JSON.stringify({ [field]: value })] };
  },
  async estimateRows(conn: PoolClient, sql: string, bindings: readonly unknown[]) {
    const [row] = await postgresDialect.rows<{ 'QUERY PLAN': Array<{ Plan: { 'Plan Rows': number } }> }>(conn, `EXPLAIN (FORMAT JSON) ${sql}`, bindings);
    const plan = row?.['QUERY PLAN'];
    return plan ? Number(plan[0].Plan['Plan Rows']) : null;
  },
};
