import type { Database } from '../db/database.js';
import { nowIso } from '../base/ids.js';
import type { RequestContext } from '../base/request-context.js';
import { Conflict, TenantNotFound, ValidationFailed } from '../base/errors.js';
import { TenantsRepository, type ModuleRecord, type TenantPlan, type TenantRecord, type TenantStatus } from './tenants.repository.js';

export const TENANT_ID = /^[a-z0-9][a-z0-9-]{1,62}$/;

export interface TenantLookup {
  readonly tenant: TenantRecord;
  readonly moduleEnabled: boolean;
}

/** The change feed's topic for tenants and their modules; the key is the tenant id. */
const TENANT_TOPIC = 'tenant';
/**
 * How long a tenant lookup is kept at most: the bound on staleness should the feed's connection die
 * without the process noticing (no notification, no error).
 */
const KNOWN_FOR_MS = 5_000;
const MAX_KNOWN_TENANTS = 10_000;
/**
 * How often, at most, the database's external change token (SQLite's data_version: has another process
 * committed?) is read. Reading it costs a trip through the connection pool, a twentieth of a small
 * request; under load this reads it once for a few dozen requests. It bounds how late a change made by
 * another process on the same SQLite file is seen (PostgreSQL's notifications take about as long).
 */
const TOKEN_READ_EVERY_MS = 10;

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
  /** Tenant lookups by tenant id, then module (see lookup). */
  private readonly known = new Map<string, Map<string, { value: TenantLookup; until: number }>>();
  private generation = 0;
  private seenToken: number | null = null;
  private tokenReadAt = 0;
  private readonly codes: string[] = [];

  constructor(private readonly db: Database) {
    this.repository = new TenantsRepository(db);
    db.changes.subscribe(TENANT_TOPIC, (id) => this.forget(id));
  }

  /** Declares a licensed app code (from a pack's `licensed`); a new tenant gets every declared one enabled. */
  declareAppCode(code: string): void {
    if (!this.codes.includes(code)) this.codes.push(code);
  }

  /** The licensed app codes the loaded packs declare. */
  get appCodes(): readonly string[] {
    return this.codes;
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
      for (const appCode of this.codes) await this.repository.upsertModule(rc, id, appCode, true, now);
      return tenant;
    });
  }

  async update(rc: RequestContext, id: string, changes: { name?: string; plan?: TenantPlan; status?: TenantStatus }): Promise<TenantRecord> {
    return this.db.transaction(rc, async (rc) => {
      await this.require(rc, id);
      await this.repository.update(rc, id, changes, nowIso());
      await this.db.changes.notify(rc, TENANT_TOPIC, id);
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
   * The tenant (null when unknown) and whether `appCode` is enabled for it. The request pipeline asks on
   * every request, so answers are kept in memory while they cannot be stale: every change to a tenant or
   * its modules goes through this service, which tells every process through the change feed (PostgreSQL
   * LISTEN/NOTIFY) in the writing transaction; on SQLite, a commit by another process changes the file's
   * data_version (read every TOKEN_READ_EVERY_MS at most), which clears everything. While the feed is
   * down, and inside transactions, the database answers. A module disabled anywhere is refused at once here and, in other processes, as soon as the
   * notification arrives (milliseconds).
   */
  lookup(rc: RequestContext | null, id: string, appCode: string | null): Promise<TenantLookup | null> {
    const known = rc?.trx ? undefined : this.lookupKnown(id, appCode);
    return known !== undefined ? Promise.resolve(known) : this.lookupChecked(rc, id, appCode);
  }

  /**
   * What lookup (outside a transaction) answers, when that is known at once: no token to read, the answer
   * kept; else undefined (then lookup asks). The request pipeline asks this first, so that the usual request
   * does not wait on a promise for it.
   */
  lookupKnown(id: string, appCode: string | null): TenantLookup | null | undefined {
    const now = Date.now();
    if (!this.db.changes.live || now - this.tokenReadAt >= TOKEN_READ_EVERY_MS) return undefined;
    if (!TENANT_ID.test(id)) return null;
    return this.kept(id, appCode ?? '', now);
  }

  /** The answer kept for the tenant and module key, while it is fresh; else undefined. */
  private kept(id: string, key: string, now: number): TenantLookup | null | undefined {
    const known = this.known.get(id)?.get(key);
    return known && known.until > now ? known.value : undefined;
  }

  private async lookupChecked(rc: RequestContext | null, id: string, appCode: string | null): Promise<TenantLookup | null> {
    if (!TENANT_ID.test(id)) return null;
    if (rc?.trx || !this.db.changes.live) return this.read(rc, id, appCode);
    const now = Date.now();
    if (now - this.tokenReadAt >= TOKEN_READ_EVERY_MS) {
      this.tokenReadAt = now;
      const token = await this.db.externalChangeToken(null);
      if (token !== this.seenToken) {
        this.seenToken = token;
        this.forget(null);
      }
    }
    const key = appCode ?? '';
    const known = this.kept(id, key, now);
    if (known !== undefined) return known;
    const generation = this.generation;
    const found = await this.read(rc, id, appCode);
    // Kept only if no change was heard while the query ran (it may have read the state before it).
    if (found && generation === this.generation) {
      if (this.known.size >= MAX_KNOWN_TENANTS) this.known.delete(this.known.keys().next().value!);
      let modules = this.known.get(id);
      if (!modules) this.known.set(id, (modules = new Map()));
      modules.set(key, { value: found, until: Date.now() + KNOWN_FOR_MS });
    }
    return found;
  }

  private async read(rc: RequestContext | null, id: string, appCode: string | null): Promise<TenantLookup | null> {
    // No module to check: '' matches no module row, and the query stays the same prepared statement.
    const found = await this.repository.findWithModule(rc, id, appCode ?? '');
    // Frozen: the same answer may serve many requests.
    return found ? Object.freeze({ tenant: Object.freeze(found.tenant), moduleEnabled: found.moduleEnabled ?? true }) : null;
  }

  /** Drops what is known of one tenant, or of all (null). */
  private forget(id: string | null): void {
    this.generation += 1;
    if (id === null) this.known.clear();
    else this.known.delete(id);
  }

  /** A module without a row counts as enabled (a pack added after the tenant was created). */
  async isModuleEnabled(rc: RequestContext | null, tenantId: string, appCode: string): Promise<boolean> {
    const module = await this.repository.findModule(rc, tenantId, appCode);
    return module ? module.isEnabled : true;
  }

  async setModule(rc: RequestContext, tenantId: string, appCode: string, isEnabled: boolean): Promise<ModuleRecord> {
    const now = nowIso();
    await this.db.transaction(rc, async (rc) => {
      await this.repository.upsertModule(rc, tenantId, appCode, isEnabled, now);
      await this.db.changes.notify(rc, TENANT_TOPIC, tenantId);
    });
    return { appCode, isEnabled, updatedAt: now };
  }
}
