import type { Migration } from '../../../core/pack-api.js';

/**
 * Payment providers per tenant (CONTRACT 15.3): not records. One row per tenant and provider (`stripe`), its
 * secrets sealed with the kernel's secret box (AES-256-GCM under SETTINGS_ENCRYPTION_KEY, as platform
 * settings are), never stored or returned whole. Disabling keeps the keys for the orders that use them.
 */
export const erpPaymentProvidersMigration: Migration = {
  name: '0541_erp_payment_providers',
  async up(knex) {
    await knex.schema.createTable('erp_payment_providers', (t) => {
      t.string('tenant_id', 63).notNullable();
      t.string('provider', 40).notNullable();
      t.boolean('enabled').notNullable();
      t.text('secret_key').notNullable();
      t.text('webhook_secret').notNullable();
      t.string('secret_key_hint', 40).notNullable();
      t.string('webhook_secret_hint', 40).notNullable();
      t.string('publishable_key', 255).nullable();
      t.string('updated_at', 30).notNullable();
      t.primary(['tenant_id', 'provider']);
    });
  },
  async down(knex) {
    await knex.schema.dropTableIfExists('erp_payment_providers');
  },
};
