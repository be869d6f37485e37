import type { Knex } from 'knex';
import type { TransactionGroups } from '../transaction-groups.js';
import type { PoolClient } from './pool-client.js';
import { TIME_ZONE_PATTERN } from '../../base/time-zones.js';

export type { PoolClient } from './pool-client.js';

export type JsonScalarType = 'string' | 'number' | 'integer' | 'boolean';

/**
 * A write queued in a transaction until it commits (see Database.writeAtCommit), described as data so that
 * each engine renders it and merges writes of the same shape (PostgreSQL group commit): rows to insert, an
 * INSERT ... SELECT, or, for anything else (an UPDATE, an upsert), a statement run as written and never merged.
 * Table and column names come from code, never from users. `done` learns how many rows it wrote.
 */
export type DeferredWrite = (RowsWrite | SelectWrite | StatementWrite | CounterWrite) & { done?: (changes: number) => void };

/**
 * Adds `add` to a counter: the `column` of the row whose key columns hold `key` (created at 0 when missing).
 * Group commit sums the counter writes of all its transactions per row into one statement. SQLite, whose
 * writers take turns anyway, adds to that very row (an upsert), so a reader finds one row. PostgreSQL inserts
 * rows of their own instead, with `fresh.column` set to `fresh.value()` (an update of one shared row would
 * hold its lock until commit, and every writer of that counter would wait for it); readers sum the rows.
 * `done` learns 1.
 */
export interface CounterWrite {
  table: string;
  key: Readonly<Record<string, string | number>>;
  column: string;
  add: number;
  fresh: { column: string; value(): string };
}

/** Any other write without RETURNING (`?` placeholders), run as it is, on its own. */
export interface StatementWrite {
  sql: string;
  bindings: readonly unknown[];
}

/** `INSERT INTO table (columns of the first row) VALUES (...), ...`: every row has the same columns, in the same order. */
export interface RowsWrite {
  table: string;
  rows: ReadonlyArray<Readonly<Record<string, unknown>>>;
  /** `ON CONFLICT (columns) DO NOTHING`: a row that collides on them is skipped and not counted. */
  skipConflictsOn?: readonly string[];
}

/** `INSERT INTO table (columns) <select>`, the SELECT with `?` placeholders. */
export interface SelectWrite {
  table: string;
  columns: readonly string[];
  select: string;
  bindings: readonly unknown[];
  /**
   * The column and value that mark the rows it writes, so that writes of the same SELECT can be merged into
   * one statement and still learn their own row counts (PostgreSQL group commit).
   */
  rowsOf?: { column: string; value: unknown };
}

export function isRowsWrite(write: DeferredWrite): write is RowsWrite & { done?: (changes: number) => void } {
  return 'rows' in write;
}

export function isStatementWrite(write: DeferredWrite): write is StatementWrite & { done?: (changes: number) => void } {
  return 'sql' in write;
}

export function isCounterWrite(write: DeferredWrite): write is CounterWrite & { done?: (changes: number) => void } {
  return 'add' in write;
}

/**
 * The counter writes among `writes`, summed per counter row (same table, column and key); rows whose adds
 * cancel out are left out.
 */
export function sumCounters(writes: readonly DeferredWrite[]): CounterWrite[] {
  const sums = new Map<string, CounterWrite>();
  for (const w of writes) {
    if (!isCounterWrite(w)) continue;
    const id = `${w.table}\u0000${w.column}\u0000${Object.values(w.key).join('\u0000')}`;
    const sum = sums.get(id);
    if (sum) sum.add += w.add;
    else sums.set(id, { table: w.table, key: w.key, column: w.column, add: w.add, fresh: w.fresh });
  }
  return [...sums.values()].filter((c) => c.add !== 0);
}

/** Counter upsert texts by shape (table, columns, row count), built once (the same text finds its prepared statement at once). */
const upsertSql = new Map<string, string>();

/**
 * Summed counter writes (sumCounters) as statements, one per table and column: upserts into the counter rows
 * (`rows: 'shared'`, SQLite), or inserts of rows of their own (`rows: 'own'`, PostgreSQL; see CounterWrite).
 * Upserted rows come in key order, so that two statements never lock the same rows in opposite orders.
 */
export function counterStatements(counters: readonly CounterWrite[], rows: 'shared' | 'own'): Array<{ sql: string; bindings: unknown[] }> {
  const byTarget = new Map<string, CounterWrite[]>();
  for (const c of counters) {
    const target = `${c.table}\u0000${c.column}`;
    byTarget.set(target, [...(byTarget.get(target) ?? []), c]);
  }
  return [...byTarget.values()].map((list) => {
    const { table, column, key, fresh } = list[0];
    const keys = Object.keys(key);
    const columns = [...keys, column];
    const values = () => list.map(() => rowPlaceholders(columns.length)).join(', ');
    if (rows === 'own') {
      return {
        sql: `${insertHead(table, columns)} VALUES ${values()}`,
        bindings: list.flatMap((c) => [...keys.map((k) => (k === fresh.column ? fresh.value() : c.key[k])), c.add]),
      };
    }
    const sorted = list.length > 1 ? [...list].sort((a, b) => compareKeys(keys.map((k) => a.key[k]), keys.map((k) => b.key[k]))) : list;
    const shape = `${table}\u0000${columns.join(',')}\u0000${list.length}`;
    let sql = upsertSql.get(shape);
    if (!sql) {
      sql = `${insertHead(table, columns)} VALUES ${values()} ON CONFLICT (${keys.join(', ')}) DO UPDATE SET ${column} = ${table}.${column} + excluded.${column}`;
      if (upsertSql.size < 1000) upsertSql.set(shape, sql);
    }
    return { sql, bindings: sorted.flatMap((c) => [...keys.map((k) => c.key[k]), c.add]) };
  });
}

function compareKeys(a: ReadonlyArray<string | number>, b: ReadonlyArray<string | number>): number {
  for (let i = 0; i < a.length; i++) {
    if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
  }
  return 0;
}

/** The columns of a rows write (its first row's). */
export function columnsOf(write: RowsWrite): string[] {
  return Object.keys(write.rows[0] ?? {});
}

/** The statement head, the same for every write of one shape: `INSERT INTO t (a, b)`. */
export function insertHead(table: string, columns: readonly string[]): string {
  return `INSERT INTO ${table} (${columns.join(', ')})`;
}

/** `(?, ?, ...)` by number of columns, built once. */
const placeholderRows: string[] = [];

/** One row's `(?, ?, ...)`. */
export function rowPlaceholders(columns: number): string {
  return (placeholderRows[columns] ??= `(${new Array<string>(columns).fill('?').join(', ')})`);
}

/** Whether two column lists are the same, in the same order. */
export function sameColumns(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** A rows write's statement text, built once per shape (columns, row count, conflict clause). */
interface RowsShape { columns: readonly string[]; rows: number; conflict: string; sql: string }
/**
 * Statement texts of rows writes by table, then shape: found by comparing the columns (the same constant
 * strings from the code) instead of joining them into a key for every write of every request.
 */
const rowsSql = new Map<string, RowsShape[]>();
let rowsShapes = 0;
/** INSERT ... SELECT texts by their SELECT, built once (a constant SELECT text is hashed once). */
const selectSql = new Map<string, { table: string; columns: readonly string[]; sql: string }>();

/**
 * A queued write as one statement with `?` placeholders; a counter write as its engine writes it on its own
 * (`counterRows`, see counterStatements).
 */
export function writeStatement(write: DeferredWrite, counterRows: 'shared' | 'own'): { sql: string; bindings: unknown[] } {
  if (isStatementWrite(write)) return { sql: write.sql, bindings: [...write.bindings] };
  if (isCounterWrite(write)) return counterStatements([write], counterRows)[0];
  if (!isRowsWrite(write)) {
    let built = selectSql.get(write.select);
    if (built?.table !== write.table || built.columns !== write.columns) {
      built = { table: write.table, columns: write.columns, sql: `${insertHead(write.table, write.columns)} ${write.select}` };
      if (selectSql.size < 1000) selectSql.set(write.select, built);
    }
    return { sql: built.sql, bindings: [...write.bindings] };
  }
  const columns = columnsOf(write);
  const conflict = write.skipConflictsOn ? write.skipConflictsOn.join(', ') : '';
  const shapes = rowsSql.get(write.table);
  let sql = shapes?.find((s) => s.rows === write.rows.length && s.conflict === conflict && sameColumns(s.columns, columns))?.sql;
  if (!sql) {
    const row = rowPlaceholders(columns.length);
    sql = `${insertHead(write.table, columns)} VALUES ${write.rows.map(() => row).join(', ')}${conflict ? ` ON CONFLICT (${conflict}) DO NOTHING` : ''}`;
    if (rowsShapes < 1000) {
      rowsShapes += 1;
      const shape = { columns, rows: write.rows.length, conflict, sql };
      if (shapes) shapes.push(shape);
      else rowsSql.set(write.table, [shape]);
    }
  }
  const bindings: unknown[] = [];
  for (const r of write.rows) for (const c of columns) bindings.push(r[c]);
  return { sql, bindings };
}

/**
 * Commits the queued writes of a transaction that never needed its connection, atomically, and returns
 * each write's row count. Rejects, with nothing written, when any of them fails.
 */
export type WriteCommitter = (writes: DeferredWrite[]) => Promise<number[]>;

/** Engine differences live here, never in services or repositories. */
export interface Dialect {
  readonly name: 'sqlite' | 'postgres';
  /** SQL expression reading a top-level JSON field of column `data`, typed. `field` is pre-validated. */
  jsonField(field: string, type: JsonScalarType, column?: string): string;
  /**
   * SQL expression of the JSON document `column` with the top-level `field` set to the value of the SQL
   * expression `value` (an integer or a string, as `type` says). `field` is pre-validated.
   */
  jsonSet(column: string, field: string, value: string, type: 'integer' | 'string'): string;
  /** SQL expression reading a json/jsonb column as JSON text (the driver then hands over a string). */
  jsonText(column: string): string;
  /** SQL expression of the calendar day (YYYY-MM-DD) in `timeZone` (an IANA name) of the ISO date-time `expression`. */
  localDay(expression: string, timeZone: string): string;
  /** Serialises a JSON document for a json/jsonb column. */
  toJson(value: unknown): unknown;
  /** Parses a json/jsonb column value read back from the driver. */
  fromJson<T = unknown>(value: unknown): T;
  /** Case-insensitive LIKE operator (`%` and `_` wildcards, `\\` escapes). */
  likeOperator: string;
  /**
   * A bound parameter whose value the planner does not look at, for statements whose plan never depends on
   * it (records by id): SQLite with STAT4 statistics (after ANALYZE) prepares a statement again on every
   * execution that binds anew a parameter compared with an analysed index column (`tenant_id = ?`), so as
   * to plan for the value; `+?` it does not look into. PostgreSQL: `?`.
   */
  fixedParameter: string;
  /** Rows per multi-row INSERT (bulk writes): SQLite caps a compound insert at 500 rows; PostgreSQL 1000. */
  readonly rowsPerInsert: number;
  /** Whether the driver raised a unique violation. */
  isUniqueViolation(error: unknown): boolean;
  /** Whether the driver raised a foreign key violation. */
  isForeignKeyViolation(error: unknown): boolean;
  /** Whether the error means the database cannot be reached or is busy (a retry may succeed): 503 to the client. */
  isUnavailable(error: unknown): boolean;
  /**
   * Runs a parameterised statement (`?` placeholders) and returns its rows, on either engine, on a connection
   * of `conn`: the pool, or a transaction (Database.sql(rc).rows).
   */
  rows<T = Record<string, unknown>>(conn: PoolClient, sql: string, bindings: readonly unknown[]): Promise<T[]>;
  /**
   * Runs a SELECT like `rows` but hands each row (its column values in order) to `onRow` as the driver reads
   * it, collecting nothing; resolves with the number of rows.
   */
  eachRow(conn: PoolClient, sql: string, bindings: readonly unknown[], onRow: (row: unknown[]) => void): Promise<number>;
  /**
   * A number that changes whenever another connection (another process) commits to the database, or
   * null when the engine offers no cheap way to tell (then nothing derived from table contents may be
   * cached across requests).
   */
  externalChangeToken(conn: PoolClient): Promise<number | null>;
  /**
   * A value that two reads get alike only when no commit by another connection came between them, or null:
   * a result derived from the rows a statement saw may be reused while it stays the same. SQLite: the external
   * change token. PostgreSQL: the snapshot (`xmin:xmax:xip`; equal snapshots see the same committed rows, and
   * any commit changes it), at the price of a round trip: worth it only for a result dearer than that.
   */
  snapshotToken(conn: PoolClient): Promise<number | string | null>;
  /**
   * Runs queued writes, in order, on a connection that is inside a transaction; returns their row counts. `then`
   * (COMMIT) is run right after them, in the same round trip where the engine has one (PostgreSQL's pipeline);
   * should a write fail, the transaction is over and rolled back, and the write's error is thrown.
   */
  runWrites(client: PoolClient, connection: object, writes: readonly DeferredWrite[], then?: 'COMMIT'): Promise<number[]>;
  /** The committer for transactions made of queued writes only (one per Database). */
  committer(pool: PoolClient): WriteCommitter;
  /**
   * Where transactions that need their connection open (one per Database): as members of groups that share
   * one BEGIN ... COMMIT (core/db/transaction-groups.ts). Absent: each runs BEGIN and COMMIT of its own.
   */
  transactionGroups?(pool: PoolClient): TransactionGroups;
  /**
   * A FROM item listing the string elements of a JSON array column, as rows of one column `value`,
   * under the alias given.
   */
  jsonArrayValues(column: string, alias: string): string;
  /**
   * SQL expression: the transaction id (outbox_events.txid) below which every transaction has committed or
   * rolled back, so that no row with a smaller txid can still appear (live change streams read below it).
   */
  readonly commitHorizon: string;
  /** Statement that opens a write transaction on a held connection. */
  readonly beginSql: string;
  /** Runs a statement without results (BEGIN, COMMIT, ROLLBACK) straight on a driver connection. */
  exec(connection: unknown, sql: string): Promise<void>;
  /** Updates planner statistics for a table (ANALYZE). */
  analyze(knex: Knex, table: string): Promise<void>;
  /**
   * The statement that indexes a record table's whole document for equality on any top-level field
   * (PostgreSQL: GIN, jsonb_path_ops), or null when the engine has none.
   */
  documentIndexSql(table: string): string | null;
  /**
   * A condition "the document has `field` equal to `value`" that the document index serves, to AND
   * beside the typed comparison, or null when the engine has no such index.
   */
  documentEquals(field: string, value: string | number | boolean): { sql: string; bindings: unknown[] } | null;
  /**
   * SQL expression for the document in `column` with top-level fields removed (`unset`) and set to JSON
   * values (`set`); field names are pre-validated.
   */
  jsonEdit(column: string, set: Record<string, unknown>, unset: string[]): { sql: string; bindings: unknown[] };
  /**
   * A condition "the document's `field` holds `id`": equal to it, or with `many`, an array containing it
   * (PostgreSQL: served by the document index). One binding.
   */
  refersTo(field: string, many: boolean, id: string): { sql: string; bindings: unknown[] };
  /** The planner's estimate of the rows a SELECT returns, or null when the engine gives none cheaply. */
  estimateRows(conn: PoolClient, sql: string, bindings: readonly unknown[]): Promise<number | null>;
  /**
   * Expansions read with the page, in the page's own statement (CONTRACT.md 12.2), where that costs less
   * than a query of their own: PostgreSQL (a round trip saved). Absent on SQLite, where the extra query is
   * a call into the same process.
   */
  readonly embedding?: Embedding;
}

export interface Embedding {
  /**
   * A condition "`id` (an id column) is one of the ids that the documents of the rows of `rows` (a table
   * name in scope) hold in their top-level member `field` (pre-validated)": its string, or with `many`
   * the strings of its array. Other values may be compared as text too (they match no id).
   */
  referencedBy(id: string, rows: string, field: string, many: boolean): string;
}

export const SAFE_FIELD = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

/** The most values `inValues` lists as placeholders on SQLite; more go as one JSON array binding. */
const MOST_LISTED = 512;

/**
 * `IN (...)` over string values (`sql` is the parenthesised list, `bindings` its values), as few statement texts as
 * possible so that each engine prepares each once. On PostgreSQL, and on SQLite beyond 512 values, the elements of
 * one JSON array bound as one parameter. On SQLite up to 512, a list of placeholders padded to the next power of two
 * by repeating the last value (an `IN` list ignores repeats): for `IN (SELECT value FROM json_each(?))` SQLite
 * builds an ephemeral table at every run, which made a cart's look-up of its 3 products cost 28 us against 17 us
 * as a list of 3 (npm run bench:cart).
 */
export function inValues(dialect: Dialect, values: readonly string[]): { sql: string; bindings: unknown[] } {
  if (dialect.name === 'postgres' || values.length > MOST_LISTED || values.length === 0) {
    return { sql: `(SELECT value FROM ${dialect.jsonArrayValues('?', 'bound')})`, bindings: [JSON.stringify(values)] };
  }
  let size = 1;
  while (size < values.length) size *= 2;
  const bindings: unknown[] = [...values];
  while (bindings.length < size) bindings.push(values[values.length - 1]);
  return { sql: listOf(size), bindings };
}

/** `(?, ?, ...)` of each size, made once. */
const lists = new Map<number, string>();
function listOf(size: number): string {
  let sql = lists.get(size);
  if (sql === undefined) lists.set(size, (sql = `(${new Array<string>(size).fill('?').join(', ')})`));
  return sql;
}

export function assertSafeField(field: string): void {
  if (!SAFE_FIELD.test(field)) throw new Error(`Unsafe field name for SQL: ${field}`);
}

/** A time zone name to write into SQL as a literal: an IANA name, never anything with quotes. */
export function safeTimeZone(timeZone: string): string {
  if (!TIME_ZONE_PATTERN.test(timeZone)) throw new Error(`Unsafe time zone for SQL: ${timeZone}`);
  return timeZone;
}
