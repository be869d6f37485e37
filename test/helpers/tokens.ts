import jwt from 'jsonwebtoken';

export const TEST_KEY = 'test-key-0123456789abcdef';
export const TEST_JWT_SECRET = 'test-jwt-secret-0123456789abcdef';

export interface TokenOptions {
  tenantId?: string | null;
  role?: 'admin' | 'editor' | 'viewer' | 'superadmin';
  roles?: string[];
  sub?: string;
  email?: string;
  expiresIn?: number;
  secret?: string;
  claims?: Record<string, unknown>;
}

/** A real HS256 JWT signed with the test secret. */
export function signToken(options: TokenOptions = {}): string {
  const roles = options.roles ?? (options.role ? [options.role] : []);
  const payload: Record<string, unknown> = {
    sub: options.sub ?? `user-${options.role ?? 'viewer'}-${options.tenantId ?? 'none'}`,
    roles,
    ...(options.email ? { email: options.email } : {}),
    ...(options.tenantId ? { tenant_id: options.tenantId } : {}),
    ...options.claims,
  };
  return jwt.sign(payload, options.secret ?? TEST_JWT_SECRET, { algorithm: 'HS256', expiresIn: options.expiresIn ?? 3600 });
}

export function bearer(token: string): { Authorization: string } {
  return { Authorization: `Bearer ${token}` };
}

/** Headers for a role of a tenant: `as(tenant, 'editor')`. */
export function as(tenantId: string, role: 'admin' | 'editor' | 'viewer' = 'admin', extra: Partial<TokenOptions> = {}) {
  return bearer(signToken({ tenantId, role, ...extra }));
}

/** Headers for the test key acting for a tenant (a superadmin naming the tenant with X-Tenant-Id). */
export function superadmin(tenantId?: string): Record<string, string> {
  return { Authorization: `Bearer ${TEST_KEY}`, ...(tenantId ? { 'X-Tenant-Id': tenantId } : {}) };
}
