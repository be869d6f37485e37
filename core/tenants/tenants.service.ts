import type { Database } from '../db/database.js';
import { nowIso } from '../db/ids.js';
import type { RequestContext } from '../kernel/request-context.js';
import { Conflict, TenantNotFound, ValidationFailed } from '../http/errors.js';
import { TenantsRepository, type ModuleRecord, type TenantPlan, type TenantRecord, type TenantStatus } from './tenants.repository.js';

export const TENANT_ID = /^[a-z0-9][a-z0-9-]{1,62}$/;
export const APP_CODES = ['cms', 'crm', 'erp'] as const;

export interface CreateTenantInput {
  id?: string;
  name: string;
  plan?: TenantPlan;
}

/** Makes a tenant id from a name: `Acme Clinic GmbH` → `acme-clinic-gmbh`. */
export function tenantIdFromName(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63)
    .replace(/-+$/g, '');
  return slug.length >= 2 ? slug : `t-${slug || 'tenant'}`;
}

/** The kernel's tenancy: tenant records and licensed modules, used by the auth pipeline and the packs. */
export class TenantsService {
  readonly repository: TenantsRepository;

  constructor(private readonly db: Database) {
    this.repository = new TenantsRepository(db);
  }

  get(rc: RequestContext | null, id: string): Promise<TenantRecord | null> {
    return this.repository.findById(rc, id);
  }

  async require(rc: RequestContext | null, id: string): Promise<TenantRecord> {
    const tenant = TENANT_ID.test(id) ? await this.repository.findById(rc, id) : null;
    if (!tenant) throw TenantNotFound(id);
    return tenant;
  }

  /** Creates a tenant with every licensed module enabled. Joins rc's transaction when there is one. */
  async create(rc: RequestContext, input: CreateTenantInput): Promise<TenantRecord> {
    const id = input.id ?? tenantIdFromName(input.name);
    if (!TENANT_ID.test(id)) {
      throw ValidationFailed('Invalid tenant id', [{ path: '/id', message: 'must match ^[a-z0-9][a-z0-9-]{1,62}$' }]);
    }
    const now = nowIso();
    const tenant: TenantRecord = { id, name: input.name, plan: input.plan ?? 'free', status: 'active', createdAt: now, updatedAt: now };
    return this.db.transaction(rc, async (rc) => {
      if (await this.repository.findById(rc, id)) throw Conflict(`A tenant "${id}" exists already`);
      await this.repository.insert(rc, tenant);
      for (const appCode of APP_CODES) await this.repository.upsertModule(rc, id, appCode, true, now);
      return tenant;
    });
  }

  async update(rc: RequestContext, id: string, changes: { name?: string; plan?: TenantPlan; status?: TenantStatus }): Promise<TenantRecord> {
    return this.db.transaction(rc, async (rc) => {
      await this.require(rc, id);
      await this.repository.update(rc, id, changes, nowIso());
      return (await this.repository.findById(rc, id))!;
    });
  }

  list(rc: RequestContext | null, limit: number, offset: number) {
    return this.repository.list(rc, limit, offset);
  }

  listModules(rc: RequestContext | null, tenantId: string): Promise<ModuleRecord[]> {
    return this.repository.listModules(rc, tenantId);
  }

  /**
   * The tenant (null when unknown) and whether `appCode` is enabled for it, in one query, read fresh on
   * every call so that disabling a module takes effect at once in every process.
   */
  async lookup(rc: RequestContext | null, id: string, appCode: string | null): Promise<{ tenant: TenantRecord; moduleEnabled: boolean } | null> {
    if (!TENANT_ID.test(id)) return null;
    // No module to check: '' matches no module row, and the query stays the same prepared statement.
    const found = await this.repository.findWithModule(rc, id, appCode ?? '');
    return found ? { tenant: found.tenant, moduleEnabled: found.moduleEnabled ?? true } : null;
  }

  /** A module without a row counts as enabled (a pack added after the tenant was created). */
  async isModuleEnabled(rc: RequestContext | null, tenantId: string, appCode: string): Promise<boolean> {
    const module = await this.repository.findModule(rc, tenantId, appCode);
    return module ? module.isEnabled : true;
  }

  async setModule(rc: RequestContext, tenantId: string, appCode: string, isEnabled: boolean): Promise<ModuleRecord> {
    const now = nowIso();
    await this.repository.upsertModule(rc, tenantId, appCode, isEnabled, now);
    return { appCode, isEnabled, updatedAt: now };
  }
}
