import type { Database } from '../db/database.js';
import type { RequestContext } from '../base/request-context.js';

export type TenantStatus = 'active' | 'suspended';
export type TenantPlan = 'free' | 'pro' | 'enterprise';

export interface TenantRecord {
  id: string;
  name: string;
  plan: TenantPlan;
  status: TenantStatus;
  createdAt: string;
  updatedAt: string;
}

export interface ModuleRecord {
  appCode: string;
  isEnabled: boolean;
  updatedAt: string;
}

interface TenantRow {
  id: string; name: string; plan: TenantPlan; status: TenantStatus; created_at: string; updated_at: string;
}

function toTenant(row: TenantRow): TenantRecord {
  return { id: row.id, name: row.name, plan: row.plan, status: row.status, createdAt: row.created_at, updatedAt: row.updated_at };
}

/** Tenants and their licensed modules: the kernel's part of tenancy. */
export class TenantsRepository {
  constructor(private readonly db: Database) {}

  async findById(rc: RequestContext | null, id: string): Promise<TenantRecord | null> {
    const row = await this.db.sql(rc).run(this.db.query<TenantRow>('tenants').where({ id }).first());
    return row ? toTenant(row) : null;
  }

  /**
   * The tenant and, in the same query, whether one licensed module is enabled for it (null: no row).
   * The request pipeline calls this on every request, so it is one round trip of precompiled SQL.
   */
  async findWithModule(rc: RequestContext | null, id: string, appCode: string): Promise<{ tenant: TenantRecord; moduleEnabled: boolean | null } | null> {
    const rows = await this.db.sql(rc).rows<TenantRow & { is_enabled: unknown }>(
      'SELECT t.id, t.name, t.plan, t.status, t.created_at, t.updated_at, m.is_enabled FROM tenants t '
      + 'LEFT JOIN tenant_modules m ON m.tenant_id = t.id AND m.app_code = ? WHERE t.id = ?', [appCode, id]);
    const row = rows[0];
    if (!row) return null;
    return { tenant: toTenant(row), moduleEnabled: row.is_enabled === null || row.is_enabled === undefined ? null : Boolean(row.is_enabled) };
  }

  async insert(rc: RequestContext, tenant: TenantRecord): Promise<void> {
    await this.db.sql(rc).run(this.db.query('tenants').insert({
      id: tenant.id, name: tenant.name, plan: tenant.plan, status: tenant.status, created_at: tenant.createdAt, updated_at: tenant.updatedAt,
    }));
  }

  async update(rc: RequestContext, id: string, changes: Partial<Pick<TenantRecord, 'name' | 'plan' | 'status'>>, updatedAt: string): Promise<void> {
    await this.db.sql(rc).run(this.db.query('tenants').where({ id }).update({ ...changes, updated_at: updatedAt }));
  }

  async list(rc: RequestContext | null, limit: number, offset: number): Promise<{ items: TenantRecord[]; total: number }> {
    const conn = this.db.sql(rc);
    const [rows, count] = await Promise.all([
      conn.run(this.db.query<TenantRow>('tenants').orderBy('created_at', 'desc').orderBy('id').limit(limit).offset(offset)),
      conn.run(this.db.query('tenants').count<{ n: number | string }[]>({ n: '*' })),
    ]);
    return { items: rows.map(toTenant), total: Number(count[0].n) };
  }

  async listModules(rc: RequestContext | null, tenantId: string): Promise<ModuleRecord[]> {
    const rows = await this.db.sql(rc).run(this.db.query('tenant_modules').where({ tenant_id: tenantId }).orderBy('app_code'));
    return rows.map((r: any) => ({ appCode: r.app_code, isEnabled: Boolean(r.is_enabled), updatedAt: r.updated_at }));
  }

  async findModule(rc: RequestContext | null, tenantId: string, appCode: string): Promise<ModuleRecord | null> {
    const row = await this.db.sql(rc).run(this.db.query('tenant_modules').where({ tenant_id: tenantId, app_code: appCode }).first());
    return row ? { appCode: row.app_code, isEnabled: Boolean(row.is_enabled), updatedAt: row.updated_at } : null;
  }

  async upsertModule(rc: RequestContext, tenantId: string, appCode: string, isEnabled: boolean, updatedAt: string): Promise<void> {
    await this.db.sql(rc).run(this.db.query('tenant_modules')
      .insert({ tenant_id: tenantId, app_code: appCode, is_enabled: isEnabled, updated_at: updatedAt })
      .onConflict(['tenant_id', 'app_code'])
      .merge(['is_enabled', 'updated_at']));
  }
}
