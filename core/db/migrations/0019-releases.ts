import type { Migration } from '../migration.js';

/**
 * Releases (CONTRACT.md 17.3): drafts of several records bound together (record_drafts.release_id), published
 * all or none, now or at `scheduled_at`, and rolled back. `release_items` keeps each record's live version before
 * the publish (`previous_version`, 0 for a record the release created) and the one it made (`version`). A preview
 * shows a release's drafts, or some records' (`items`, JSON), to whoever holds its token (kept as its SHA-256).
 */
export const releasesMigration: Migration = {
  name: '0019_releases',
  async up(knex) {
    await knex.schema.createTable('releases', (t) => {
      t.string('tenant_id', 63).notNullable();
      t.string('id', 36).notNullable();
      t.string('name', 200).notNullable();
      t.text('description').notNullable();
      t.string('status', 20).notNullable();
      t.string('scheduled_at', 30).nullable();
      t.string('published_at', 30).nullable();
      t.text('errors').notNullable();
      t.string('created_at', 30).notNullable();
      t.primary(['tenant_id', 'id']);
      t.index(['scheduled_at'], 'releases_scheduled');
    });
    await knex.schema.createTable('release_items', (t) => {
      t.string('tenant_id', 63).notNullable();
      t.string('release_id', 36).notNullable();
      t.string('record_id', 36).notNullable();
      t.string('namespace', 40).notNullable();
      t.string('schema_name', 40).notNullable();
      t.integer('position').notNullable();
      t.integer('previous_version').nullable();
      t.integer('version').nullable();
      t.primary(['tenant_id', 'release_id', 'record_id']);
    });
    await knex.schema.createTable('previews', (t) => {
      t.string('tenant_id', 63).notNullable();
      t.string('id', 36).notNullable();
      t.string('token_hash', 64).notNullable().unique();
      t.string('release_id', 36).nullable();
      t.text('items').nullable();
      t.string('expires_at', 30).notNullable();
      t.string('created_at', 30).notNullable();
      t.primary(['tenant_id', 'id']);
    });
  },
  async down(knex) {
    await knex.schema.dropTable('previews');
    await knex.schema.dropTable('release_items');
    await knex.schema.dropTable('releases');
  },
};
