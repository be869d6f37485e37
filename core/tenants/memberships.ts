import type { Principal, TenantRole } from '../base/request-context.js';

/** Finds the role a signed-in user holds in a tenant through its membership (CONTRACT.md section 13). */
export interface MembershipResolver {
  /** The role of the user's active membership in the tenant, matched by `sub` or by a verified e-mail; null without one. */
  roleOf(tenantId: string, principal: Principal): Promise<TenantRole | null>;
}

/**
 * The kernel's membership slot: the tenant-admin pack owns the member store and installs it with
 * `kernel.memberships.use(resolver)`; until then no token gains access through a membership.
 */
export class MembershipHolder implements MembershipResolver {
  private resolver: MembershipResolver | null = null;

  use(resolver: MembershipResolver): void {
    this.resolver = resolver;
  }

  async roleOf(tenantId: string, principal: Principal): Promise<TenantRole | null> {
    return this.resolver ? this.resolver.roleOf(tenantId, principal) : null;
  }
}
