import { expect } from 'chai';
import { createTenant, sharedTestApp, type TestApp } from '../helpers/test-app.js';
import { as, superadmin } from '../helpers/tokens.js';

type Json = Record<string, any>;

/** Administration in the audit log (CONTRACT.md 16.4): each change's entry, written with it, without secrets. */
describe('audit log: administration entries and GET /api/v1/audit-log', () => {
  let t: TestApp;
  let tenant: string;
  const admin = () => as(tenant, 'admin', { sub: 'audit-admin', email: 'boss@example.com' });
  const entries = async (): Promise<Json[]> => (await t.http.get(`/api/v1/tenants/${tenant}/audit-log?limit=200`).set(admin()).expect(200)).body.data.items;

  before(async () => {
    t = await sharedTestApp();
  });

  beforeEach(async () => {
    tenant = await createTenant(t, 'aa');
  });

  it('writes an entry for each administration change of a tenant, by its actor, and none for a refused change', async () => {
    const ok = (res: { status: number; body: unknown }) => expect(res.status, JSON.stringify(res.body)).to.be.within(200, 201);
    ok(await t.http.patch(`/api/v1/tenants/${tenant}/licensed-modules`).set(admin()).send({ appCode: 'crm', isEnabled: false }));
    ok(await t.http.patch(`/api/v1/tenants/${tenant}/features`).set(superadmin()).send({ white_label: true }));
    ok(await t.http.put(`/api/v1/tenants/${tenant}/domains`).set(admin()).send({ domains: [`${tenant}.localhost`] }));
    ok(await t.http.patch(`/api/v1/tenants/${tenant}/branding`).set(admin()).send({ logoUrl: 'https://example.com/logo.png' }));
    ok(await t.http.patch(`/api/v1/tenants/${tenant}/site-config`).set(admin()).send({ siteName: 'Audited' }));
    const connector = await t.http.post('/api/v1/connectors').set(admin()).send({ url: 'http://127.0.0.1:9/hook', events: ['aa.*'], secret: 'connector-secret-0123456789' });
    ok(connector);
    ok(await t.http.put('/api/v1/erp/payment-providers/stripe').set(admin()).send({ secretKey: 'sk_test_audit_0123456789', webhookSecret: 'whsec_audit_0123456789' }));
    const schema = { namespace: 'aa', name: 'note', schema: { type: 'object', properties: { title: { type: 'string' } } } };
    ok(await t.http.post('/api/v1/metadata/schemas').set(admin()).send(schema));
    ok(await t.http.put('/api/v1/metadata/schemas/aa/note').set(admin()).set('If-Match', '"1"')
      .send({ ...schema, schema: { ...schema.schema, properties: { ...schema.schema.properties, body: { type: 'string' } } } }));
    // Refused: nothing written.
    expect((await t.http.put(`/api/v1/tenants/${tenant}/domains`).set(admin()).send({ domains: ['shop.example.com'] })).status).to.equal(402);

    const log = await entries();
    const actions = log.map((e) => `${e.action} ${e.target}`);
    expect(actions).to.include.members([
      'module.updated module/crm', 'feature.updated features/white_label', 'domains.replaced domains', 'branding.updated branding',
      'site_config.updated site_config', `connector.created connector/${connector.body.data.id}`, 'payment_provider.updated payment_provider/stripe',
      'schema.changed schema/aa.note',
    ]);
    expect(log.filter((e) => e.action === 'domains.replaced')).to.have.length(1);
    expect(log.find((e) => e.action === 'module.updated')!.actor).to.deep.equal({ type: 'user', id: 'audit-admin', email: 'boss@example.com' });
    const text = JSON.stringify(log);
    for (const secret of ['connector-secret', 'sk_test_audit', 'whsec_audit']) expect(text).to.not.include(secret);
  });

  it('lists platform actions to a superadmin (tenant.created, platform_settings.updated) with filters; 403 to a tenant admin', async () => {
    const res = await t.http.get(`/api/v1/audit-log?action=tenant.created&target=tenant/${tenant}`).set(superadmin()).expect(200);
    expect(res.body.data.items).to.have.length(1);
    expect(res.body.data.items[0]).to.include({ action: 'tenant.created', target: `tenant/${tenant}` });
    expect(res.body.data.items[0].actor).to.deep.equal({ type: 'user', id: 'test-key' });
    await t.http.patch('/api/v1/platform/settings').set(superadmin()).send({ SMTP_PASSWORD: 'platform-secret-0123' }).expect(200);
    const settings = (await t.http.get('/api/v1/audit-log?action=platform_settings.updated&limit=1').set(superadmin()).expect(200)).body.data.items;
    expect(settings[0].target).to.equal('platform_settings/SMTP_PASSWORD');
    expect(JSON.stringify(settings)).to.not.include('platform-secret');
    // Not in the tenant's own log.
    expect((await entries()).map((e) => e.action)).to.not.include('tenant.created');
    expect((await t.http.get('/api/v1/audit-log').set(admin())).status).to.equal(403);
  });
});
