import Database from 'better-sqlite3';
import pg from 'pg';
import { v7 as uuidv7 } from 'uuid';

/**
 * The hand-written twins' database access (scripts/bench/*-baseline-server.ts): prepared statements run
 * synchronously on better-sqlite3 (a write transaction starts with BEGIN IMMEDIATE), or pg's pool on PostgreSQL;
 * `?` placeholders on both. `hp_new_id()` is the kernel's id function on SQLite.
 */
/** The engine's statements: `query` for rows, `tx` for one write transaction. */
export interface Engine {
  query<T>(sql: string, args: unknown[]): Promise<T[]>;
  tx<T>(fn: (q: <R>(sql: string, args: unknown[]) => Promise<R[]>) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/**
 * A twin's statement for SQLite with the tenant bound as `+?`, as the service binds it (Dialect.fixedParameter):
 * better-sqlite3 is built with STAT4, and after ANALYZE (the benchmarks analyse their record tables) SQLite
 * prepares anew, at every run, a statement that binds a parameter compared with the leading column of an analysed
 * index (`tenant_id = ?`), to plan for its value; `+?` it does not look into. A cart's look-up of its 3 products
 * took 13.6 us so and 7.4 us with `+?`.
 */
export function fixedTenant(sql: string): string {
  return sql.replace(/\btenant_id = \?/g, 'tenant_id = +?');
}

function sqliteEngine(file: string): Engine {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
  db.function('hp_new_id', { deterministic: false }, () => uuidv7());
  const cache = new Map<string, Database.Statement>();
  const stmt = (sql: string) => {
    let s = cache.get(sql);
    if (!s) cache.set(sql, (s = db.prepare(fixedTenant(sql))));
    return s;
  };
  const run = <R>(sql: string, args: unknown[]): R[] => {
    const s = stmt(sql);
    if (s.reader) return s.all(...args) as R[];
    s.run(...args);
    return [];
  };
  return {
    async query<T>(sql: string, args: unknown[]) { return run<T>(sql, args); },
    async tx(fn) {
      run('BEGIN IMMEDIATE', []);
      try {
        const result = await fn(async (sql, args) => run(sql, args));
        run('COMMIT', []);
        return result;
      } catch (err) {
        run('ROLLBACK', []);
        throw err;
      }
    },
    async close() { db.close(); },
  };
}

function postgresEngine(url: string): Engine {
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  const numbered = (sql: string) => { let n = 0; return sql.replace(/\?/g, () => `$${++n}`); };
  return {
    async query<T>(sql: string, args: unknown[]) { return (await pool.query({ text: numbered(sql), values: args as unknown[] })).rows as T[]; },
    async tx(fn) {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const result = await fn(async (sql, args) => (await client.query({ text: numbered(sql), values: args as unknown[] })).rows);
        await client.query('COMMIT');
        return result;
      } catch (err) {
        await client.query('ROLLBACK');
        throw err;
      } finally {
        client.release();
      }
    },
    async close() { await pool.end(); },
  };
}

/** The engine of a database URL (`sqlite:<file>` or a PostgreSQL URL). */
export function twinEngine(url: string): Engine {
  return url.startsWith('sqlite:') ? sqliteEngine(url.slice('sqlite:'.length)) : postgresEngine(url);
}

/** The heads of the inserts a twin writes beside its records, as the service writes them (VALUES follow). */
export const REVISION_INSERT = 'INSERT INTO record_revisions (tenant_id, namespace, schema_name, record_id, version, action, at, actor_type, actor_id, actor_email, data)';
export const AUDIT_INSERT = 'INSERT INTO audit_log (tenant_id, id, at, actor_type, actor_id, actor_email, action, target, request_id)';
export const OUTBOX_INSERT = 'INSERT INTO outbox_events (tenant_id, id, name, product, payload, occurred_at)';

/**
 * A record's part of its schema's count, as the service keeps it: bindings tenant, schema id, part id (SQLite: one
 * shared part '' added to; PostgreSQL: a part of its own per write, folded later).
 */
export function countSql(sqlite: boolean): string {
  return sqlite
    ? 'INSERT INTO record_counts (tenant_id, schema_id, id, n) VALUES (?, ?, ?, 1) ON CONFLICT (tenant_id, schema_id, id) DO UPDATE SET n = record_counts.n + excluded.n'
    : 'INSERT INTO record_counts (tenant_id, schema_id, id, n) VALUES (?, ?, ?, 1)';
}

/**
 * Each outbox event's deliveries to the tenant's matching connectors, as the outbox queues them (none in the
 * benchmarks): bindings event id, name, now ×3, tenant, active (1 or true), product, name, name.
 */
export function fanoutSql(sqlite: boolean): string {
  return `INSERT INTO outbox_deliveries (tenant_id, id, kind, connector_id, event_id, event_name, status, attempts, next_attempt_at, created_at, updated_at)
  SELECT c.tenant_id, hp_new_id(), 'webhook', c.id, CAST(? AS TEXT), CAST(? AS TEXT), 'pending', 0, CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS TEXT)
  FROM connectors c WHERE c.tenant_id = ? AND c.active = ? AND (c.product IS NULL OR c.product = ?)
  AND EXISTS (SELECT 1 FROM ${sqlite ? 'json_each(c.events) AS p' : 'jsonb_array_elements_text(c.events) AS p(value)'}
    WHERE p.value = '*' OR p.value = CAST(? AS TEXT)
      OR (substr(p.value, length(p.value) - 1) = '.*' AND substr(CAST(? AS TEXT), 1, length(p.value) - 1) = substr(p.value, 1, length(p.value) - 1)))`;
}
