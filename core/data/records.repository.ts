import type { Database } from '../db/database.js';
import type { RequestContext } from '../kernel/request-context.js';
import type { CompiledSchema } from '../metadata/schema-registry.js';
import { SqlListQuery, type ListQuery } from './list-query.js';

/** A stored record, flat as the API returns it. */
export interface DataRecord {
  id: string;
  createdAt: string;
  updatedAt: string;
  version: number;
  [field: string]: unknown;
}

interface RecordRow {
  tenant_id: string;
  id: string;
  data: unknown;
  version: number;
  created_at: string;
  updated_at: string;
}

/** SQL of the record tables. Every query is led by the tenant. */
export class RecordsRepository {
  constructor(private readonly db: Database) {}

  toRecord(row: Omit<RecordRow, 'tenant_id'>): DataRecord {
    const data = this.db.dialect.fromJson<Record<string, unknown>>(row.data);
    return { id: row.id, ...data, createdAt: row.created_at, updatedAt: row.updated_at, version: Number(row.version) };
  }

  async insert(rc: RequestContext, schema: CompiledSchema, id: string, data: Record<string, unknown>, now: string): Promise<DataRecord> {
    const row: RecordRow = { tenant_id: rc.tenantId!, id, data: this.db.dialect.toJson(data), version: 1, created_at: now, updated_at: now };
    await this.db.conn(rc)(schema.tableName).insert(row);
    return { id, ...data, createdAt: now, updatedAt: now, version: 1 };
  }

  async findById(rc: RequestContext, schema: CompiledSchema, id: string): Promise<DataRecord | null> {
    const row = await this.db.conn(rc)<RecordRow>(schema.tableName).where({ tenant_id: rc.tenantId!, id }).first();
    return row ? this.toRecord(row) : null;
  }

  /** Writes a new version if the stored one is still `version`; false when another write came first. */
  async update(rc: RequestContext, schema: CompiledSchema, id: string, version: number, data: Record<string, unknown>, now: string): Promise<boolean> {
    const changed = await this.db.conn(rc)(schema.tableName)
      .where({ tenant_id: rc.tenantId!, id, version })
      .update({ data: this.db.dialect.toJson(data), version: version + 1, updated_at: now });
    return changed === 1;
  }

  async delete(rc: RequestContext, schema: CompiledSchema, id: string, version: number): Promise<boolean> {
    const deleted = await this.db.conn(rc)(schema.tableName).where({ tenant_id: rc.tenantId!, id, version }).delete();
    return deleted === 1;
  }

  /** One page (limit + 1 rows, to know whether more follow) and, unless count=false, the total. */
  async list(rc: RequestContext, schema: CompiledSchema, query: ListQuery): Promise<{ rows: DataRecord[]; total: number | null }> {
    const conn = this.db.conn(rc);
    const sql = new SqlListQuery(this.db.dialect, schema.types);
    const page = conn<RecordRow>(schema.tableName).select('id', 'data', 'version', 'created_at', 'updated_at').where('tenant_id', rc.tenantId!);
    sql.applyFilters(page, query.filters);
    if (query.cursor) sql.applyCursor(page, query.sort, query.cursor);
    sql.applySort(page, query.sort);
    page.limit(query.limit + 1).offset(query.offset);

    let total: Promise<number | null> = Promise.resolve(null);
    if (query.count) {
      const counter = conn(schema.tableName).where('tenant_id', rc.tenantId!);
      sql.applyFilters(counter, query.filters);
      total = counter.count<{ n: number | string }[]>({ n: '*' }).then((r) => Number(r[0].n));
    }
    const [rows, n] = await Promise.all([page, total]);
    return { rows: rows.map((r) => this.toRecord(r)), total: n };
  }
}
