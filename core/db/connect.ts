import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import knexFactory, { type Knex } from 'knex';
import type { Dialect } from './dialects/dialect.js';
import { sqliteDialect } from './dialects/sqlite.js';
import { postgresDialect } from './dialects/postgres.js';

export interface DbConnection {
  knex: Knex;
  dialect: Dialect;
}

/** Opens the database named by DATABASE_URL: `sqlite:<path>` (embedded default) or `postgres://...`. */
export function connectDatabase(databaseUrl: string, poolMax = 10): DbConnection {
  if (databaseUrl.startsWith('sqlite:')) {
    const file = databaseUrl.slice('sqlite:'.length);
    const filename = file === ':memory:' ? file : resolve(file);
    if (filename !== ':memory:') mkdirSync(dirname(filename), { recursive: true });
    const knex = knexFactory({
      client: 'better-sqlite3',
      connection: { filename },
      useNullAsDefault: true,
      pool: {
        min: 1,
        max: 1,
        afterCreate(conn: any, done: (err: Error | null, conn: unknown) => void) {
          try {
            conn.pragma('journal_mode = WAL');
            conn.pragma('synchronous = NORMAL');
            conn.pragma('foreign_keys = ON');
            conn.pragma('busy_timeout = 5000');
            done(null, conn);
          } catch (err) {
            done(err as Error, conn);
          }
        },
      },
    });
    return { knex, dialect: sqliteDialect };
  }
  const knex = knexFactory({
    client: 'pg',
    connection: { connectionString: databaseUrl },
    pool: { min: 0, max: poolMax },
    acquireConnectionTimeout: 10_000,
  });
  return { knex, dialect: postgresDialect };
}
