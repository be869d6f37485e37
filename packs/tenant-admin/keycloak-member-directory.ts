import { type Config, type RequestContext, ROLE_RANK, type TenantRole, UpstreamFailed } from '../../core/pack-api.js';
import type { LocalMemberDirectory, Member, MemberDirectory } from './member-directory.js';

const TIMEOUT_MS = 10_000;
const PAGE_SIZE = 500;

interface KeycloakUser {
  id: string;
  username?: string;
  email?: string;
  firstName?: string;
  lastName?: string;
  enabled?: boolean;
  attributes?: Record<string, string[]>;
}

/**
 * Members from Keycloak's admin REST API. A user belongs to a tenant when its user attribute `tenant_id`
 * holds the tenant id (the same attribute the token's tenant claim is mapped from); its role is the
 * attribute `tenant_role` (admin, editor, viewer; default viewer). The service account logs in with the
 * client-credentials grant and needs the realm-management role `view-users`. Local members (accepted
 * invitations) whose e-mail Keycloak does not list are added with `source: "local"`.
 */
export class KeycloakMemberDirectory implements MemberDirectory {
  readonly kind = 'keycloak' as const;
  private token: { value: string; expiresAt: number } | null = null;

  constructor(private readonly keycloak: Config['keycloak'], private readonly local: LocalMemberDirectory) {}

  async list(rc: RequestContext | null, tenantId: string): Promise<Member[]> {
    const users = await this.usersOf(tenantId);
    const idp: Member[] = users.map((u) => ({
      id: u.id,
      email: (u.email ?? u.username ?? '').toLowerCase(),
      name: [u.firstName, u.lastName].filter(Boolean).join(' ') || null,
      role: roleOf(u.attributes?.tenant_role?.[0]),
      status: u.enabled === false ? 'disabled' : 'active',
      source: 'idp',
    }));
    const known = new Set(idp.map((m) => m.email));
    const local = (await this.local.list(rc, tenantId)).filter((m) => !known.has(m.email));
    return [...idp, ...local].sort((a, b) => a.email.localeCompare(b.email));
  }

  private async usersOf(tenantId: string): Promise<KeycloakUser[]> {
    const { baseUrl, realm } = this.keycloak;
    const url = new URL(`${baseUrl!.replace(/\/+$/, '')}/admin/realms/${encodeURIComponent(realm!)}/users`);
    url.searchParams.set('q', `tenant_id:${tenantId}`);
    url.searchParams.set('briefRepresentation', 'false');
    url.searchParams.set('first', '0');
    url.searchParams.set('max', String(PAGE_SIZE));
    let res = await this.get(url);
    if (res.status === 401) {
      this.token = null;
      res = await this.get(url);
    }
    if (!res.ok) throw UpstreamFailed(`The identity provider answered ${res.status} listing users`);
    const users = (await res.json()) as KeycloakUser[];
    if (!Array.isArray(users)) throw UpstreamFailed('The identity provider answered with an unexpected user list');
    // `q` matches the attribute; check it again in case the server matched loosely.
    return users.filter((u) => u && typeof u.id === 'string' && (u.attributes?.tenant_id ?? []).includes(tenantId));
  }

  private async get(url: URL): Promise<Response> {
    const token = await this.accessToken();
    try {
      return await fetch(url, { headers: { Authorization: `Bearer ${token}`, Accept: 'application/json' }, signal: AbortSignal.timeout(TIMEOUT_MS) });
    } catch (err) {
      throw UpstreamFailed(`The identity provider did not answer (${(err as Error).name})`);
    }
  }

  private async accessToken(): Promise<string> {
    if (this.token && this.token.expiresAt > Date.now()) return this.token.value;
    const { baseUrl, realm, clientId, clientSecret } = this.keycloak;
    const url = `${baseUrl!.replace(/\/+$/, '')}/realms/${encodeURIComponent(realm!)}/protocol/openid-connect/token`;
    let res: Response;
    try {
      res = await fetch(url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' },
        body: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId!, client_secret: clientSecret! }).toString(),
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
    } catch (err) {
      throw UpstreamFailed(`The identity provider did not answer (${(err as Error).name})`);
    }
    if (!res.ok) throw UpstreamFailed(`The identity provider refused the service account (${res.status})`);
    const body = (await res.json()) as { access_token?: string; expires_in?: number };
    if (!body.access_token) throw UpstreamFailed('The identity provider returned no access token');
    this.token = { value: body.access_token, expiresAt: Date.now() + Math.max(0, (body.expires_in ?? 60) - 30) * 1000 };
    return this.token.value;
  }
}

function roleOf(value: string | undefined): TenantRole {
  return value && value in ROLE_RANK ? (value as TenantRole) : 'viewer';
}
