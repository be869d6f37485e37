import type { Migration } from '../../../core/pack-api.js';

type Knex = Parameters<Migration['up']>[0];

/**
 * Co-purchase counts, what the CRM's recommendations read (CONTRACT 11.4): per tenant and pair of products,
 * the number of orders, not cancelled, that hold both. The pair of a product with itself is the number of
 * orders holding it (the best sellers). Order placement adds 1 to every pair of its products (both ways) in
 * its transaction; a cancellation takes 1 off in its own. Tenant first in every key.
 */
export const erpCoPurchasesMigration: Migration = {
  name: '0510_erp_co_purchases',
  async up(knex) {
    await knex.schema.createTable('erp_co_purchases', (t) => {
      t.string('tenant_id', 63).notNullable();
      t.string('product_id', 36).notNullable();
      t.string('other_id', 36).notNullable();
      t.integer('orders').notNullable();
      t.primary(['tenant_id', 'product_id', 'other_id']);
    });
    await backfillCoPurchases(knex);
  },
  async down(knex) {
    await knex.schema.dropTable('erp_co_purchases');
  },
};

/**
 * Counts the orders already placed, from the stock ledger (one `order` movement per product of an order, one
 * `cancel` movement per product of a cancelled one): one INSERT ... SELECT. Adds to what the table holds, so
 * it runs on an empty table (the migration; the benchmark after loading its orders straight into the ledger).
 */
export async function backfillCoPurchases(knex: Knex): Promise<void> {
  await knex.raw(
    'INSERT INTO erp_co_purchases (tenant_id, product_id, other_id, orders) '
    + 'SELECT m.tenant_id, m.product_id, x.product_id, count(DISTINCT m.order_id) FROM erp_stock_movements m '
    + "JOIN erp_stock_movements x ON x.tenant_id = m.tenant_id AND x.order_id = m.order_id AND x.reason = 'order' "
    + "WHERE m.reason = 'order' AND m.order_id IS NOT NULL "
    + "AND NOT EXISTS (SELECT 1 FROM erp_stock_movements c WHERE c.tenant_id = m.tenant_id AND c.order_id = m.order_id AND c.reason = 'cancel') "
    + 'GROUP BY m.tenant_id, m.product_id, x.product_id');
}
