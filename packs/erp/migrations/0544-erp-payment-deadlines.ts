import type { Migration } from '../../../core/pack-api.js';

/**
 * The deadlines of unpaid orders (CONTRACT 15.3, 15.6): a row per `stripe_card` order waiting for its payment and
 * per `bank_transfer` order waiting for its money, written in the transaction that places the order, with the
 * time it is due. The payment timeout sweep reads only the rows that are due, across tenants, on the one index
 * here not led by the tenant (`due_at`), so 100,000 orders waiting cost it nothing until they are due. A row
 * is claimed by a conditional update of its `due_at` (a lease: another process's update finds it changed), so
 * each due order is handled by one process; after a card order's cancellation the row stays, in stage
 * `intent_cancel`, until its PaymentIntent is cancelled at Stripe (retried later on failure).
 */
export const erpPaymentDeadlinesMigration: Migration = {
  name: '0544_erp_payment_deadlines',
  async up(knex) {
    await knex.schema.createTable('erp_payment_deadlines', (t) => {
      t.string('tenant_id', 63).notNullable();
      t.string('order_id', 36).notNullable();
      // payment (the order waits for its payment) | intent_cancel (cancelled; its PaymentIntent is to be cancelled at Stripe)
      t.string('stage', 20).notNullable();
      t.string('due_at', 30).notNullable();
      t.integer('attempts').notNullable();
      t.primary(['tenant_id', 'order_id']);
      // The sweep's scan runs across tenants: due rows only, oldest first.
      t.index(['due_at'], 'erp_payment_deadlines_due');
    });
  },
  async down(knex) {
    await knex.schema.dropTableIfExists('erp_payment_deadlines');
  },
};
