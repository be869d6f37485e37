import type { Migration } from '../migration.js';

/** The platform settings store (keys of CONTRACT.md section 4); secrets are stored encrypted. */
export const platformSettingsMigration: Migration = {
  name: '0200_platform_settings',
  async up(knex) {
    await knex.schema.createTable('platform_settings', (t) => {
      // Always '_platform': the settings belong to the platform, not to a tenant.
      t.string('tenant_id', 63).notNullable();
      t.string('key', 60).notNullable();
      // JSON text of the value, or the sealed secret ("v1:<base64>") when encrypted.
      t.text('value').notNullable();
      t.boolean('encrypted').notNullable();
      t.string('updated_at', 30).notNullable();
      t.primary(['tenant_id', 'key']);
    });
  },
  async down(knex) {
    await knex.schema.dropTable('platform_settings');
  },
};
