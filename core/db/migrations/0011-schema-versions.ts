import type { Migration } from '../migration.js';

/**
 * Every version of every schema (GET /metadata/schemas/{ns}/{name}/versions, CONTRACT.md 12.1); the
 * schemas table keeps the current one. Existing schemas get their current version recorded.
 */
export const schemaVersionsMigration: Migration = {
  name: '0011_schema_versions',
  async up(knex) {
    await knex.schema.createTable('schema_versions', (t) => {
      t.string('tenant_id', 63).notNullable();
      t.integer('schema_id').notNullable();
      t.integer('version').notNullable();
      t.string('title', 200).notNullable().defaultTo('');
      t.text('description').notNullable().defaultTo('');
      t.jsonb('definition').notNullable();
      t.jsonb('indexes').notNullable();
      t.jsonb('unique_sets').notNullable();
      t.string('created_at', 30).notNullable();
      t.primary(['tenant_id', 'schema_id', 'version']);
    });
    await knex.raw(`INSERT INTO schema_versions (tenant_id, schema_id, version, title, description, definition, indexes, unique_sets, created_at)
      SELECT tenant_id, id, version, title, description, definition, indexes, unique_sets, updated_at FROM schemas`);
  },
  async down(knex) {
    await knex.schema.dropTable('schema_versions');
  },
};
