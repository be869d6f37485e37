import type { Migration } from '../migration.js';

/**
 * A schema change with `migrate` (CONTRACT.md 12.1) rewrites the stored records in batches before the new
 * version is taken, keeping each record's previous state in a side table (`undo_table`). A row here names a
 * migration under way: the version it migrates to and where the previous states are, so that a migration
 * whose process died is rolled back (or, if its version was stored, its side table dropped) by the next
 * process that starts.
 */
export const schemaMigrationRunsMigration: Migration = {
  name: '0012_schema_migration_runs',
  async up(knex) {
    await knex.schema.createTable('schema_migration_runs', (t) => {
      t.string('tenant_id', 63).notNullable();
      t.integer('schema_id').notNullable();
      t.integer('to_version').notNullable();
      t.string('undo_table', 80).notNullable();
      t.string('started_at', 30).notNullable();
      t.primary(['tenant_id', 'schema_id']);
    });
  },
  async down(knex) {
    await knex.schema.dropTable('schema_migration_runs');
  },
};
