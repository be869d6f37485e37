import type { Database } from '../db/database.js';
import type { RequestContext } from '../base/request-context.js';
import type { ConnectorRow } from './connector.js';

/** Columns written on create or update (snake_case), already serialised. */
export interface ConnectorColumns {
  url?: string;
  events?: string[];
  product?: string | null;
  active?: boolean;
  description?: string | null;
  secret?: string | null;
  disabled_reason?: string | null;
}

/** The tenant's connectors. Every query is scoped by rc.tenantId. */
export class ConnectorsRepository {
  constructor(private readonly db: Database) {}

  async insert(rc: RequestContext, id: string, columns: ConnectorColumns, at: string): Promise<void> {
    await this.db.sql(rc).run(this.db.query('connectors').insert({
      tenant_id: rc.tenantId,
      id,
      ...this.serialise(columns),
      created_at: at,
      updated_at: at,
    }));
  }

  async update(rc: RequestContext, id: string, columns: ConnectorColumns, at: string): Promise<boolean> {
    const count = await this.db.sql(rc).run(this.db.query('connectors')
      .where({ tenant_id: rc.tenantId, id })
      .update({ ...this.serialise(columns), updated_at: at }));
    return count > 0;
  }

  async delete(rc: RequestContext, id: string): Promise<boolean> {
    return (await this.db.sql(rc).run(this.db.query('connectors').where({ tenant_id: rc.tenantId, id }).delete())) > 0;
  }

  async get(rc: RequestContext, id: string): Promise<ConnectorRow | null> {
    const row = await this.db.sql(rc).run(this.db.query('connectors').where({ tenant_id: rc.tenantId, id }).first());
    return row ? this.map(row) : null;
  }

  async list(rc: RequestContext, limit: number, offset: number): Promise<{ items: ConnectorRow[]; total: number }> {
    const conn = this.db.sql(rc);
    const rows = await conn.run(this.db.query('connectors').where({ tenant_id: rc.tenantId })
      .orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }]).limit(limit).offset(offset));
    const [{ n }] = await conn.run(this.db.query('connectors').where({ tenant_id: rc.tenantId }).count({ n: '*' }));
    return { items: rows.map((r) => this.map(r)), total: Number(n) };
  }

  /** Connectors by id within one tenant, for the dispatcher. */
  async getMany(rc: RequestContext, ids: string[]): Promise<ConnectorRow[]> {
    if (!ids.length) return [];
    const rows = await this.db.sql(rc).run(this.db.query('connectors').where({ tenant_id: rc.tenantId }).whereIn('id', ids));
    return rows.map((r) => this.map(r));
  }

  private serialise(columns: ConnectorColumns): Record<string, unknown> {
    const out: Record<string, unknown> = { ...columns };
    if (columns.events) out.events = this.db.dialect.toJson(columns.events);
    return out;
  }

  private map(row: Record<string, any>): ConnectorRow {
    return {
      id: row.id,
      url: row.url,
      events: this.db.dialect.fromJson<string[]>(row.events),
      product: row.product ?? null,
      active: Boolean(row.active),
      description: row.description ?? null,
      hasSecret: row.secret != null,
      sealedSecret: row.secret ?? null,
      disabledReason: row.disabled_reason ?? null,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    };
  }
}
