import type { Migration } from '../migration.js';

/**
 * Every outbox event gets a stream position (CONTRACT.md 12.4, core/events/change-stream.ts): `txid`, the
 * writing transaction's id, and `position`, a sequence number taken at insert. Streams read in
 * (txid, position) order and only below the commit horizon, so they never pass an event that may still
 * commit.
 *
 * PostgreSQL: `txid` defaults to pg_current_xact_id(); the horizon is the oldest transaction still running
 * (pg_snapshot_xmin), below which every transaction has committed or rolled back.
 * SQLite: one writer at a time, so insert order is commit order: `txid` is 0 and `position` an AUTOINCREMENT
 * key (never reused, kept by VACUUM), for which the table is rebuilt; (tenant_id, id) stays unique.
 */
export const outboxPositionsMigration: Migration = {
  name: '0103_outbox_positions',
  async up(knex, dialect) {
    if (dialect.name === 'postgres') {
      await knex.raw('ALTER TABLE outbox_events ADD COLUMN position bigserial');
      await knex.raw('ALTER TABLE outbox_events ADD COLUMN txid bigint NOT NULL DEFAULT (pg_current_xact_id()::text)::bigint');
    } else {
      await knex.raw(`CREATE TABLE outbox_events_positioned (
        position integer PRIMARY KEY AUTOINCREMENT,
        txid integer NOT NULL DEFAULT 0,
        tenant_id varchar(63) NOT NULL,
        id varchar(36) NOT NULL,
        name varchar(200) NOT NULL,
        product varchar(100) NULL,
        payload json NOT NULL,
        occurred_at varchar(30) NOT NULL)`);
      await knex.raw(`INSERT INTO outbox_events_positioned (tenant_id, id, name, product, payload, occurred_at)
        SELECT tenant_id, id, name, product, payload, occurred_at FROM outbox_events ORDER BY id`);
      await knex.raw('DROP TABLE outbox_events');
      await knex.raw('ALTER TABLE outbox_events_positioned RENAME TO outbox_events');
      await knex.raw('CREATE UNIQUE INDEX outbox_events_tenant_id_id_unique ON outbox_events (tenant_id, id)');
    }
    await knex.raw('CREATE INDEX outbox_events_stream ON outbox_events (tenant_id, txid, position)');
  },
  async down(knex, dialect) {
    await knex.raw('DROP INDEX outbox_events_stream');
    if (dialect.name === 'postgres') {
      await knex.raw('ALTER TABLE outbox_events DROP COLUMN txid');
      await knex.raw('ALTER TABLE outbox_events DROP COLUMN position');
      return;
    }
    await knex.raw(`CREATE TABLE outbox_events_plain (
      tenant_id varchar(63) NOT NULL, id varchar(36) NOT NULL, name varchar(200) NOT NULL, product varchar(100) NULL,
      payload json NOT NULL, occurred_at varchar(30) NOT NULL, PRIMARY KEY (tenant_id, id))`);
    await knex.raw(`INSERT INTO outbox_events_plain SELECT tenant_id, id, name, product, payload, occurred_at FROM outbox_events ORDER BY position`);
    await knex.raw('DROP TABLE outbox_events');
    await knex.raw('ALTER TABLE outbox_events_plain RENAME TO outbox_events');
  },
};
