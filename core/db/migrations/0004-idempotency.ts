import type { Migration } from '../migration.js';

/**
 * Idempotency keys of create requests (CONTRACT 11.2 and 13), shared by every process: the claim is the
 * primary key, the first answer is kept 24 h.
 */
export const idempotencyMigration: Migration = {
  name: '0004_idempotency',
  async up(knex) {
    await knex.schema.createTable('idempotency_requests', (t) => {
      // The tenant, or `caller:<user id>` for platform routes.
      t.string('tenant_id', 255).notNullable();
      // sha256 of method, path and key.
      t.string('key_hash', 64).notNullable();
      // sha256 of the canonical JSON body.
      t.string('request_hash', 64).notNullable();
      // null while the first request runs.
      t.integer('status').nullable();
      t.text('response').nullable();
      t.string('claimed_at', 30).notNullable();
      t.string('expires_at', 30).notNullable();
      t.primary(['tenant_id', 'key_hash']);
      t.index(['tenant_id', 'expires_at']);
    });
  },
  async down(knex) {
    await knex.schema.dropTable('idempotency_requests');
  },
};
