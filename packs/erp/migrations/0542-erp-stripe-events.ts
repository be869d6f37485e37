import type { Migration } from '../../../core/pack-api.js';

/**
 * The Stripe events a tenant's webhook has handled (CONTRACT 15.3): an event id is claimed by its insert in the
 * transaction of the change it makes, so it counts as handled only when that change commits; a second delivery
 * finds it and changes nothing.
 */
export const erpStripeEventsMigration: Migration = {
  name: '0542_erp_stripe_events',
  async up(knex) {
    await knex.schema.createTable('erp_stripe_events', (t) => {
      t.string('tenant_id', 63).notNullable();
      t.string('event_id', 255).notNullable();
      t.string('type', 100).notNullable();
      t.string('handled_at', 30).notNullable();
      t.primary(['tenant_id', 'event_id']);
    });
  },
  async down(knex) {
    await knex.schema.dropTableIfExists('erp_stripe_events');
  },
};
