import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

export type Engine = 'sqlite' | 'postgres';

export const ENGINE: Engine = process.env.TEST_DB === 'postgres' ? 'postgres' : 'sqlite';
export const POSTGRES_ADMIN_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

/**
 * A value shared by every copy of a helper module in the process: mocha loads the test files through tsx's
 * require and test/helpers/setup.ts through import, so two copies of the helpers run side by side, and
 * state kept in a module variable was not seen by the root hook (the shared app was never closed, its
 * database never dropped: #34).
 */
export function processWide<T>(name: string, make: () => T): T {
  const store = globalThis as unknown as Record<symbol, T>;
  const key = Symbol.for(name);
  if (!(key in store)) store[key] = make();
  return store[key];
}

/**
 * The drop of every scratch database made by this process and not dropped yet, by URL: the root hook drops
 * what a test left behind (a failed start, a close that threw, an app never closed), and the process's
 * exit removes SQLite folders that are left even then, so that a run leaves no hp_test_* database and no
 * hp-test-* folder (#34).
 */
const undropped = processWide('hp-test-undropped-databases', () => {
  const map = new Map<string, { drop: () => Promise<void>; folder: string | null }>();
  process.once('exit', () => {
    for (const { folder } of map.values()) if (folder) rmSync(folder, { recursive: true, force: true });
  });
  return map;
});

/** Drops every scratch database of this process that is still there (test/helpers/setup.ts calls it last). */
export async function dropLeftoverDatabases(): Promise<void> {
  for (const [url, { drop }] of [...undropped]) {
    await drop().catch((err: unknown) => console.error(`could not drop the test database ${url}: ${(err as Error).message}`));
  }
}

/** `database`, listed in `undropped` until its drop succeeded. */
function tracked(database: TestDatabase, folder: string | null): TestDatabase {
  const drop = async () => {
    await database.drop();
    undropped.delete(database.url);
  };
  undropped.set(database.url, { drop, folder });
  return { url: database.url, drop };
}

/** A fresh, empty database of the engine under test: a temp SQLite file or a new PostgreSQL database. */
export function createTestDatabase(engine: Engine = ENGINE): Promise<TestDatabase> {
  return createScratchDatabase(engine);
}

/**
 * A fresh, empty database, dropped by `drop()`: a SQLite file in a new temp folder, or a new PostgreSQL
 * database on `adminUrl`'s server. `prefix` names both (the benchmarks use their own).
 */
export async function createScratchDatabase(engine: Engine, options: { adminUrl?: string; prefix?: string } = {}): Promise<TestDatabase> {
  // TEST_DATABASE_PREFIX (hp_test_<name>) tells one run's databases and folders from another's on a shared machine.
  const { adminUrl = POSTGRES_ADMIN_URL, prefix = process.env.TEST_DATABASE_PREFIX ?? 'hp_test' } = options;
  if (engine === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), `${prefix.replace(/_/g, '-')}-`));
    return tracked({ url: `sqlite:${join(dir, 'test.db')}`, drop: async () => rmSync(dir, { recursive: true, force: true }) }, dir);
  }
  const name = `${prefix}_${process.pid}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    // template0 is never connected to, so parallel test runs do not collide on template1 (SQLSTATE 55006).
    for (let attempt = 1; ; attempt++) {
      try {
        await admin.query(`CREATE DATABASE ${name} TEMPLATE template0`);
        break;
      } catch (err) {
        if (attempt >= 5 || (err as { code?: string }).code !== '55006') throw err;
        await new Promise((r) => setTimeout(r, 200 * attempt));
      }
    }
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return tracked({
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: adminUrl });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  }, null);
}

/** Whether PostgreSQL answers at the admin URL. */
export async function postgresAvailable(): Promise<boolean> {
  const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}
