import { expect } from 'chai';
import { createTenant, uniqueTenantId } from '../../helpers/test-app.js';
import { as, superadmin } from '../../helpers/tokens.js';
import { tenantAdminApp, type TenantAdminTestApp } from './tenant-admin-app.js';

describe('POST /api/v1/admin/tenants/provision', () => {
  let t: TenantAdminTestApp;

  before(async () => {
    t = await tenantAdminApp();
  });

  async function eventsOf(tenantId: string): Promise<string[]> {
    const rows = await t.app.kernel.db.knex('outbox_events').where({ tenant_id: tenantId }).select('name');
    return rows.map((r: { name: string }) => r.name);
  }

  it('provisions a clinic with domains, navigation, branding and the Healthcare seed', async () => {
    const id = uniqueTenantId('clinic');
    const res = await t.http.post('/api/v1/admin/tenants/provision').set(superadmin()).send({
      tenant: { id, name: 'Lindenhof Clinic', plan: 'pro' },
      domains: ['WWW.Lindenhof-Clinic.example', `${id}.localhost`],
      branding: { colors: { primary: '#112233' } },
      seed: { healthcare: true },
      invitations: [{ email: `owner@${id}.example`, role: 'admin' }],
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    const data = res.body.data;
    expect(data.tenant).to.include({ id, name: 'Lindenhof Clinic', plan: 'pro', status: 'active' });
    expect(data.domains).to.have.members(['www.lindenhof-clinic.example', `${id}.localhost`]);
    expect(data.navigation.map((n: { label: string }) => n.label)).to.deep.equal(['Home', 'Services', 'Team', 'Contact']);
    expect(data.branding.colors.primary).to.equal('#112233');
    expect(data.branding.fonts.heading).to.be.a('string');
    expect(data.seeded).to.deep.equal({ page: 4, service: 5, practitioner: 4, form: 1 });

    const pages = await t.http.get('/api/v1/data/cms/page?sort=slug').set(as(id, 'viewer'));
    expect(pages.status).to.equal(200);
    const items = pages.body.data.items as Array<{ slug: string; status: string; content: string; title: string }>;
    expect(items.map((p) => p.slug)).to.deep.equal(['contact', 'home', 'services', 'team']);
    expect(items.every((p) => p.status === 'published')).to.equal(true);
    expect(items.find((p) => p.slug === 'home')!.content).to.contain('Lindenhof Clinic');
    const practitioners = await t.http.get('/api/v1/data/cms/practitioner').set(as(id, 'viewer'));
    expect(practitioners.body.data.items).to.have.length(4);
    const forms = await t.http.get('/api/v1/data/cms/form').set(as(id, 'viewer'));
    expect(forms.body.data.items[0]).to.include({ slug: 'contact', status: 'published' });
    expect(forms.body.data.items[0].fields.map((f: { name: string }) => f.name)).to.include.members(['name', 'email', 'message']);

    const host = await t.http.get('/api/v1/public/resolve-host?host=www.lindenhof-clinic.example:443');
    expect(host.status).to.equal(200);
    expect(host.body.data.tenantId).to.equal(id);
    expect(host.body.data.siteConfig.siteName).to.equal('Lindenhof Clinic');
    expect(await eventsOf(id)).to.include.members(['tenant.provisioned', 'tenant.member.invited', 'cms.page.created']);
    expect(data.invitations).to.have.length(1);
    expect(data.invitations[0]).to.include({ email: `owner@${id}.example`, role: 'admin', status: 'pending' });
    const deadline = Date.now() + 10_000;
    while (!t.smtp.messages.some((m) => m.to.includes(`owner@${id}.example`))) {
      if (Date.now() > deadline) throw new Error('no invitation mail');
      await new Promise((r) => setTimeout(r, 25));
    }
    const mail = t.smtp.messages.find((m) => m.to.includes(`owner@${id}.example`))!;
    expect(mail.raw).to.contain('Lindenhof Clinic');
  });

  it('leaves nothing when a later step fails (a domain another tenant holds)', async () => {
    const other = await createTenant(t, 'holder', 'pro');
    await t.http.put(`/api/v1/tenants/${other}/domains`).set(as(other, 'admin')).send({ domains: ['taken-clinic.example'] }).expect(200);
    const id = uniqueTenantId('rollback');
    const before = t.smtp.messages.length;
    const res = await t.http.post('/api/v1/admin/tenants/provision').set(superadmin()).send({
      tenant: { id, name: 'Rollback Clinic', plan: 'pro' },
      domains: [`${id}.localhost`, 'taken-clinic.example'],
      seed: { healthcare: true },
      invitations: [{ email: `owner@${id}.example`, role: 'admin' }],
    });
    expect(res.status).to.equal(409);
    expect(res.body.error.code).to.equal('domain_taken');

    expect((await t.http.get(`/api/v1/admin/tenants/${id}`).set(superadmin())).status).to.equal(404);
    expect((await t.http.get(`/api/v1/public/resolve-host?host=${id}.localhost`)).status).to.equal(404);
    const owner = await t.http.get('/api/v1/public/resolve-host?host=taken-clinic.example');
    expect(owner.body.data.tenantId).to.equal(other);
    expect(await eventsOf(id)).to.deep.equal([]);
    const knex = t.app.kernel.db.knex;
    expect(await knex('schemas').where({ tenant_id: id })).to.have.length(0);
    expect(await knex('tenant_documents').where({ tenant_id: id })).to.have.length(0);
    expect(await knex('tenant_modules').where({ tenant_id: id })).to.have.length(0);
    expect(await knex('tenant_invitations').where({ tenant_id: id })).to.have.length(0);
    await new Promise((r) => setTimeout(r, 500));
    // Mails of earlier tests may still arrive meanwhile (their outboxes run on): none may be this provisioning's.
    const mails = t.smtp.messages.slice(before).filter((m) => m.to.includes(`owner@${id}.example`) || m.raw.includes('Rollback Clinic'));
    expect(mails).to.deep.equal([]);

    // The same request without the taken domain now succeeds: nothing of the first attempt is in the way.
    const retry = await t.http.post('/api/v1/admin/tenants/provision').set(superadmin()).send({
      tenant: { id, name: 'Rollback Clinic', plan: 'pro' }, domains: [`${id}.localhost`], seed: { healthcare: true },
    });
    expect(retry.status, JSON.stringify(retry.body)).to.equal(201);
    expect(retry.body.data.seeded.page).to.equal(4);
  });

  it('leaves no schema of a failed provisioning behind in the registry cache (review finding)', async () => {
    const other = await createTenant(t, 'holder', 'pro');
    await t.http.put(`/api/v1/tenants/${other}/domains`).set(as(other, 'admin')).send({ domains: [`taken-${other}.example`] }).expect(200);
    const id = uniqueTenantId('ghost');
    const failed = await t.http.post('/api/v1/admin/tenants/provision').set(superadmin()).send({
      tenant: { id, name: 'Ghost Clinic', plan: 'pro' }, domains: [`taken-${other}.example`], seed: { healthcare: true },
    });
    expect(failed.status).to.equal(409);
    // The seed registered cms.service inside the rolled-back transaction; a tenant made afterwards with the
    // same id must not find it (before the fix: a cached schema whose table no longer existed, 500).
    await t.http.post('/api/v1/admin/tenants').set(superadmin()).send({ id, name: 'Ghost Clinic' }).expect(201);
    const res = await t.http.get('/api/v1/data/cms/service').set(as(id, 'viewer'));
    expect(res.status).to.equal(404);
    expect(res.body.data.code).to.equal('schema_not_found');
  });

  it('returns the first result again for the same Idempotency-Key', async () => {
    const key = `key-${uniqueTenantId()}`;
    const body = { tenant: { name: `Idem Clinic ${key}` }, seed: { healthcare: true } };
    const first = await t.http.post('/api/v1/admin/tenants/provision').set(superadmin()).set('Idempotency-Key', key).send(body);
    expect(first.status, JSON.stringify(first.body)).to.equal(201);
    const second = await t.http.post('/api/v1/admin/tenants/provision').set(superadmin()).set('Idempotency-Key', key).send(body);
    expect(second.status).to.equal(201);
    expect(second.headers['idempotent-replayed']).to.equal('true');
    expect(second.body.data).to.deep.equal(first.body.data);
    const pages = await t.http.get('/api/v1/data/cms/page').set(as(first.body.data.tenant.id, 'viewer'));
    expect(pages.body.data.items).to.have.length(4);
  });

  it('creates one tenant for two concurrent requests with the same Idempotency-Key', async () => {
    const key = `key-${uniqueTenantId()}`;
    const body = { tenant: { id: uniqueTenantId('race'), name: 'Race Clinic' }, seed: { healthcare: true } };
    const send = () => t.http.post('/api/v1/admin/tenants/provision').set(superadmin()).set('Idempotency-Key', key).send(body);
    const [a, b] = await Promise.all([send(), send()]);
    // The second either finds the first still running (409 conflict) or replays its answer.
    expect([[201, 201], [201, 409]].map((x) => String(x))).to.include(String([a.status, b.status].sort()));
    const again = await send();
    expect(again.status).to.equal(201);
    expect(again.headers['idempotent-replayed']).to.equal('true');
    expect(again.body.data).to.deep.equal((a.status === 201 ? a : b).body.data);
    const pages = await t.http.get('/api/v1/data/cms/page').set(as(body.tenant.id, 'viewer'));
    expect(pages.body.data.items).to.have.length(4);
  });

  it('answers 422 idempotency_key_reused for an Idempotency-Key reused with another body', async () => {
    const key = `key-${uniqueTenantId()}`;
    await t.http.post('/api/v1/admin/tenants/provision').set(superadmin()).set('Idempotency-Key', key).send({ tenant: { name: `A ${key}` } }).expect(201);
    const res = await t.http.post('/api/v1/admin/tenants/provision').set(superadmin()).set('Idempotency-Key', key).send({ tenant: { name: `B ${key}` } });
    expect(res.status).to.equal(422);
    expect(res.body.error.code).to.equal('idempotency_key_reused');
  });

  it('answers 409 conflict for an existing tenant id', async () => {
    const id = await createTenant(t, 'exists');
    const res = await t.http.post('/api/v1/admin/tenants/provision').set(superadmin()).send({ tenant: { id, name: 'Again' } });
    expect(res.status).to.equal(409);
  });

  it('answers 400 validation_failed for a bad body, branding or domain', async () => {
    const bad = await t.http.post('/api/v1/admin/tenants/provision').set(superadmin()).send({ tenant: { id: 'X!', name: '' }, extra: 1 });
    expect(bad.status).to.equal(400);
    expect(bad.body.error.details.map((d: { path: string }) => d.path)).to.include.members(['/tenant/id', '/tenant/name', '/extra']);
    const id = uniqueTenantId('bad');
    const branding = await t.http.post('/api/v1/admin/tenants/provision').set(superadmin()).send({ tenant: { id, name: 'B' }, branding: { colors: { primary: 'red' } } });
    expect(branding.status).to.equal(400);
    // The body's schema holds the branding's: the path names the body's member.
    expect(branding.body.error.details[0].path).to.equal('/branding/colors/primary');
    const domain = await t.http.post('/api/v1/admin/tenants/provision').set(superadmin()).send({ tenant: { id, name: 'B' }, domains: ['not a host'] });
    expect(domain.status).to.equal(400);
    // A javascript: link is refused as the site config refuses it, and the document says so (#33).
    const link = await t.http.post('/api/v1/admin/tenants/provision').set(superadmin()).send({ tenant: { id, name: 'B' }, navigation: [{ label: 'x', href: 'javascript:alert(1)' }] });
    expect([link.status, link.body.error.details[0].path]).to.deep.equal([400, '/navigation/0/href']);
    const doc = (await t.http.get('/api/v1/openapi.json')).body;
    const body = doc.paths['/api/v1/admin/tenants/provision'].post.requestBody.content['application/json'].schema;
    expect(JSON.stringify(body.$ref ? doc.components.schemas[body.$ref.split('/').pop()] : body)).to.include('mailto:|tel:');
    expect((await t.http.get(`/api/v1/admin/tenants/${id}`).set(superadmin())).status).to.equal(404);
  });

  it('answers 402 feature_required for a custom domain on the free plan, leaving nothing', async () => {
    const id = uniqueTenantId('free');
    const res = await t.http.post('/api/v1/admin/tenants/provision').set(superadmin()).send({ tenant: { id, name: 'Free' }, domains: ['www.free-clinic.example'] });
    expect(res.status).to.equal(402);
    expect(res.body.error.code).to.equal('feature_required');
    expect((await t.http.get(`/api/v1/admin/tenants/${id}`).set(superadmin())).status).to.equal(404);
  });

  it('answers 403 superadmin_required for a tenant admin', async () => {
    const tenant = await createTenant(t, 'notsa');
    const res = await t.http.post('/api/v1/admin/tenants/provision').set(as(tenant, 'admin')).send({ tenant: { name: 'Nope' } });
    expect(res.status).to.equal(403);
    expect(res.body.error.code).to.equal('superadmin_required');
  });
});
