import { expect } from 'chai';
import { systemContext } from '../../../core/base/request-context.js';
import { createTenant, sharedTestApp, type TestApp } from '../../helpers/test-app.js';
import { as, superadmin } from '../../helpers/tokens.js';

describe('publishing inside a transaction', () => {
  let t: TestApp;
  let tenant: string;

  before(async () => {
    t = await sharedTestApp();
  });

  beforeEach(async () => {
    tenant = await createTenant(t, 'pub');
  });

  const search = async (q: string) => (await t.http.get(`/api/v1/public/tenant/${tenant}/knowledge`).query({ q })).body.data.items;

  it('makes pages published in one transaction searchable as soon as it commits (provisioning)', async () => {
    const { db, records } = t.app.kernel;
    await db.transaction(systemContext(tenant), async (rc) => {
      await records.create(rc, 'cms', 'page', { title: 'Welcome', content: 'Our clinic opens at eight.', status: 'published' });
      await records.create(rc, 'cms', 'page', { title: 'Team', content: 'Doctors and nurses of the clinic.', status: 'published' });
    });
    expect((await search('clinic')).map((i: any) => i.title).sort()).to.deep.equal(['Team', 'Welcome']);
  });

  it('makes a tenant provisioned with the Healthcare seed searchable at once (POST /admin/tenants/provision)', async () => {
    const id = `${tenant}-clinic`;
    const res = await t.http.post('/api/v1/admin/tenants/provision').set(superadmin())
      .send({ tenant: { id, name: 'Search Clinic', plan: 'pro' }, seed: { healthcare: true } });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    const hits = (await t.http.get(`/api/v1/public/tenant/${id}/knowledge`).query({ q: 'malaria' })).body.data.items;
    expect(hits.map((h: any) => h.url)).to.deep.equal(['/service/vaccinations-travel-medicine']);
    const pages = await t.http.get(`/api/v1/public/tenant/${id}/content/service`).query({ slug: 'physiotherapy' });
    expect(pages.body.data.items).to.have.length(1);
  });

  it('leaves no knowledge entry when the transaction rolls back', async () => {
    const { db, records } = t.app.kernel;
    let failed = false;
    try {
      await db.transaction(systemContext(tenant), async (rc) => {
        await records.create(rc, 'cms', 'page', { title: 'Doomed', content: 'Ephemeral platypus text.', status: 'published' });
        throw new Error('abort provisioning');
      });
    } catch {
      failed = true;
    }
    expect(failed).to.equal(true);
    expect(await search('platypus')).to.have.length(0);
    const pages = await t.http.get('/api/v1/cms/pages').set(as(tenant, 'viewer'));
    expect(pages.body.data.pagination.total).to.equal(0);
  });

  it('answers 404 tenant_not_found on the public runtime for a suspended tenant', async () => {
    await t.http.post(`/api/v1/tenant/${tenant}/content/page`).set(as(tenant, 'editor')).send({ title: 'Open', status: 'published' });
    expect((await t.http.get(`/api/v1/public/tenant/${tenant}/content/page`)).status).to.equal(200);
    await t.app.kernel.tenants.update(systemContext(null), tenant, { status: 'suspended' });
    for (const res of [
      await t.http.get(`/api/v1/public/tenant/${tenant}/content/page`),
      await t.http.get(`/api/v1/public/tenant/${tenant}/knowledge`).query({ q: 'open' }),
      await t.http.post(`/api/v1/public/tenant/${tenant}/forms/contact/submit`).send({}),
    ]) {
      expect(res.status).to.equal(404);
      expect(res.body.error.code).to.equal('tenant_not_found');
    }
  });

  it('answers 403 module_disabled on cms endpoints when the cms module is off', async () => {
    await t.app.kernel.tenants.setModule(systemContext(null), tenant, 'cms', false);
    const res = await t.http.get('/api/v1/cms/pages').set(as(tenant, 'admin'));
    expect(res.status).to.equal(403);
    expect(res.body.error.code).to.equal('module_disabled');
    const content = await t.http.get(`/api/v1/tenant/${tenant}/content/page`).set(as(tenant, 'admin'));
    expect(content.body.error.code).to.equal('module_disabled');
  });
});
