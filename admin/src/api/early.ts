import { FIRST_PAGE } from '../records/list-defaults.js';
import { session } from './session.js';

/**
 * GET requests started before the console's code has loaded, each taken once by the first call() of the
 * same path with the same token and tenant (client.ts). Depends on nothing but the session, so that the
 * entry stays tiny.
 */
const early = new Map<string, Promise<Response>>();
const keyOf = (path: string, token: string | null, tenant: string | null) => JSON.stringify([path, token, tenant]);

function prefetch(path: string): void {
  const { token, tenant } = session;
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (token) headers.Authorization = `Bearer ${token}`;
  if (tenant) headers['X-Tenant-Id'] = tenant;
  const response = fetch(`/api/v1${path}`, { headers, credentials: 'omit' });
  response.catch(() => undefined);
  early.set(keyOf(path, token, tenant), response);
  // Not taken soon (another screen came first): forget it.
  setTimeout(() => early.delete(keyOf(path, token, tenant)), 15_000);
}

/** The response of a GET started early for this path, token and tenant, if any (once). */
export function takeEarly(path: string, token: string | null, tenant: string | null): Promise<Response> | undefined {
  const key = keyOf(path, token, tenant);
  const response = early.get(key);
  early.delete(key);
  return response;
}

/**
 * Signed in with a tenant: the schemas (menu and screens), and on a records table opened without
 * parameters (/admin/ns.name) its first page as the table will ask for it.
 */
export function prefetchFirstScreen(): void {
  if (!session.token || !session.tenant) return;
  prefetch('/metadata/schemas');
  const table = /^\/admin\/([a-z][a-z0-9_]*)\.([a-z][a-z0-9_]*)\/?$/.exec(window.location.pathname);
  if (table && !window.location.search) prefetch(`/data/${table[1]}/${table[2]}?${FIRST_PAGE.query}`);
}
