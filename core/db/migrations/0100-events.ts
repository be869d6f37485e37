import type { Migration } from '../migration.js';

/**
 * Connectors (webhook subscriptions), the outbox's deliveries (webhook deliveries and mail jobs, one queue)
 * and the log of every delivery attempt.
 */
export const eventsMigration: Migration = {
  name: '0100_events',
  async up(knex) {
    await knex.schema.createTable('connectors', (t) => {
      t.string('tenant_id', 63).notNullable();
      t.string('id', 36).notNullable();
      t.string('url', 2048).notNullable();
      t.jsonb('events').notNullable();
      t.string('product', 100).nullable();
      t.boolean('active').notNullable();
      t.text('description').nullable();
      // The connector's own signing secret, encrypted (core/base/secret-box.ts); null: SIGNING_SECRET.
      t.text('secret').nullable();
      // Why the platform turned the connector off (e.g. `gone`: the receiver answered 410).
      t.string('disabled_reason', 100).nullable();
      t.string('created_at', 30).notNullable();
      t.string('updated_at', 30).notNullable();
      t.primary(['tenant_id', 'id']);
      t.index(['tenant_id', 'active']);
    });
    await knex.schema.createTable('outbox_deliveries', (t) => {
      t.string('tenant_id', 63).notNullable();
      t.string('id', 36).notNullable();
      // `webhook` (connector_id, event_id) or `mail` (message).
      t.string('kind', 20).notNullable();
      t.string('connector_id', 36).nullable();
      t.string('event_id', 36).nullable();
      t.string('event_name', 200).nullable();
      t.jsonb('message').nullable();
      // pending | delivered | failed | cancelled
      t.string('status', 20).notNullable();
      t.integer('attempts').notNullable().defaultTo(0);
      t.string('next_attempt_at', 30).notNullable();
      t.string('claimed_until', 30).nullable();
      t.string('claimed_by', 100).nullable();
      t.integer('last_status_code').nullable();
      t.text('last_error').nullable();
      t.string('delivered_at', 30).nullable();
      t.string('created_at', 30).notNullable();
      t.string('updated_at', 30).notNullable();
      t.primary(['tenant_id', 'id']);
      t.index(['tenant_id', 'connector_id', 'created_at']);
      // The dispatcher's queue scan runs across tenants: the one index not led by tenant_id.
      t.index(['status', 'next_attempt_at']);
    });
    await knex.schema.createTable('outbox_attempts', (t) => {
      t.string('tenant_id', 63).notNullable();
      t.string('delivery_id', 36).notNullable();
      t.integer('attempt').notNullable();
      t.integer('status_code').nullable();
      t.integer('duration_ms').notNullable();
      t.text('error').nullable();
      t.string('at', 30).notNullable();
      t.primary(['tenant_id', 'delivery_id', 'attempt']);
    });
  },
  async down(knex) {
    await knex.schema.dropTable('outbox_attempts');
    await knex.schema.dropTable('outbox_deliveries');
    await knex.schema.dropTable('connectors');
  },
};
