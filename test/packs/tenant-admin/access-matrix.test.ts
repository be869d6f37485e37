import { expect } from 'chai';
import { createTenant, uniqueTenantId } from '../../helpers/test-app.js';
import { as, superadmin } from '../../helpers/tokens.js';
import { tenantAdminApp, type TenantAdminTestApp } from './tenant-admin-app.js';

type Caller = 'superadmin' | 'own admin' | 'own editor' | 'own viewer' | 'other admin' | 'no token';
const CALLERS: Caller[] = ['superadmin', 'own admin', 'own editor', 'own viewer', 'other admin', 'no token'];

interface Endpoint {
  name: string;
  /** Who gets a 2xx; everyone else is refused (401 without a token, else 403). */
  allowed: Caller[];
  /** Sets up what the call needs (a fresh id, an invitation) before the state is read. */
  prepare?(): Promise<void> | void;
  call(headers: Record<string, string>): Promise<{ status: number; body: any }>;
  /** What a user would look at to see whether the call changed anything. */
  state?(): Promise<unknown>;
}

const SA: Caller[] = ['superadmin'];
const MEMBERS: Caller[] = ['superadmin', 'own admin', 'own editor', 'own viewer'];
const ADMINS: Caller[] = ['superadmin', 'own admin'];
const SIGNED_IN: Caller[] = ['superadmin', 'own admin', 'own editor', 'own viewer', 'other admin'];

describe('tenant-admin access matrix (superadmin, own admin, editor, viewer, other tenant admin, no token)', () => {
  let t: TenantAdminTestApp;
  let tenant: string;
  let other: string;
  const headers = (caller: Caller): Record<string, string> => ({
    superadmin: superadmin(),
    'own admin': as(tenant, 'admin'),
    'own editor': as(tenant, 'editor'),
    'own viewer': as(tenant, 'viewer'),
    'other admin': as(other, 'admin'),
    'no token': {},
  })[caller];

  before(async () => {
    t = await tenantAdminApp();
    tenant = await createTenant(t, 'matrix');
    other = await createTenant(t, 'matrix-other');
  });

  const read = (path: () => string) => async () => (await t.http.get(path()).set(superadmin())).body.data;
  let lastId = '';
  let invitationId = '';
  let inviteToken = '';

  const endpoints: Endpoint[] = [
    {
      name: 'POST /admin/tenants', allowed: SA,
      prepare: () => { lastId = uniqueTenantId('mx'); },
      call: (h) => t.http.post('/api/v1/admin/tenants').set(h).send({ id: lastId, name: 'M' }),
      state: async () => (await t.http.get(`/api/v1/admin/tenants/${lastId}`).set(superadmin())).status,
    },
    { name: 'GET /admin/tenants', allowed: SA, call: (h) => t.http.get('/api/v1/admin/tenants').set(h) },
    { name: 'GET /admin/tenants/:id', allowed: MEMBERS, call: (h) => t.http.get(`/api/v1/admin/tenants/${tenant}`).set(h) },
    {
      name: 'PATCH /admin/tenants/:id', allowed: SA,
      call: (h) => t.http.patch(`/api/v1/admin/tenants/${tenant}`).set(h).send({ name: `Renamed ${Date.now()}` }),
      state: read(() => `/api/v1/admin/tenants/${tenant}`),
    },
    {
      name: 'POST /admin/tenants/provision', allowed: SA,
      prepare: () => { lastId = uniqueTenantId('mx'); },
      call: (h) => t.http.post('/api/v1/admin/tenants/provision').set(h).send({ tenant: { id: lastId, name: 'P' } }),
      state: async () => (await t.http.get(`/api/v1/admin/tenants/${lastId}`).set(superadmin())).status,
    },
    { name: 'GET /tenants/:id/site-config', allowed: MEMBERS, call: (h) => t.http.get(`/api/v1/tenants/${tenant}/site-config`).set(h) },
    {
      name: 'PATCH /tenants/:id/site-config', allowed: ADMINS,
      call: (h) => t.http.patch(`/api/v1/tenants/${tenant}/site-config`).set(h).send({ siteName: `Site ${Date.now()}` }),
      state: read(() => `/api/v1/tenants/${tenant}/site-config`),
    },
    { name: 'GET /tenants/:id/branding', allowed: MEMBERS, call: (h) => t.http.get(`/api/v1/tenants/${tenant}/branding`).set(h) },
    {
      name: 'PATCH /tenants/:id/branding', allowed: ADMINS,
      call: (h) => t.http.patch(`/api/v1/tenants/${tenant}/branding`).set(h).send({ fonts: { body: `Font ${Date.now()}` } }),
      state: read(() => `/api/v1/tenants/${tenant}/branding`),
    },
    { name: 'GET /tenants/:id/domains', allowed: MEMBERS, call: (h) => t.http.get(`/api/v1/tenants/${tenant}/domains`).set(h) },
    {
      name: 'PUT /tenants/:id/domains', allowed: ADMINS,
      call: async (h) => {
        const current = (await t.http.get(`/api/v1/tenants/${tenant}/domains`).set(superadmin())).body.data.domains as string[];
        const next = current.length ? [] : [`${tenant}.localhost`];
        return t.http.put(`/api/v1/tenants/${tenant}/domains`).set(h).send({ domains: next });
      },
      state: read(() => `/api/v1/tenants/${tenant}/domains`),
    },
    { name: 'GET /tenants/:id/features', allowed: MEMBERS, call: (h) => t.http.get(`/api/v1/tenants/${tenant}/features`).set(h) },
    {
      name: 'PATCH /tenants/:id/features', allowed: SA,
      call: async (h) => {
        const current = (await t.http.get(`/api/v1/tenants/${tenant}/features`).set(superadmin())).body.data;
        return t.http.patch(`/api/v1/tenants/${tenant}/features`).set(h).send({ white_label: !current.white_label });
      },
      state: read(() => `/api/v1/tenants/${tenant}/features`),
    },
    { name: 'GET /tenants/:id/licensed-modules', allowed: MEMBERS, call: (h) => t.http.get(`/api/v1/tenants/${tenant}/licensed-modules`).set(h) },
    {
      name: 'PATCH /tenants/:id/licensed-modules', allowed: ADMINS,
      call: async (h) => {
        const erp = ((await t.http.get(`/api/v1/tenants/${tenant}/licensed-modules`).set(superadmin())).body.data as Array<{ appCode: string; isEnabled: boolean }>)
          .find((m) => m.appCode === 'erp')!;
        return t.http.patch(`/api/v1/tenants/${tenant}/licensed-modules`).set(h).send({ appCode: 'erp', isEnabled: !erp.isEnabled });
      },
      state: read(() => `/api/v1/tenants/${tenant}/licensed-modules`),
    },
    { name: 'GET /tenants/:id/members', allowed: ADMINS, call: (h) => t.http.get(`/api/v1/tenants/${tenant}/members`).set(h) },
    { name: 'GET /tenants/:id/invitations', allowed: ADMINS, call: (h) => t.http.get(`/api/v1/tenants/${tenant}/invitations`).set(h) },
    {
      name: 'POST /tenants/:id/invitations', allowed: ADMINS,
      call: (h) => t.http.post(`/api/v1/tenants/${tenant}/invitations`).set(h).send({ email: `${uniqueTenantId('m')}@example.test`, role: 'viewer' }),
      state: read(() => `/api/v1/tenants/${tenant}/invitations`),
    },
    {
      name: 'DELETE /tenants/:id/invitations/:invitationId', allowed: ADMINS,
      prepare: async () => {
        const created = await t.http.post(`/api/v1/tenants/${tenant}/invitations`).set(superadmin()).send({ email: `${uniqueTenantId('d')}@example.test`, role: 'viewer' });
        invitationId = created.body.data.id;
      },
      call: (h) => t.http.delete(`/api/v1/tenants/${tenant}/invitations/${invitationId}`).set(h),
      state: async () => ((await t.http.get(`/api/v1/tenants/${tenant}/invitations`).set(superadmin())).body.data as Array<{ id: string; status: string }>)
        .find((i) => i.id === invitationId)?.status,
    },
    {
      // None of these callers has the invited e-mail in its token: every one is refused.
      name: 'POST /invitations/:token/accept', allowed: [],
      prepare: async () => {
        const email = `${uniqueTenantId('a')}@example.test`;
        const before = t.smtp.messages.length;
        await t.http.post(`/api/v1/tenants/${tenant}/invitations`).set(superadmin()).send({ email, role: 'admin' }).expect(201);
        const mail = (await t.smtp.waitFor(before + 1)).find((m) => m.to.includes(email))!;
        inviteToken = /invitation=([A-Za-z0-9_-]{43})/.exec(mail.raw.replace(/=\r?\n/g, '').replace(/=3D/g, '='))![1];
      },
      call: (h) => t.http.post(`/api/v1/invitations/${inviteToken}/accept`).set(h),
      state: read(() => `/api/v1/tenants/${tenant}/members`),
    },
    { name: 'GET /platform/settings', allowed: SA, call: (h) => t.http.get('/api/v1/platform/settings').set(h) },
    {
      name: 'PATCH /platform/settings', allowed: SA,
      call: (h) => t.http.patch('/api/v1/platform/settings').set(h).send({ FRONTEND_URL: `https://app${Date.now()}.example.test` }),
      state: read(() => '/api/v1/platform/settings'),
    },
    {
      name: 'POST /platform/settings/smtp/test', allowed: SA,
      call: (h) => t.http.post('/api/v1/platform/settings/smtp/test').set(h).send({ to: 'matrix@example.test' }),
      state: async () => t.smtp.messages.filter((m) => m.to.includes('matrix@example.test')).length,
    },
    { name: 'GET /tenants/:id/api-tokens', allowed: ADMINS, call: (h) => t.http.get(`/api/v1/tenants/${tenant}/api-tokens`).set(h) },
    {
      name: 'POST /tenants/:id/api-tokens', allowed: ADMINS,
      call: (h) => t.http.post(`/api/v1/tenants/${tenant}/api-tokens`).set(h).send({ name: 'Matrix', role: 'viewer' }),
      state: async () => (await t.http.get(`/api/v1/tenants/${tenant}/api-tokens`).set(superadmin())).body.data.pagination.total,
    },
    {
      name: 'DELETE /tenants/:id/api-tokens/:tokenId', allowed: ADMINS,
      prepare: async () => {
        lastId = (await t.http.post(`/api/v1/tenants/${tenant}/api-tokens`).set(superadmin()).send({ name: 'Matrix revoke', role: 'viewer' })).body.data.id;
      },
      call: (h) => t.http.delete(`/api/v1/tenants/${tenant}/api-tokens/${lastId}`).set(h),
      state: async () => (await t.http.get(`/api/v1/tenants/${tenant}/api-tokens`).set(superadmin())).body.data.items.find((i: any) => i.id === lastId)?.revokedAt,
    },
    { name: 'GET /organizations', allowed: SIGNED_IN, call: (h) => t.http.get('/api/v1/organizations').set(h) },
    { name: 'GET /public/resolve-host', allowed: CALLERS, call: (h) => t.http.get(`/api/v1/public/resolve-host?host=${tenant}.localhost`).set(h) },
  ];

  for (const endpoint of endpoints) {
    describe(endpoint.name, () => {
      for (const caller of CALLERS) {
        const allowed = endpoint.allowed.includes(caller);
        it(`${caller}: ${allowed ? 'allowed' : caller === 'no token' ? '401 and nothing changes' : '403 and nothing changes'}`, async () => {
          await endpoint.prepare?.();
          const before = endpoint.state && !allowed ? await endpoint.state() : undefined;
          const res = await endpoint.call(headers(caller));
          if (allowed) {
            expect(res.status, JSON.stringify(res.body)).to.be.within(200, 299);
            return;
          }
          expect(res.status, JSON.stringify(res.body)).to.equal(caller === 'no token' ? 401 : 403);
          if (endpoint.state) {
            await new Promise((r) => setTimeout(r, 20));
            expect(await endpoint.state()).to.deep.equal(before);
          }
        });
      }
    });
  }
});
