import { expect } from 'chai';
import { startReceiver, type HttpReceiver } from '../../helpers/http-receiver.js';
import { createTenant } from '../../helpers/test-app.js';
import { as } from '../../helpers/tokens.js';
import { startTenantAdminApp, type TenantAdminTestApp } from './tenant-admin-app.js';

describe('GET /api/v1/tenants/:id/members with the Keycloak directory', () => {
  let t: TenantAdminTestApp;
  let keycloak: HttpReceiver;
  let tokenRequests = 0;
  let failUsers = false;

  before(async () => {
    keycloak = await startReceiver();
    // A loopback server speaking the part of Keycloak's API the directory uses.
    keycloak.responder = (req, res) => {
      const url = new URL(req.path, 'http://kc');
      if (req.method === 'POST' && url.pathname === '/realms/clinics/protocol/openid-connect/token') {
        const form = new URLSearchParams(req.body);
        if (form.get('grant_type') !== 'client_credentials' || form.get('client_id') !== 'platform' || form.get('client_secret') !== 'kc-secret') {
          res.writeHead(401, { 'Content-Type': 'application/json' });
          res.end('{"error":"unauthorized_client"}');
          return;
        }
        tokenRequests += 1;
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ access_token: 'kc-access-token', expires_in: 300, token_type: 'Bearer' }));
        return;
      }
      if (req.method === 'GET' && url.pathname === '/admin/realms/clinics/users') {
        if (req.headers.authorization !== 'Bearer kc-access-token') {
          res.writeHead(401);
          res.end();
          return;
        }
        if (failUsers) {
          res.writeHead(503);
          res.end();
          return;
        }
        const [, tenantId] = (url.searchParams.get('q') ?? '').split(':');
        const users = [
          { id: 'kc-1', username: 'anna', email: 'Anna@Clinic.example', firstName: 'Anna', lastName: 'Keller', enabled: true, attributes: { tenant_id: [tenantId], tenant_role: ['admin'] } },
          { id: 'kc-2', username: 'ben', email: 'ben@clinic.example', enabled: false, attributes: { tenant_id: [tenantId] } },
          { id: 'kc-3', username: 'eve', email: 'eve@elsewhere.example', enabled: true, attributes: { tenant_id: ['another-tenant'] } },
        ];
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify(users));
        return;
      }
      res.writeHead(404);
      res.end();
    };
    t = await startTenantAdminApp({
      env: { KEYCLOAK_BASE_URL: keycloak.url, KEYCLOAK_REALM: 'clinics', KEYCLOAK_CLIENT_ID: 'platform', KEYCLOAK_CLIENT_SECRET: 'kc-secret' },
    });
  });

  after(async () => {
    await t.close();
    await keycloak.stop();
  });

  it("lists the identity provider's users of the tenant with their role, marked source idp", async () => {
    const tenant = await createTenant(t, 'kc');
    const res = await t.http.get(`/api/v1/tenants/${tenant}/members`).set(as(tenant, 'admin'));
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.data).to.deep.equal([
      { id: 'kc-1', email: 'anna@clinic.example', name: 'Anna Keller', role: 'admin', status: 'active', source: 'idp' },
      { id: 'kc-2', email: 'ben@clinic.example', name: null, role: 'viewer', status: 'disabled', source: 'idp' },
    ]);
    const users = keycloak.requests.filter((r) => r.path.startsWith('/admin/realms/clinics/users'));
    expect(new URL(users[0].path, 'http://kc').searchParams.get('q')).to.equal(`tenant_id:${tenant}`);
    // The service-account token is reused while it is valid.
    await t.http.get(`/api/v1/tenants/${tenant}/members`).set(as(tenant, 'admin')).expect(200);
    expect(tokenRequests).to.equal(1);
  });

  it('answers 409 already_member when inviting a user the identity provider lists', async () => {
    const tenant = await createTenant(t, 'kc');
    const res = await t.http.post(`/api/v1/tenants/${tenant}/invitations`).set(as(tenant, 'admin')).send({ email: 'anna@clinic.example', role: 'viewer' });
    expect(res.status).to.equal(409);
    expect(res.body.error.code).to.equal('already_member');
  });

  it('answers 502 upstream_failed when the identity provider fails', async () => {
    const tenant = await createTenant(t, 'kc');
    failUsers = true;
    try {
      const res = await t.http.get(`/api/v1/tenants/${tenant}/members`).set(as(tenant, 'admin'));
      expect(res.status).to.equal(502);
      expect(res.body.error.code).to.equal('upstream_failed');
    } finally {
      failUsers = false;
    }
  });
});
