import type { Migration } from '../migration.js';

/**
 * Localised content (CONTRACT.md 17.2): each knowledge entry's `locale` (null for sources without one, e.g.
 * ingested web pages). A fresh database gets the column from 0300 (which runs after this one); one made before
 * gets it here. The schema's `workflow` column (`{ "drafts"?, "locales"? }`) is 0017's.
 */
export const contentLocalesMigration: Migration = {
  name: '0018_content_locales',
  async up(knex) {
    if (await knex.schema.hasTable('knowledge_entries') && !(await knex.schema.hasColumn('knowledge_entries', 'locale'))) {
      await knex.schema.alterTable('knowledge_entries', (t) => {
        t.string('locale', 35).nullable();
      });
    }
  },
  async down(knex) {
    if (await knex.schema.hasColumn('knowledge_entries', 'locale')) {
      await knex.schema.alterTable('knowledge_entries', (t) => {
        t.dropColumn('locale');
      });
    }
  },
};
