import type { Knex } from 'knex';
import type { Database } from '../db/database.js';
import type { RequestContext } from '../base/request-context.js';
import type { Visibility } from './drivers/storage-driver.js';

/** What the service knows of an object; written only once its bytes are stored. */
export interface StoredObject {
  tenantId: string;
  key: string;
  product: string;
  collection: string;
  filename: string;
  size: number;
  contentType: string;
  sha256: string | null;
  etag: string;
  visibility: Visibility;
  createdAt: string;
  updatedAt: string;
}

interface ObjectRow {
  tenant_id: string; key: string; product: string; collection: string; filename: string; size: number | string;
  content_type: string; sha256: string | null; etag: string; visibility: Visibility; created_at: string; updated_at: string;
}

function toObject(row: ObjectRow): StoredObject {
  return {
    tenantId: row.tenant_id, key: row.key, product: row.product, collection: row.collection, filename: row.filename,
    size: Number(row.size), contentType: row.content_type, sha256: row.sha256, etag: row.etag, visibility: row.visibility,
    createdAt: row.created_at, updatedAt: row.updated_at,
  };
}

export interface ObjectFilter {
  product?: string;
  collection?: string;
}

/** SQL of the storage_objects table; every query is scoped by tenant. */
export class StorageRepository {
  constructor(private readonly db: Database) {}

  async find(rc: RequestContext | null, tenantId: string, key: string): Promise<StoredObject | null> {
    const row = await this.db.sql(rc).run(this.db.query<ObjectRow>('storage_objects').where({ tenant_id: tenantId, key }).first());
    return row ? toObject(row) : null;
  }

  /** Inserts the object or replaces the metadata of the same key (created_at is kept). */
  async upsert(rc: RequestContext | null, object: StoredObject): Promise<void> {
    await this.db.sql(rc).run(this.db.query('storage_objects')
      .insert({
        tenant_id: object.tenantId, key: object.key, product: object.product, collection: object.collection,
        filename: object.filename, size: object.size, content_type: object.contentType, sha256: object.sha256,
        etag: object.etag, visibility: object.visibility, created_at: object.createdAt, updated_at: object.updatedAt,
      })
      .onConflict(['tenant_id', 'key'])
      .merge(['size', 'content_type', 'sha256', 'etag', 'visibility', 'updated_at']));
  }

  async delete(rc: RequestContext | null, tenantId: string, key: string): Promise<boolean> {
    const n = await this.db.sql(rc).run(this.db.query('storage_objects').where({ tenant_id: tenantId, key }).delete());
    return n > 0;
  }

  async list(rc: RequestContext | null, tenantId: string, filter: ObjectFilter, limit: number, offset: number): Promise<{ items: StoredObject[]; total: number }> {
    const conn = this.db.sql(rc);
    const scope = (q: Knex.QueryBuilder) => {
      q.where({ tenant_id: tenantId });
      if (filter.product) q.andWhere({ product: filter.product });
      if (filter.collection) q.andWhere({ collection: filter.collection });
      return q;
    };
    const [rows, count] = await Promise.all([
      conn.run(scope(this.db.query('storage_objects')).orderBy('key').limit(limit).offset(offset)) as Promise<ObjectRow[]>,
      conn.run(scope(this.db.query('storage_objects')).count({ n: '*' })) as Promise<Array<{ n: number | string }>>,
    ]);
    return { items: rows.map(toObject), total: Number(count[0].n) };
  }
}
