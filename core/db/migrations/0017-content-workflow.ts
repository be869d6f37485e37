import type { Migration } from '../migration.js';

/**
 * Drafts of records (CONTRACT.md 17.1): a schema's `workflow` registration key, and at most one draft per record
 * beside its live row. `data` is the whole document the draft would make (JSON text); `base_version` the live
 * version it was made from (0: a draft-only record); `scheduled_at` a publish at a set time, found by its index
 * across tenants.
 */
export const contentWorkflowMigration: Migration = {
  name: '0017_content_workflow',
  async up(knex) {
    await knex.schema.alterTable('schemas', (t) => {
      t.jsonb('workflow').nullable();
    });
    await knex.schema.createTable('record_drafts', (t) => {
      t.string('tenant_id', 63).notNullable();
      t.string('namespace', 40).notNullable();
      t.string('schema_name', 40).notNullable();
      t.string('record_id', 36).notNullable();
      t.text('data').notNullable();
      t.integer('base_version').notNullable();
      t.integer('revision').notNullable();
      t.string('created_at', 30).notNullable();
      t.string('updated_at', 30).notNullable();
      t.string('updated_by', 255).notNullable();
      t.string('scheduled_at', 30).nullable();
      t.text('last_error').nullable();
      t.string('release_id', 36).nullable();
      t.primary(['tenant_id', 'namespace', 'schema_name', 'record_id']);
      t.index(['scheduled_at'], 'record_drafts_scheduled');
      t.index(['tenant_id', 'namespace', 'schema_name', 'updated_at'], 'record_drafts_schema');
    });
  },
  async down(knex) {
    await knex.schema.dropTable('record_drafts');
    await knex.schema.alterTable('schemas', (t) => {
      t.dropColumn('workflow');
    });
  },
};
