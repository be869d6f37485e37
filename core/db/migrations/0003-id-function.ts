import type { Migration } from '../migration.js';

/**
 * `hp_new_id()`: a UUIDv7 (the product's id format, core/base/ids.ts) made by the database, for rows that
 * INSERT ... SELECT writes (one outbox delivery per matching connector). On SQLite the connection
 * registers it as a function of the driver (core/db/connect.ts); on PostgreSQL it is this SQL function:
 * a random UUID whose first 48 bits become the Unix time in milliseconds and whose version becomes 7.
 */
export const idFunctionMigration: Migration = {
  name: '0003_id_function',
  async up(knex, dialect) {
    if (dialect.name !== 'postgres') return;
    await knex.raw(`
      CREATE OR REPLACE FUNCTION hp_new_id() RETURNS varchar AS $$
        SELECT encode(
          set_bit(set_bit(
            overlay(uuid_send(gen_random_uuid())
              placing substring(int8send(floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint) FROM 3)
              FROM 1 FOR 6),
            52, 1), 53, 1),
          'hex')::uuid::varchar
      $$ LANGUAGE sql VOLATILE`);
  },
  async down(knex, dialect) {
    if (dialect.name !== 'postgres') return;
    await knex.raw('DROP FUNCTION IF EXISTS hp_new_id()');
  },
};
