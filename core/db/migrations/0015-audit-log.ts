import type { Migration } from '../migration.js';

/**
 * The audit log (CONTRACT.md 16.4): one row per change in a tenant ('' for the platform's own actions), written
 * in the change's transaction, append-only through the API. Ids are UUIDv7, so the key also orders by time.
 */
export const auditLogMigration: Migration = {
  name: '0015_audit_log',
  async up(knex) {
    await knex.schema.createTable('audit_log', (t) => {
      t.string('tenant_id', 63).notNullable();
      t.string('id', 36).notNullable();
      t.string('at', 30).notNullable();
      t.string('actor_type', 10).notNullable();
      t.string('actor_id', 255).notNullable();
      t.string('actor_email', 320).nullable();
      t.string('action', 64).notNullable();
      t.string('target', 255).notNullable();
      t.string('request_id', 128).notNullable();
      t.primary(['tenant_id', 'id']);
    });
  },
  async down(knex) {
    await knex.schema.dropTable('audit_log');
  },
};
