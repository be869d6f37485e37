import type { Knex } from 'knex';
import type { Dialect } from './dialects/dialect.js';
import type { Migration } from './migration.js';

/** Applies pending migrations in name order, through knex's migrator with an explicit source. */
export async function migrateLatest(knex: Knex, dialect: Dialect, migrations: Migration[]): Promise<string[]> {
  const sorted = sortMigrations(migrations);
  const [, applied] = await knex.migrate.latest({ migrationSource: source(sorted, dialect), tableName: 'knex_migrations' });
  return applied as string[];
}

/** Names of migrations not yet applied (empty when the database is current). */
export async function pendingMigrations(knex: Knex, dialect: Dialect, migrations: Migration[]): Promise<string[]> {
  const [, pending] = await knex.migrate.list({ migrationSource: source(sortMigrations(migrations), dialect), tableName: 'knex_migrations' });
  return (pending as Array<{ file?: string } | string>).map((m) => (typeof m === 'string' ? m : String(m.file)));
}

function sortMigrations(migrations: Migration[]): Migration[] {
  const seen = new Set<string>();
  for (const m of migrations) {
    if (seen.has(m.name)) throw new Error(`Duplicate migration name ${m.name}`);
    seen.add(m.name);
  }
  return [...migrations].sort((a, b) => a.name.localeCompare(b.name));
}

function source(migrations: Migration[], dialect: Dialect): Knex.MigrationSource<Migration> {
  return {
    getMigrations: async () => migrations,
    getMigrationName: (m) => m.name,
    getMigration: async (m) => ({ up: (knex: Knex) => m.up(knex, dialect), down: (knex: Knex) => m.down(knex, dialect) }),
  };
}
