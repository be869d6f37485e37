import type { Knex } from 'knex';
import type { Migration } from '../migration.js';
import { newId } from '../../base/ids.js';

/**
 * Exact totals without counting: every write of a record adds a row `+1` or `-1` to record_counts in its
 * own transaction (an insert, which group commit merges with the record's own; a single counter row would
 * be one hot row that every write of a tenant's schema waits for). Readers sum a tenant's rows for a
 * schema; the rows are folded into one now and then (core/data/totals.repository.ts). Existing records are counted
 * once here. On PostgreSQL every record table also gets a GIN index (jsonb_path_ops) on its document, so
 * that equality on any field, declared index or not, is served by an index.
 */
export const recordCountsMigration: Migration = {
  name: '0010_record_counts',
  async up(knex, dialect) {
    await knex.schema.createTable('record_counts', (t) => {
      t.string('tenant_id', 63).notNullable();
      t.integer('schema_id').notNullable();
      t.string('id', 36).notNullable();
      t.bigInteger('n').notNullable();
      t.primary(['tenant_id', 'schema_id', 'id']);
    });
    const schemas = await knex('schemas').select<Array<{ id: number; table_name: string }>>('id', 'table_name');
    for (const { id, table_name: table } of schemas) {
      if (!/^rec_\d+$/.test(table)) continue;
      const counts = await knex(table).select('tenant_id').count<Array<{ tenant_id: string; n: number | string }>>({ n: '*' }).groupBy('tenant_id');
      for (const c of counts) await knex('record_counts').insert({ tenant_id: c.tenant_id, schema_id: id, id: newId(), n: Number(c.n) });
      const index = dialect.documentIndexSql(table);
      if (index) await knex.raw(index);
    }
  },
  async down(knex: Knex) {
    await knex.schema.dropTable('record_counts');
  },
};
