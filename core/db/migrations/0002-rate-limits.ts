import type { Migration } from '../migration.js';

/**
 * Fixed-window rate-limit counters shared by every service process on the database
 * (core/ratelimit/rate-limit.service.ts). One row per tenant, bucket and window; `expires_at` is the
 * window's end, so expired rows of any window length can be pruned with one statement.
 */
export const rateLimitsMigration: Migration = {
  name: '0002_rate_limits',
  async up(knex) {
    await knex.schema.createTable('rate_limits', (t) => {
      t.string('tenant_id', 63).notNullable();
      t.string('bucket', 300).notNullable();
      t.string('window_start', 30).notNullable();
      t.string('expires_at', 30).notNullable();
      t.integer('hits').notNullable();
      t.primary(['tenant_id', 'bucket', 'window_start']);
    });
  },
  async down(knex) {
    await knex.schema.dropTableIfExists('rate_limits');
  },
};
