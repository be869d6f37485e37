import type { RequestContext, TenantRole } from '../base/request-context.js';
import { ROLE_RANK } from '../base/request-context.js';

/** The built-in tenant roles, strongest first (CONTRACT.md section 2). */
export const BUILT_IN_ROLES: readonly TenantRole[] = ['admin', 'editor', 'viewer'];

/**
 * The roles of a tenant that may be given to a holder (an API token now; memberships and invitations once
 * custom roles exist, CONTRACT.md 16.1). The built-in catalogue knows `admin`, `editor` and `viewer`; the
 * custom roles of 16.1 come in as another catalogue that asks the tenant's role store for the other names.
 */
export interface RoleCatalogue {
  /** Whether `role` names a role the tenant has (never `superadmin`, which is the platform's). */
  exists(rc: RequestContext | null, tenantId: string, role: string): Promise<boolean>;
  /** The role names to list in a message about an unknown role. */
  describe(rc: RequestContext | null, tenantId: string): Promise<string[]>;
}

export function isBuiltInRole(role: string): role is TenantRole {
  return Object.hasOwn(ROLE_RANK, role);
}

/** The built-in roles only: what every tenant has. */
export const builtInRoles: RoleCatalogue = {
  async exists(_rc, _tenantId, role) {
    return isBuiltInRole(role);
  },
  async describe() {
    return [...BUILT_IN_ROLES];
  },
};
