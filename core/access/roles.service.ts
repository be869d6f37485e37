import type { AuditLog } from '../audit/audit-log.repository.js';
import { Conflict, NotFound, ValidationFailed } from '../base/errors.js';
import { checkIfMatch } from '../base/if-match.js';
import { nowIso } from '../base/ids.js';
import type { RequestContext } from '../base/request-context.js';
import type { Database } from '../db/database.js';
import { BUILT_IN_ROLES, isBuiltInRole, type RoleCatalogue } from './roles.js';
import { RolesRepository, type RolePolicy, type RoleRecord } from './roles.repository.js';

/**
 * How long a process keeps what it read of a role. A change applies to requests that start 1 s after its commit
 * in every process (CONTRACT.md 16.1): a kept answer is never older than this, and the changing process (and, on
 * PostgreSQL, every process through the change feed) forgets it at once.
 */
export const ROLE_KNOWN_FOR_MS = 500;
const MAX_KNOWN_ROLES = 10_000;
/** The change feed's topic for roles; the key is `<tenant>/<name>`. */
const ROLE_TOPIC = 'role';

/** A role as the API shows it: the built-in ones with `builtIn: true` and no policies. */
export interface RoleView {
  name: string;
  description: string;
  builtIn: boolean;
  policies: RolePolicy[];
  createdAt: string | null;
  updatedAt: string | null;
  version: number | null;
}

export interface RoleInput {
  name: string;
  description?: string;
  policies: RolePolicy[];
}

/** Checks a role's policies against the tenant's schemas (core/data/record-policies.ts): 400 validation_failed naming the path. */
export interface PolicyCheck {
  check(rc: RequestContext, policies: RolePolicy[]): Promise<void>;
}

/** Who holds a role outside the kernel's tables: memberships and pending invitations (the tenant-admin pack). */
export interface RoleHolders {
  holdsRole(rc: RequestContext, tenantId: string, role: string): Promise<boolean>;
}

/** Names no custom role takes: the built-in roles and superadmin (the roles routes' schemas say so too). */
export const RESERVED_ROLE_NAMES: readonly string[] = [...BUILT_IN_ROLES, 'superadmin'];
const RESERVED = new Set<string>(RESERVED_ROLE_NAMES);

function view(r: RoleRecord): RoleView {
  return { name: r.name, description: r.description, builtIn: false, policies: r.policies, createdAt: r.createdAt, updatedAt: r.updatedAt, version: r.version };
}

function builtInView(name: string): RoleView {
  return { name, description: `The built-in ${name} role`, builtIn: true, policies: [], createdAt: null, updatedAt: null, version: null };
}

/**
 * Custom roles of a tenant (CONTRACT.md 16.1): created, replaced and deleted by a tenant admin (each change in the
 * audit log, in its transaction), read by every request of a caller that holds one (kept ROLE_KNOWN_FOR_MS).
 * Also the role catalogue of API tokens, memberships and invitations: the built-in roles and the tenant's own.
 */
export class RolesService implements RoleCatalogue {
  readonly repository: RolesRepository;
  private readonly known = new Map<string, { role: RoleRecord | null; until: number }>();
  private generation = 0;
  private checker: PolicyCheck | null = null;
  private holders: RoleHolders | null = null;

  constructor(private readonly db: Database, private readonly audit: AuditLog) {
    this.repository = new RolesRepository(db);
    db.changes.subscribe(ROLE_TOPIC, (key) => this.forget(key));
  }

  /** Set once by the composition root: the policies' checker (it needs the schema registry and the list query). */
  usePolicyCheck(checker: PolicyCheck): void {
    this.checker = checker;
  }

  /** Set by the tenant-admin pack (through the membership slot): memberships and invitations that hold a role. */
  useHolders(holders: RoleHolders): void {
    this.holders = holders;
  }

  async exists(rc: RequestContext | null, tenantId: string, role: string): Promise<boolean> {
    if (isBuiltInRole(role)) return true;
    if (RESERVED.has(role)) return false;
    return (await this.repository.find(rc, tenantId, role)) !== null;
  }

  async describe(rc: RequestContext | null, tenantId: string): Promise<string[]> {
    return [...BUILT_IN_ROLES, ...(await this.repository.list(rc, tenantId)).map((r) => r.name)];
  }

  async list(rc: RequestContext | null, tenantId: string): Promise<RoleView[]> {
    return [...BUILT_IN_ROLES.map(builtInView), ...(await this.repository.list(rc, tenantId)).map(view)];
  }

  async get(rc: RequestContext | null, tenantId: string, name: string): Promise<RoleView> {
    if (isBuiltInRole(name)) return builtInView(name);
    const role = await this.repository.find(rc, tenantId, name);
    if (!role) throw NotFound(`No role "${name.slice(0, 40)}"`);
    return view(role);
  }

  async create(rc: RequestContext, tenantId: string, input: RoleInput): Promise<RoleView> {
    if (RESERVED.has(input.name)) throw ValidationFailed('Invalid name', [{ path: '/name', message: `"${input.name}" is reserved` }]);
    await this.checker?.check(rc, input.policies);
    const at = nowIso();
    const role: RoleRecord = { tenantId, name: input.name, description: input.description ?? '', policies: input.policies, createdAt: at, updatedAt: at, version: 1 };
    await this.db.transaction(rc, async (rc) => {
      if (await this.repository.find(rc, tenantId, input.name)) throw Conflict(`The role "${input.name}" exists already`);
      await this.repository.insert(rc, role);
      await this.changed(rc, tenantId, input.name, 'role.created', at);
    });
    return view(role);
  }

  /** Replaces a custom role's description and policies; `ifMatch` (its version) honoured: 412 when it moved. */
  async replace(rc: RequestContext, tenantId: string, name: string, input: Omit<RoleInput, 'name'>, ifMatch: string | null): Promise<RoleView> {
    if (RESERVED.has(name)) throw ValidationFailed('A built-in role cannot be changed', [{ path: '/name', message: `"${name}" is built in` }]);
    await this.checker?.check(rc, input.policies);
    return this.db.transaction(rc, async (rc) => {
      const current = await this.repository.find(rc, tenantId, name);
      if (!current) throw NotFound(`No role "${name.slice(0, 40)}"`);
      checkIfMatch(ifMatch, current.version);
      const at = nowIso();
      const next: RoleRecord = { ...current, description: input.description ?? '', policies: input.policies, updatedAt: at, version: current.version + 1 };
      if (!(await this.repository.replace(rc, next, current.version))) throw Conflict('The role was changed by another request; read it again and retry');
      await this.changed(rc, tenantId, name, 'role.updated', at);
      return view(next);
    });
  }

  /** Deletes a custom role that nobody holds (an active membership, a pending invitation, an unrevoked API token: 409). */
  async delete(rc: RequestContext, tenantId: string, name: string): Promise<void> {
    if (RESERVED.has(name)) throw ValidationFailed('A built-in role cannot be deleted', [{ path: '/name', message: `"${name}" is built in` }]);
    await this.db.transaction(rc, async (rc) => {
      if (!(await this.repository.find(rc, tenantId, name))) throw NotFound(`No role "${name.slice(0, 40)}"`);
      const at = nowIso();
      if (await this.repository.heldByToken(rc, tenantId, name, at)) throw Conflict(`The role "${name}" is held by an API token; revoke it first`);
      if (await this.holders?.holdsRole(rc, tenantId, name)) throw Conflict(`The role "${name}" is held by a membership or a pending invitation`);
      await this.repository.delete(rc, tenantId, name);
      await this.changed(rc, tenantId, name, 'role.deleted', at);
    });
  }

  /**
   * The tenant's roles of these names that exist (read at most ROLE_KNOWN_FOR_MS ago), in the names' order: what a
   * request of a caller holding custom roles acts with. Unknown names grant nothing.
   */
  async resolve(tenantId: string, names: readonly string[]): Promise<RoleRecord[]> {
    const out: RoleRecord[] = [];
    for (const name of names) {
      const role = await this.find(tenantId, name);
      if (role) out.push(role);
    }
    return out;
  }

  /**
   * `resolve`'s answer without a promise when every name was read less than ROLE_KNOWN_FOR_MS ago (most requests of a
   * caller holding custom roles); else undefined, and `resolve` reads what is missing.
   */
  resolveKept(tenantId: string, names: readonly string[]): RoleRecord[] | undefined {
    const now = Date.now();
    const out: RoleRecord[] = [];
    for (const name of names) {
      if (RESERVED.has(name)) continue;
      const kept = this.known.get(`${tenantId}/${name}`);
      if (!kept || kept.until <= now) return undefined;
      if (kept.role) out.push(kept.role);
    }
    return out;
  }

  private async find(tenantId: string, name: string): Promise<RoleRecord | null> {
    if (RESERVED.has(name)) return null;
    const key = `${tenantId}/${name}`;
    const now = Date.now();
    const kept = this.known.get(key);
    if (kept && kept.until > now) return kept.role;
    const generation = this.generation;
    const role = await this.repository.find(null, tenantId, name);
    if (generation === this.generation) {
      if (this.known.size >= MAX_KNOWN_ROLES) this.known.delete(this.known.keys().next().value!);
      this.known.set(key, { role, until: now + ROLE_KNOWN_FOR_MS });
    }
    return role;
  }

  /** The audit entry and the change feed's notice of a role change, in its transaction. */
  private async changed(rc: RequestContext, tenantId: string, name: string, action: string, at: string): Promise<void> {
    await this.audit.add(rc, { action, target: `role/${name}` }, at);
    await this.db.changes.notify(rc, ROLE_TOPIC, `${tenantId}/${name}`);
  }

  private forget(key: string | null): void {
    this.generation += 1;
    if (key === null) this.known.clear();
    else this.known.delete(key);
  }
}

