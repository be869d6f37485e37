import type { Migration } from '../migration.js';

/** Lets retention find the deliveries of an event by the event (tenant first, like every index). */
export const outboxRetentionMigration: Migration = {
  name: '0101_outbox_retention',
  async up(knex) {
    await knex.schema.alterTable('outbox_deliveries', (t) => {
      t.index(['tenant_id', 'event_id'], 'outbox_deliveries_tenant_event');
    });
  },
  async down(knex) {
    await knex.schema.alterTable('outbox_deliveries', (t) => {
      t.dropIndex(['tenant_id', 'event_id'], 'outbox_deliveries_tenant_event');
    });
  },
};
