import type { Migration } from '../migration.js';

/**
 * Pack event handlers run through the outbox: a delivery of kind `handler` names the subscription
 * (`<pack>:<pattern>`) it runs, beside `webhook` (connector_id) and `mail` deliveries.
 */
export const outboxHandlersMigration: Migration = {
  name: '0104_outbox_handlers',
  async up(knex) {
    await knex.schema.alterTable('outbox_deliveries', (t) => {
      t.string('handler', 200).nullable();
      t.index(['tenant_id', 'handler', 'created_at']);
    });
  },
  async down(knex) {
    await knex.schema.alterTable('outbox_deliveries', (t) => {
      t.dropIndex(['tenant_id', 'handler', 'created_at']);
      t.dropColumn('handler');
    });
  },
};
