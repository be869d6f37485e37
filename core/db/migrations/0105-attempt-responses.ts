import type { Migration } from '../migration.js';

/**
 * Every webhook attempt keeps the receiver's answer as the delivery detail shows it: its headers (a JSON object,
 * names in lower case) and the first KiB of its body (docs/events.md). Attempts written before keep null.
 */
export const attemptResponsesMigration: Migration = {
  name: '0105_attempt_responses',
  async up(knex) {
    await knex.schema.alterTable('outbox_attempts', (t) => {
      t.text('response_headers').nullable();
      t.text('response_body').nullable();
    });
  },
  async down(knex) {
    await knex.schema.alterTable('outbox_attempts', (t) => {
      t.dropColumn('response_headers');
      t.dropColumn('response_body');
    });
  },
};
