import type { Migration } from '../../../core/pack-api.js';

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
