/**
 * The signed-in session: the bearer token and the tenant acted on. Kept in sessionStorage (one tab,
 * gone when it closes), never in a cookie, so the API never reads credentials the browser sends by itself.
 */
export interface Me {
  userId: string;
  email: string | null;
  name: string | null;
  tenantId: string | null;
  isSuperadmin: boolean;
  role: 'admin' | 'editor' | 'viewer';
  roles: string[];
}

const TOKEN = 'console.token';
const TENANT = 'console.tenant';
const ME = 'console.me';

type Listener = () => void;
const listeners = new Set<Listener>();

export const session = {
  get token(): string | null { return sessionStorage.getItem(TOKEN); },
  get tenant(): string | null { return sessionStorage.getItem(TENANT); },
  get me(): Me | null {
    const raw = sessionStorage.getItem(ME);
    return raw ? (JSON.parse(raw) as Me) : null;
  },
  signIn(token: string, me: Me): void {
    sessionStorage.setItem(TOKEN, token);
    sessionStorage.setItem(ME, JSON.stringify(me));
    if (me.tenantId && !me.isSuperadmin) sessionStorage.setItem(TENANT, me.tenantId);
    else if (me.tenantId && !session.tenant) sessionStorage.setItem(TENANT, me.tenantId);
    notify();
  },
  signOut(): void {
    sessionStorage.removeItem(TOKEN);
    sessionStorage.removeItem(ME);
    sessionStorage.removeItem(TENANT);
    notify();
  },
  setTenant(tenant: string | null): void {
    if (tenant) sessionStorage.setItem(TENANT, tenant);
    else sessionStorage.removeItem(TENANT);
    notify();
  },
  /** May the caller do what needs `role` on the current tenant? Superadmins may do everything. */
  can(role: 'viewer' | 'editor' | 'admin'): boolean {
    const me = session.me;
    if (!me) return false;
    if (me.isSuperadmin) return true;
    const rank = { viewer: 1, editor: 2, admin: 3 };
    return rank[me.role] >= rank[role];
  },
  subscribe(listener: Listener): () => void {
    listeners.add(listener);
    return () => listeners.delete(listener);
  },
};

function notify(): void {
  for (const listener of listeners) listener();
}
