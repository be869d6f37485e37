import type { Migration } from '../../../core/pack-api.js';

/**
 * Tenant administration: per-tenant documents (site config, branding, feature overrides), domains,
 * members, invitations and provisioning idempotency keys. Every table leads with tenant_id; the two
 * global look-ups (a host, an invitation token hash) have their own unique index.
 */
export const tenantAdminMigration: Migration = {
  name: '0200_tenant_admin',
  async up(knex) {
    await knex.schema.createTable('tenant_documents', (t) => {
      t.string('tenant_id', 63).notNullable().references('id').inTable('tenants').onDelete('CASCADE');
      // site_config | branding | features
      t.string('kind', 40).notNullable();
      t.jsonb('data').notNullable();
      t.string('updated_at', 30).notNullable();
      t.primary(['tenant_id', 'kind']);
    });
    await knex.schema.createTable('tenant_domains', (t) => {
      t.string('tenant_id', 63).notNullable().references('id').inTable('tenants').onDelete('CASCADE');
      t.string('host', 253).notNullable();
      t.string('created_at', 30).notNullable();
      t.primary(['tenant_id', 'host']);
      t.unique(['host']);
    });
    await knex.schema.createTable('tenant_members', (t) => {
      t.string('tenant_id', 63).notNullable().references('id').inTable('tenants').onDelete('CASCADE');
      t.string('id', 36).notNullable();
      t.string('user_id', 200).nullable();
      t.string('email', 254).notNullable();
      t.string('name', 200).nullable();
      t.string('role', 20).notNullable();
      t.string('status', 20).notNullable();
      t.string('created_at', 30).notNullable();
      t.string('updated_at', 30).notNullable();
      t.primary(['tenant_id', 'id']);
      t.unique(['tenant_id', 'email']);
      t.index(['user_id']);
    });
    await knex.schema.createTable('tenant_invitations', (t) => {
      t.string('tenant_id', 63).notNullable().references('id').inTable('tenants').onDelete('CASCADE');
      t.string('id', 36).notNullable();
      t.string('email', 254).notNullable();
      t.string('role', 20).notNullable();
      // pending | accepted | revoked
      t.string('status', 20).notNullable();
      t.string('token_hash', 64).notNullable();
      t.string('invited_by', 200).nullable();
      t.string('expires_at', 30).notNullable();
      t.string('created_at', 30).notNullable();
      t.string('accepted_at', 30).nullable();
      t.string('accepted_by', 200).nullable();
      t.primary(['tenant_id', 'id']);
      t.index(['tenant_id', 'email', 'status']);
      t.index(['tenant_id', 'created_at']);
      t.unique(['token_hash']);
    });
    await knex.schema.createTable('idempotency_keys', (t) => {
      // The scope the key belongs to: '_platform' for provisioning.
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
  async down(knex) {
    await knex.schema.dropTable('idempotency_keys');
    await knex.schema.dropTable('tenant_invitations');
    await knex.schema.dropTable('tenant_members');
    await knex.schema.dropTable('tenant_domains');
    await knex.schema.dropTable('tenant_documents');
  },
};
