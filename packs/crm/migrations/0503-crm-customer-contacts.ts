import type { Migration } from '../../../core/pack-api.js';

/** Customers' contact addresses for cart reminders (`PUT /crm/customers/{customerRef}/contact`), one per customer. */
export const customerContactsMigration: Migration = {
  name: '0503_crm_customer_contacts',
  async up(knex) {
    await knex.schema.createTable('crm_customer_contacts', (t) => {
      t.string('tenant_id', 63).notNullable();
      t.string('customer_ref', 128).notNullable();
      t.string('email', 254).notNullable();
      t.boolean('cart_reminders').notNullable();
      t.string('updated_at', 30).notNullable();
      t.primary(['tenant_id', 'customer_ref']);
    });
  },
  async down(knex) {
    await knex.schema.dropTableIfExists('crm_customer_contacts');
  },
};
