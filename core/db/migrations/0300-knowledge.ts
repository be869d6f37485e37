import type { Migration } from '../migration.js';

/**
 * The knowledge store: one row per chunk, led by tenant_id. Full-text search is engine specific:
 * SQLite keeps an external-content FTS5 table in step through triggers; PostgreSQL a generated
 * tsvector column with a GIN index.
 */
export const knowledgeMigration: Migration = {
  name: '0300_knowledge',
  async up(knex, dialect) {
    await knex.schema.createTable('knowledge_entries', (t) => {
      t.string('tenant_id', 63).notNullable();
      t.string('id', 36).notNullable();
      t.string('title', 300).notNullable();
      t.text('content').notNullable();
      t.string('source_module', 40).notNullable();
      t.string('source_ref', 500).notNullable();
      t.string('url', 2000).nullable();
      t.integer('chunk_no').notNullable();
      t.string('created_at', 30).notNullable();
      t.string('updated_at', 30).notNullable();
      // The entry's locale (CONTRACT.md 17.2); on databases made before it, 0018 adds the column.
      t.string('locale', 35).nullable();
      t.primary(['tenant_id', 'id']);
      t.index(['tenant_id', 'source_module', 'source_ref', 'chunk_no'], 'knowledge_entries_source_idx');
    });
    if (dialect.name === 'postgres') {
      await knex.raw(`ALTER TABLE knowledge_entries ADD COLUMN search tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('simple', coalesce(title, '')), 'A') || setweight(to_tsvector('simple', coalesce(content, '')), 'B')
      ) STORED`);
      await knex.raw('CREATE INDEX knowledge_entries_search_idx ON knowledge_entries USING GIN (search)');
    } else {
      await knex.raw(`CREATE VIRTUAL TABLE knowledge_fts USING fts5(title, content, content='knowledge_entries', content_rowid='rowid', tokenize='unicode61 remove_diacritics 2')`);
      await knex.raw(`CREATE TRIGGER knowledge_entries_ai AFTER INSERT ON knowledge_entries BEGIN
        INSERT INTO knowledge_fts(rowid, title, content) VALUES (new.rowid, new.title, new.content); END`);
      await knex.raw(`CREATE TRIGGER knowledge_entries_ad AFTER DELETE ON knowledge_entries BEGIN
        INSERT INTO knowledge_fts(knowledge_fts, rowid, title, content) VALUES ('delete', old.rowid, old.title, old.content); END`);
      await knex.raw(`CREATE TRIGGER knowledge_entries_au AFTER UPDATE ON knowledge_entries BEGIN
        INSERT INTO knowledge_fts(knowledge_fts, rowid, title, content) VALUES ('delete', old.rowid, old.title, old.content);
        INSERT INTO knowledge_fts(rowid, title, content) VALUES (new.rowid, new.title, new.content); END`);
    }
  },
  async down(knex, dialect) {
    if (dialect.name === 'sqlite') {
      for (const trigger of ['knowledge_entries_ai', 'knowledge_entries_ad', 'knowledge_entries_au']) await knex.raw(`DROP TRIGGER IF EXISTS ${trigger}`);
      await knex.raw('DROP TABLE IF EXISTS knowledge_fts');
    }
    await knex.schema.dropTableIfExists('knowledge_entries');
  },
};
