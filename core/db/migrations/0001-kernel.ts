import type { Migration } from '../migration.js';

/** Tenants, licensed modules, the schema registry and the outbox's event table. */
export const kernelMigration: Migration = {
  name: '0001_kernel',
  async up(knex) {
    await knex.schema.createTable('tenants', (t) => {
      t.string('id', 63).primary();
      t.string('name', 200).notNullable();
      t.string('plan', 20).notNullable();
      t.string('status', 20).notNullable();
      t.string('created_at', 30).notNullable();
      t.string('updated_at', 30).notNullable();
      t.index(['created_at', 'id']);
    });
    await knex.schema.createTable('tenant_modules', (t) => {
      t.string('tenant_id', 63).notNullable().references('id').inTable('tenants').onDelete('CASCADE');
      t.string('app_code', 40).notNullable();
      t.boolean('is_enabled').notNullable();
      t.string('updated_at', 30).notNullable();
      t.primary(['tenant_id', 'app_code']);
    });
    await knex.schema.createTable('schemas', (t) => {
      t.increments('id').primary();
      // `_platform` for the schemas packs ship; else the owning tenant.
      t.string('tenant_id', 63).notNullable();
      t.string('namespace', 40).notNullable();
      t.string('name', 40).notNullable();
      t.integer('version').notNullable();
      t.string('scope', 10).notNullable();
      t.string('title', 200).notNullable().defaultTo('');
      t.text('description').notNullable().defaultTo('');
      t.jsonb('definition').notNullable();
      t.jsonb('indexes').notNullable();
      t.jsonb('unique_sets').notNullable();
      t.string('table_name', 40).notNullable();
      t.string('created_at', 30).notNullable();
      t.string('updated_at', 30).notNullable();
      t.unique(['tenant_id', 'namespace', 'name']);
    });
    await knex.schema.createTable('outbox_events', (t) => {
      // '' for platform-level events.
      t.string('tenant_id', 63).notNullable();
      t.string('id', 36).notNullable();
      t.string('name', 200).notNullable();
      t.string('product', 100).nullable();
      t.jsonb('payload').notNullable();
      t.string('occurred_at', 30).notNullable();
      t.primary(['tenant_id', 'id']);
      t.index(['tenant_id', 'occurred_at']);
    });
  },
  async down(knex) {
    await knex.schema.dropTable('outbox_events');
    await knex.schema.dropTable('schemas');
    await knex.schema.dropTable('tenant_modules');
    await knex.schema.dropTable('tenants');
  },
};
