import type { Migration } from '../migration.js';

/**
 * Revisions of records (CONTRACT.md 16.3): one row per create, update and delete, written in the write's
 * transaction. `data` is the record after the change (before it, for a delete) as JSON text; the key leads
 * with the tenant, and `at` serves retention.
 */
export const recordRevisionsMigration: Migration = {
  name: '0014_record_revisions',
  async up(knex) {
    await knex.schema.createTable('record_revisions', (t) => {
      t.string('tenant_id', 63).notNullable();
      t.string('namespace', 40).notNullable();
      t.string('schema_name', 40).notNullable();
      t.string('record_id', 36).notNullable();
      t.integer('version').notNullable();
      t.string('action', 10).notNullable();
      t.string('at', 30).notNullable();
      t.string('actor_type', 10).notNullable();
      t.string('actor_id', 255).notNullable();
      t.string('actor_email', 320).nullable();
      t.text('data').notNullable();
      t.primary(['tenant_id', 'namespace', 'schema_name', 'record_id', 'version']);
      t.index(['tenant_id', 'at'], 'record_revisions_tenant_at');
    });
  },
  async down(knex) {
    await knex.schema.dropTable('record_revisions');
  },
};
