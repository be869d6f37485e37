import type { Migration } from '../../../core/pack-api.js';

/**
 * The last support ticket number given per tenant and year. Taking a number is one upsert of this row in
 * the ticket's own transaction: the row lock (PostgreSQL) or the write lock (SQLite) orders concurrent
 * creations, and a rolled-back creation gives its number back, so numbers run without gaps.
 */
export const ticketCountersMigration: Migration = {
  name: '0501_crm_ticket_counters',
  async up(knex) {
    await knex.schema.createTable('crm_ticket_counters', (t) => {
      t.string('tenant_id', 63).notNullable();
      t.integer('year').notNullable();
      t.integer('last_number').notNullable();
      t.primary(['tenant_id', 'year']);
    });
  },
  async down(knex) {
    await knex.schema.dropTableIfExists('crm_ticket_counters');
  },
};
