import type { Migration } from '../migration.js';

/**
 * Custom roles of a tenant (CONTRACT.md 16.1): a name, a description and the policies (JSON text) that say which
 * records and fields the role may read and write. `version` counts changes (PUT with If-Match).
 */
export const rolesMigration: Migration = {
  name: '0016_roles',
  async up(knex) {
    await knex.schema.createTable('roles', (t) => {
      t.string('tenant_id', 63).notNullable();
      t.string('name', 40).notNullable();
      t.string('description', 500).notNullable();
      t.text('policies').notNullable();
      t.string('created_at', 30).notNullable();
      t.string('updated_at', 30).notNullable();
      t.integer('version').notNullable();
      t.primary(['tenant_id', 'name']);
    });
  },
  async down(knex) {
    await knex.schema.dropTable('roles');
  },
};
