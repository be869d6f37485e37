import type { Migration } from '../../../core/pack-api.js';

/** Provisioning's own idempotency keys gave way to the kernel's (core/http/idempotency.ts, table idempotency_requests). */
export const dropProvisioningKeysMigration: Migration = {
  name: '0201_drop_provisioning_keys',
  async up(knex) {
    await knex.schema.dropTableIfExists('idempotency_keys');
  },
  async down(knex) {
    await knex.schema.createTable('idempotency_keys', (t) => {
      t.string('tenant_id', 63).notNullable();
      t.string('key', 200).notNullable();
      t.string('operation', 60).notNullable();
      t.string('request_hash', 64).notNullable();
      t.integer('status').notNullable();
      t.jsonb('response').notNullable();
      t.string('created_at', 30).notNullable();
      t.primary(['tenant_id', 'key']);
    });
  },
};
