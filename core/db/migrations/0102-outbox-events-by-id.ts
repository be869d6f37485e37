import type { Migration } from '../migration.js';

/**
 * Events are found for retention by their id (a UUIDv7 starts with its time, core/base/ids.ts), through the
 * primary key: the (tenant_id, occurred_at) index cost every event an index entry for a job run every ten
 * minutes.
 */
export const outboxEventsByIdMigration: Migration = {
  name: '0102_outbox_events_by_id',
  async up(knex) {
    await knex.schema.alterTable('outbox_events', (t) => {
      t.dropIndex(['tenant_id', 'occurred_at']);
    });
  },
  async down(knex) {
    await knex.schema.alterTable('outbox_events', (t) => {
      t.index(['tenant_id', 'occurred_at']);
    });
  },
};
