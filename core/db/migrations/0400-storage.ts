import type { Migration } from '../migration.js';

/** Object metadata of the storage mediator; the bytes live in the driver. */
export const storageMigration: Migration = {
  name: '0400_storage',
  async up(knex) {
    await knex.schema.createTable('storage_objects', (t) => {
      t.string('tenant_id', 63).notNullable();
      t.string('key', 600).notNullable();
      t.string('product', 128).notNullable();
      t.string('collection', 128).notNullable();
      t.string('filename', 128).notNullable();
      t.bigInteger('size').notNullable();
      t.string('content_type', 200).notNullable();
      // Null for an object uploaded straight to S3 with a presigned URL (the bytes never passed here).
      t.string('sha256', 64).nullable();
      t.string('etag', 200).notNullable();
      t.string('visibility', 10).notNullable();
      t.string('created_at', 30).notNullable();
      t.string('updated_at', 30).notNullable();
      t.primary(['tenant_id', 'key']);
      t.index(['tenant_id', 'product', 'collection', 'filename']);
    });
  },
  async down(knex) {
    await knex.schema.dropTable('storage_objects');
  },
};
