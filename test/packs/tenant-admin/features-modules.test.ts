import { expect } from 'chai';
import { createTenant } from '../../helpers/test-app.js';
import { as, superadmin } from '../../helpers/tokens.js';
import { tenantAdminApp, type TenantAdminTestApp } from './tenant-admin-app.js';

describe('features and licensed modules', () => {
  let t: TenantAdminTestApp;

  before(async () => {
    t = await tenantAdminApp();
  });

  describe('GET /api/v1/tenants/:id/features', () => {
    it('answers the defaults of the plan', async () => {
      const free = await createTenant(t, 'f', 'free');
      const pro = await createTenant(t, 'p', 'pro');
      const enterprise = await createTenant(t, 'e', 'enterprise');
      expect((await t.http.get(`/api/v1/tenants/${free}/features`).set(as(free, 'viewer'))).body.data)
        .to.deep.equal({ custom_domain: false, white_label: false, ai_assistant: false, priority_support: false });
      expect((await t.http.get(`/api/v1/tenants/${pro}/features`).set(as(pro, 'viewer'))).body.data).to.include({ custom_domain: true, white_label: false });
      expect((await t.http.get(`/api/v1/tenants/${enterprise}/features`).set(as(enterprise, 'viewer'))).body.data).to.include({ custom_domain: true, white_label: true });
    });
  });

  describe('PATCH /api/v1/tenants/:id/features', () => {
    it('applies a partial map of booleans over the plan', async () => {
      const tenant = await createTenant(t, 'f');
      const res = await t.http.patch(`/api/v1/tenants/${tenant}/features`).set(superadmin()).send({ custom_domain: true });
      expect(res.status).to.equal(200);
      expect(res.body.data).to.deep.equal({ custom_domain: true, white_label: false, ai_assistant: false, priority_support: false });
      const off = await t.http.patch(`/api/v1/tenants/${tenant}/features`).set(superadmin()).send({ custom_domain: false, ai_assistant: true });
      expect(off.body.data).to.include({ custom_domain: false, ai_assistant: true });
    });

    it('answers 400 for an unknown flag or a non-boolean value', async () => {
      const tenant = await createTenant(t, 'f');
      const res = await t.http.patch(`/api/v1/tenants/${tenant}/features`).set(superadmin()).send({ teleport: true, custom_domain: 'yes' });
      expect(res.status).to.equal(400);
      expect(res.body.error.details.map((d: { path: string }) => d.path)).to.include.members(['/teleport', '/custom_domain']);
    });

    it("answers 403 superadmin_required for the tenant's own admin", async () => {
      const tenant = await createTenant(t, 'f');
      const res = await t.http.patch(`/api/v1/tenants/${tenant}/features`).set(as(tenant, 'admin')).send({ custom_domain: true });
      expect(res.status).to.equal(403);
      expect(res.body.error.code).to.equal('superadmin_required');
      expect((await t.http.get(`/api/v1/tenants/${tenant}/features`).set(as(tenant, 'viewer'))).body.data.custom_domain).to.equal(false);
    });
  });

  describe('GET /api/v1/tenants/:id/licensed-modules', () => {
    it('lists cms, crm and erp, all enabled for a new tenant', async () => {
      const tenant = await createTenant(t, 'm');
      const res = await t.http.get(`/api/v1/tenants/${tenant}/licensed-modules`).set(as(tenant, 'viewer'));
      expect(res.status).to.equal(200);
      expect(res.body.data.map((m: { appCode: string; isEnabled: boolean }) => [m.appCode, m.isEnabled])).to.deep.equal([['cms', true], ['crm', true], ['erp', true]]);
      expect(res.body.data[0].updatedAt).to.be.a('string');
    });
  });

  describe('PATCH /api/v1/tenants/:id/licensed-modules', () => {
    it('disables a module at once (403 module_disabled on its /data namespace), emits tenant.modules.updated, and enables it again', async () => {
      const tenant = await createTenant(t, 'm');
      expect((await t.http.get('/api/v1/data/cms/page').set(as(tenant, 'viewer'))).status).to.equal(200);
      const res = await t.http.patch(`/api/v1/tenants/${tenant}/licensed-modules`).set(as(tenant, 'admin')).send({ appCode: 'cms', isEnabled: false });
      expect(res.status).to.equal(200);
      expect(res.body.data).to.include({ appCode: 'cms', isEnabled: false });
      const gated = await t.http.get('/api/v1/data/cms/page').set(as(tenant, 'viewer'));
      expect(gated.status).to.equal(403);
      expect(gated.body.data.code).to.equal('module_disabled');
      const events = await t.app.kernel.db.knex('outbox_events').where({ tenant_id: tenant, name: 'tenant.modules.updated' });
      expect(events).to.have.length(1);
      expect(t.app.kernel.db.dialect.fromJson(events[0].payload)).to.deep.equal({ tenantId: tenant, appCode: 'cms', isEnabled: false });
      await t.http.patch(`/api/v1/tenants/${tenant}/licensed-modules`).set(superadmin()).send({ appCode: 'cms', isEnabled: true }).expect(200);
      expect((await t.http.get('/api/v1/data/cms/page').set(as(tenant, 'viewer'))).status).to.equal(200);
    });

    it('answers 400 for an unknown appCode', async () => {
      const tenant = await createTenant(t, 'm');
      const res = await t.http.patch(`/api/v1/tenants/${tenant}/licensed-modules`).set(as(tenant, 'admin')).send({ appCode: 'hr', isEnabled: false });
      expect(res.status).to.equal(400);
      expect(res.body.error.details[0].path).to.equal('/appCode');
    });

    it("answers 403 for another tenant's admin (IDOR) and leaves the module enabled", async () => {
      const tenant = await createTenant(t, 'm');
      const other = await createTenant(t, 'o');
      const res = await t.http.patch(`/api/v1/tenants/${tenant}/licensed-modules`).set(as(other, 'admin')).send({ appCode: 'cms', isEnabled: false });
      expect(res.status).to.equal(403);
      const modules = await t.http.get(`/api/v1/tenants/${tenant}/licensed-modules`).set(as(tenant, 'viewer'));
      expect(modules.body.data[0]).to.include({ appCode: 'cms', isEnabled: true });
    });
  });
});
