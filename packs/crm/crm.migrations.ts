import type { Migration } from '../../core/pack-api.js';

/**
 * First-party events live in a table of their own, not as records: there are many of them, they are never
 * edited, and the cart queries read them by customer and time. `event_id` (the client's id, optional) is
 * unique per tenant, which is what makes a retried POST a duplicate instead of a second event. The client
 * address is never a column.
 */
export const crmEventsMigration: Migration = {
  name: '0500_crm_events',
  async up(knex) {
    await knex.schema.createTable('crm_events', (t) => {
      t.string('tenant_id', 63).notNullable();
      t.string('id', 36).notNullable();
      t.string('event_id', 36).nullable();
      t.string('event_type', 100).notNullable();
      t.string('customer_ref', 128).notNullable();
      t.jsonb('event_data').notNullable();
      t.string('occurred_at', 30).notNullable();
      t.string('received_at', 30).notNullable();
      t.boolean('bot').notNullable();
      t.primary(['tenant_id', 'id']);
      t.unique(['tenant_id', 'event_id'], { indexName: 'crm_events_event_id_unique' });
      t.index(['tenant_id', 'customer_ref', 'occurred_at'], 'crm_events_customer_idx');
      t.index(['tenant_id', 'occurred_at'], 'crm_events_occurred_idx');
    });
  },
  async down(knex) {
    await knex.schema.dropTableIfExists('crm_events');
  },
};

/**
 * The last support ticket number given per tenant and year. Taking a number is one upsert of this row in
 * the ticket's own transaction: the row lock (PostgreSQL) or the write lock (SQLite) orders concurrent
 * creations, and a rolled-back creation gives its number back, so numbers run without gaps.
 */
export const ticketCountersMigration: Migration = {
  name: '0501_crm_ticket_counters',
  async up(knex) {
    await knex.schema.createTable('crm_ticket_counters', (t) => {
      t.string('tenant_id', 63).notNullable();
      t.integer('year').notNullable();
      t.integer('last_number').notNullable();
      t.primary(['tenant_id', 'year']);
    });
  },
  async down(knex) {
    await knex.schema.dropTableIfExists('crm_ticket_counters');
  },
};

/**
 * Abandoned-cart recovery: the coupons it makes and the carts it has recovered. A coupon is redeemed by
 * one conditional UPDATE (`WHERE redeemed_at IS NULL`), so of concurrent orders with one code exactly one
 * wins. A cart is recovered once: its key (customer and last cart event) is the primary key of
 * crm_recovered_carts, and only the run whose insert lands makes the coupon.
 */
export const cartRecoveryMigration: Migration = {
  name: '0502_crm_cart_recovery',
  async up(knex) {
    await knex.schema.createTable('crm_coupons', (t) => {
      t.string('tenant_id', 63).notNullable();
      t.string('code', 12).notNullable();
      t.string('customer_ref', 128).notNullable();
      t.integer('percent_off').notNullable();
      t.string('expires_at', 30).notNullable();
      t.string('created_at', 30).notNullable();
      t.string('redeemed_at', 30).nullable();
      t.string('order_id', 36).nullable();
      t.primary(['tenant_id', 'code']);
      t.index(['tenant_id', 'customer_ref', 'created_at'], 'crm_coupons_customer_idx');
    });
    await knex.schema.createTable('crm_recovered_carts', (t) => {
      t.string('tenant_id', 63).notNullable();
      t.string('customer_ref', 128).notNullable();
      t.string('last_event_id', 36).notNullable();
      t.string('recovered_at', 30).notNullable();
      t.string('coupon_code', 12).nullable();
      t.primary(['tenant_id', 'customer_ref', 'last_event_id']);
    });
  },
  async down(knex) {
    await knex.schema.dropTableIfExists('crm_recovered_carts');
    await knex.schema.dropTableIfExists('crm_coupons');
  },
};

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
