import { loadConfig } from '../config/index.js';
import { packs } from '../config/packs.js';
import { allMigrations } from '../core/app.js';
import { connectDatabase } from '../core/db/connect.js';
import { migrateLatest } from '../core/db/migrate.js';

/** npm run migrate: applies pending migrations of the kernel and every listed pack; a failure is one line, exit 1. */
try {
  const config = loadConfig(process.env, { dotenv: true, devDefaults: true });
  const { knex, dialect } = connectDatabase(config.databaseUrl);
  try {
    const applied = await migrateLatest(knex, dialect, allMigrations(packs));
    console.log(applied.length ? `Applied: ${applied.join(', ')}` : 'The database is up to date.');
  } finally {
    await knex.destroy();
  }
} catch (err) {
  const message = err instanceof Error ? err.message : String(err);
  console.error(`Migration failed: ${message.split('\n')[0]}`);
  process.exit(1);
}
