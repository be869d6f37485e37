import type { Migration } from '../migration.js';

/**
 * API tokens (CONTRACT.md 16.2): credentials of a tenant's integrations, each with a role of the tenant. Only
 * the SHA-256 of the secret is stored (`token_hash`, unique: a request names its token by the secret alone,
 * so the lookup is by the hash, without the tenant); `prefix` (the secret's first 8 characters after `pat_`)
 * tells tokens apart in lists. `last_used_at` is written at most once a minute per token.
 */
export const apiTokensMigration: Migration = {
  name: '0013_api_tokens',
  async up(knex) {
    await knex.schema.createTable('api_tokens', (t) => {
      t.string('tenant_id', 63).notNullable();
      t.string('id', 36).notNullable();
      t.string('name', 100).notNullable();
      t.string('role', 40).notNullable();
      t.string('token_hash', 64).notNullable();
      t.string('prefix', 8).notNullable();
      t.string('created_by', 255).notNullable();
      t.string('created_at', 30).notNullable();
      t.string('expires_at', 30).nullable();
      t.string('last_used_at', 30).nullable();
      t.string('revoked_at', 30).nullable();
      t.primary(['tenant_id', 'id']);
      t.unique(['token_hash']);
    });
  },
  async down(knex) {
    await knex.schema.dropTable('api_tokens');
  },
};
