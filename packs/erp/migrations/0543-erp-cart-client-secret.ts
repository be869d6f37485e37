import type { Migration } from '../../../core/pack-api.js';

/**
 * A card checkout's cart keeps the client secret of its order's PaymentIntent (CONTRACT 15.2): the completed cart
 * shows it while the order waits for its payment, so the storefront can confirm the payment again after a reload.
 */
export const erpCartClientSecretMigration: Migration = {
  name: '0543_erp_cart_client_secret',
  async up(knex) {
    await knex.schema.alterTable('erp_carts', (t) => {
      t.string('client_secret', 255).nullable();
    });
  },
  async down(knex) {
    await knex.schema.alterTable('erp_carts', (t) => {
      t.dropColumn('client_secret');
    });
  },
};
