import { expect } from 'chai';
import { createTenant, uniqueTenantId } from '../../helpers/test-app.js';
import { as, bearer, signToken, superadmin } from '../../helpers/tokens.js';
import { tenantAdminApp, type TenantAdminTestApp } from './tenant-admin-app.js';

describe('tenants', () => {
  let t: TenantAdminTestApp;

  before(async () => {
    t = await tenantAdminApp();
  });

  describe('POST /api/v1/admin/tenants', () => {
    it('creates a tenant with an id made from the name', async () => {
      const name = `Praxis Müller ${uniqueTenantId('')}`;
      const res = await t.http.post('/api/v1/admin/tenants').set(superadmin()).send({ name });
      expect(res.status).to.equal(201);
      expect(res.body.data).to.include({ name, plan: 'free', status: 'active' });
      expect(res.body.data.id).to.match(/^praxis-muller-/);
    });

    it('answers 409 conflict for an existing id and 400 for a bad one', async () => {
      const id = await createTenant(t);
      expect((await t.http.post('/api/v1/admin/tenants').set(superadmin()).send({ id, name: 'x' })).status).to.equal(409);
      const bad = await t.http.post('/api/v1/admin/tenants').set(superadmin()).send({ id: 'Bad_Id', name: 'x', plan: 'gold' });
      expect(bad.status).to.equal(400);
      expect(bad.body.error.details.map((d: { path: string }) => d.path)).to.have.members(['/id', '/plan']);
    });
  });

  describe('GET /api/v1/admin/tenants', () => {
    it('pages the tenants, newest first', async () => {
      const a = await createTenant(t, 'page');
      // Creation times have millisecond resolution: two tenants made within one millisecond have no order by age.
      await new Promise((r) => setTimeout(r, 5));
      const b = await createTenant(t, 'page');
      const res = await t.http.get('/api/v1/admin/tenants?limit=2&offset=0').set(superadmin());
      expect(res.status).to.equal(200);
      expect(res.body.data.items.map((i: { id: string }) => i.id)).to.deep.equal([b, a]);
      expect(res.body.data.pagination).to.include({ limit: 2, offset: 0, hasMore: true, nextCursor: null });
      expect(res.body.data.pagination.total).to.be.at.least(2);
      const next = await t.http.get('/api/v1/admin/tenants?limit=2&offset=1').set(superadmin());
      expect(next.body.data.items[0].id).to.equal(a);
    });

    it('answers 400 for a limit over 200', async () => {
      expect((await t.http.get('/api/v1/admin/tenants?limit=500').set(superadmin())).status).to.equal(400);
    });
  });

  describe('PATCH /api/v1/admin/tenants/:id', () => {
    it('changes name and plan', async () => {
      const id = await createTenant(t);
      const res = await t.http.patch(`/api/v1/admin/tenants/${id}`).set(superadmin()).send({ name: 'Renamed', plan: 'enterprise' });
      expect(res.status).to.equal(200);
      expect(res.body.data).to.include({ id, name: 'Renamed', plan: 'enterprise', status: 'active' });
      expect((await t.http.get(`/api/v1/tenants/${id}/features`).set(as(id, 'viewer'))).body.data.custom_domain).to.equal(true);
    });

    it('suspends a tenant: its members get 403 and its public host 404 tenant_not_found', async () => {
      const id = await createTenant(t, 'susp');
      const res = await t.http.patch(`/api/v1/admin/tenants/${id}`).set(superadmin()).send({ status: 'suspended' });
      expect(res.body.data.status).to.equal('suspended');
      expect((await t.http.get(`/api/v1/tenants/${id}/site-config`).set(as(id, 'admin'))).status).to.equal(403);
      const host = await t.http.get(`/api/v1/public/resolve-host?host=${id}.localhost`);
      expect(host.status).to.equal(404);
      expect(host.body.error.code).to.equal('tenant_not_found');
      expect((await t.http.get(`/api/v1/tenants/${id}/site-config`).set(superadmin())).status).to.equal(200);
      await t.http.patch(`/api/v1/admin/tenants/${id}`).set(superadmin()).send({ status: 'active' }).expect(200);
      expect((await t.http.get(`/api/v1/tenants/${id}/site-config`).set(as(id, 'admin'))).status).to.equal(200);
    });

    it('answers 400 for an unknown status or an empty body, 404 for an unknown tenant', async () => {
      const id = await createTenant(t);
      expect((await t.http.patch(`/api/v1/admin/tenants/${id}`).set(superadmin()).send({ status: 'deleted' })).status).to.equal(400);
      expect((await t.http.patch(`/api/v1/admin/tenants/${id}`).set(superadmin()).send({})).status).to.equal(400);
      const missing = await t.http.patch('/api/v1/admin/tenants/no-such-tenant').set(superadmin()).send({ name: 'x' });
      expect(missing.status).to.equal(404);
      expect(missing.body.error.code).to.equal('tenant_not_found');
    });
  });

  describe('GET /api/v1/admin/tenants/:id', () => {
    it('shows the tenant to its own members and 404 for an unknown one', async () => {
      const id = await createTenant(t);
      const res = await t.http.get(`/api/v1/admin/tenants/${id}`).set(as(id, 'viewer'));
      expect(res.status).to.equal(200);
      expect(res.body.data.id).to.equal(id);
      expect((await t.http.get('/api/v1/admin/tenants/unknown-tenant-x').set(superadmin())).status).to.equal(404);
    });
  });

  describe('GET /api/v1/organizations', () => {
    it("lists the token's tenant for a member and every tenant for a superadmin", async () => {
      const id = await createTenant(t, 'org');
      const mine = await t.http.get('/api/v1/organizations').set(as(id, 'viewer'));
      expect(mine.status).to.equal(200);
      expect(mine.body.data).to.deep.equal([{ id, name: `Tenant ${id}`, tenantId: id }]);
      const all = await t.http.get('/api/v1/organizations').set(superadmin());
      expect(all.body.data.map((o: { id: string }) => o.id)).to.include(id);
    });

    it('lists nothing for a user without tenant or membership, 401 without a token', async () => {
      const res = await t.http.get('/api/v1/organizations').set(bearer(signToken({ sub: 'lonely', email: 'lonely@example.test' })));
      expect(res.status).to.equal(200);
      expect(res.body.data).to.deep.equal([]);
      const anonymous = await t.http.get('/api/v1/organizations');
      expect(anonymous.status).to.equal(401);
      expect(anonymous.headers['www-authenticate']).to.match(/^Bearer/);
    });
  });
});
