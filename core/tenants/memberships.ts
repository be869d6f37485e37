import type { Principal, RequestContext } from '../base/request-context.js';

/** Finds the role a signed-in user holds in a tenant through its membership (CONTRACT.md section 13). */
export interface MembershipResolver {
  /** The role of the user's active membership in the tenant, matched by `sub` or by a verified e-mail; null without one. */
  roleOf(tenantId: string, principal: Principal): Promise<string | null>;
  /** Whether an active membership or a pending invitation of the tenant holds the role (a custom role's deletion: 409). */
  holdsRole?(rc: RequestContext, tenantId: string, role: string): Promise<boolean>;
}

/** Whether a role name is one the tenant has (built-in or custom, CONTRACT.md 16.1): what memberships and invitations may hold. */
export interface TenantRoleNames {
  exists(rc: null, tenantId: string, role: string): Promise<boolean>;
  describe(rc: null, tenantId: string): Promise<string[]>;
}

/**
 * The kernel's membership slot: the tenant-admin pack owns the member store and installs it with
 * `kernel.memberships.use(resolver)`; until then no token gains access through a membership.
 */
export class MembershipHolder implements MembershipResolver {
  private resolver: MembershipResolver | null = null;
  private names: TenantRoleNames | null = null;

  use(resolver: MembershipResolver): void {
    this.resolver = resolver;
  }

  /** Set by the composition root: the tenant's role names, for the member store's checks of a role. */
  useRoleNames(names: TenantRoleNames): void {
    this.names = names;
  }

  /** The tenant's role names (built-in and custom); the built-in ones until the composition root sets them. */
  get roles(): TenantRoleNames {
    return this.names ?? { exists: async (_rc, _t, role) => ['admin', 'editor', 'viewer'].includes(role), describe: async () => ['admin', 'editor', 'viewer'] };
  }

  async roleOf(tenantId: string, principal: Principal): Promise<string | null> {
    return this.resolver ? this.resolver.roleOf(tenantId, principal) : null;
  }

  async holdsRole(rc: RequestContext, tenantId: string, role: string): Promise<boolean> {
    return (await this.resolver?.holdsRole?.(rc, tenantId, role)) ?? false;
  }
}
