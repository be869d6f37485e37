import type { Migration } from '../../../core/pack-api.js';

/**
 * Server-side carts of storefronts (CONTRACT 15.2): not records (they are many, short-lived, and written by
 * shoppers without credentials). A cart is found by tenant, id and the SHA-256 of its secret token (the
 * token itself is never stored); its lines, one per sku, live beside it. Tenant first in every key.
 */
export const erpCartsMigration: Migration = {
  name: '0540_erp_carts',
  async up(knex) {
    await knex.schema.createTable('erp_carts', (t) => {
      t.string('tenant_id', 63).notNullable();
      t.string('id', 36).notNullable();
      t.string('token_hash', 64).notNullable();
      // open | completed (expired is an open cart past expires_at)
      t.string('status', 12).notNullable();
      t.string('currency', 3).notNullable();
      t.string('customer_ref', 128).nullable();
      t.string('email', 254).nullable();
      t.text('shipping_address').nullable();
      t.string('shipping_option_id', 36).nullable();
      t.string('coupon_code', 12).nullable();
      t.integer('coupon_percent_off').nullable();
      t.string('order_id', 36).nullable();
      t.string('created_at', 30).notNullable();
      t.string('updated_at', 30).notNullable();
      t.string('expires_at', 30).notNullable();
      t.primary(['tenant_id', 'id']);
    });
    await knex.schema.createTable('erp_cart_items', (t) => {
      t.string('tenant_id', 63).notNullable();
      t.string('cart_id', 36).notNullable();
      t.string('sku', 64).notNullable();
      t.integer('quantity').notNullable();
      t.primary(['tenant_id', 'cart_id', 'sku']);
    });
  },
  async down(knex) {
    await knex.schema.dropTableIfExists('erp_cart_items');
    await knex.schema.dropTableIfExists('erp_carts');
  },
};
