import type { Migration } from '../../../core/pack-api.js';

/**
 * Commerce: the per-tenant number sequences of products and orders (a number once committed is never
 * handed out again) and the stock ledger, one movement per change of a product's physicalStock.
 * Products and orders themselves are records (erp.product, erp.order).
 */
export const erpCommerceMigration: Migration = {
  name: '0500_erp_commerce',
  async up(knex) {
    await knex.schema.createTable('erp_sequences', (t) => {
      t.string('tenant_id', 63).notNullable();
      // `product` | `order`
      t.string('name', 40).notNullable();
      t.bigInteger('value').notNullable();
      t.primary(['tenant_id', 'name']);
    });
    await knex.schema.createTable('erp_stock_movements', (t) => {
      t.string('tenant_id', 63).notNullable();
      t.string('id', 36).notNullable();
      t.string('product_id', 36).notNullable();
      t.bigInteger('delta').notNullable();
      // initial | order | cancel | patch | restock | correction | damage | return
      t.string('reason', 20).notNullable();
      t.string('order_id', 36).nullable();
      t.text('note').nullable();
      t.bigInteger('stock_after').notNullable();
      t.string('created_at', 30).notNullable();
      t.primary(['tenant_id', 'id']);
      t.index(['tenant_id', 'product_id', 'id']);
      t.index(['tenant_id', 'order_id']);
    });
  },
  async down(knex) {
    await knex.schema.dropTable('erp_stock_movements');
    await knex.schema.dropTable('erp_sequences');
  },
};
