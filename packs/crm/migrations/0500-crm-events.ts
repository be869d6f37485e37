import type { Migration } from '../../../core/pack-api.js';

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
