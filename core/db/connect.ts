import { existsSync, mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import knexFactory, { type Knex } from 'knex';
import type { Dialect } from './dialects/dialect.js';
import { sqliteDialect } from './dialects/sqlite.js';
import { postgresDialect } from './dialects/postgres.js';
import { newId } from '../base/ids.js';
import { localDay } from '../base/time-zones.js';

export interface DbConnection {
  knex: Knex;
  dialect: Dialect;
  /** Throws unless the database answers (readiness). */
  ping(): Promise<void>;
}

/** Where knex reports pool and connection trouble (else it writes to the console). */
export interface DbLog {
  warn(message: unknown): void;
  error(message: unknown): void;
}

/** Opens the database named by DATABASE_URL: `sqlite:<path>` (embedded default) or `postgres://...`. */
export function connectDatabase(databaseUrl: string, poolMax = 10, log?: DbLog): DbConnection {
  const knexLog = log ? {
    warn: (m: unknown) => log.warn(String(m)),
    error: (m: unknown) => log.error(String(m)),
    deprecate: (m: unknown) => log.warn(String(m)),
    debug: () => {},
  } : undefined;
  if (databaseUrl.startsWith('sqlite:')) {
    const file = databaseUrl.slice('sqlite:'.length);
    const filename = file === ':memory:' ? file : resolve(file);
    if (filename !== ':memory:') mkdirSync(dirname(filename), { recursive: true });
    const knex = knexFactory({
      client: 'better-sqlite3',
      connection: { filename },
      useNullAsDefault: true,
      log: knexLog,
      pool: {
        min: 1,
        max: 1,
        afterCreate(conn: any, done: (err: Error | null, conn: unknown) => void) {
          try {
            conn.pragma('journal_mode = WAL');
            conn.pragma('synchronous = NORMAL');
            conn.pragma('foreign_keys = ON');
            conn.pragma('busy_timeout = 5000');
            // Transactions run in savepoints of a shared transaction (core/db/transaction-groups.ts): their
            // sub-journals (the pages as they were before) stay in memory instead of spilling to temp files.
            conn.pragma('temp_store = MEMORY');
            // The id function that PostgreSQL gets from migration 0003.
            conn.function('hp_new_id', { deterministic: false }, newId);
            // The local day of an instant (Dialect.localDay), which PostgreSQL computes with AT TIME ZONE.
            conn.function('hp_local_day', { deterministic: true }, localDay);
            done(null, conn);
          } catch (err) {
            done(err as Error, conn);
          }
        },
      },
    });
    const ping = async () => {
      // An open SQLite handle keeps answering from a deleted file; a database that is gone is not ready.
      if (filename !== ':memory:' && !existsSync(filename)) throw new Error(`The SQLite database ${filename} is missing`);
      await knex.raw('select count(*) from sqlite_master');
    };
    return { knex, dialect: sqliteDialect, ping };
  }
  const knex = knexFactory({
    client: 'pg',
    connection: { connectionString: databaseUrl },
    pool: { min: 0, max: poolMax },
    acquireConnectionTimeout: 10_000,
    log: knexLog,
  });
  return { knex, dialect: postgresDialect, ping: async () => { await knex.raw('select 1'); } };
}
