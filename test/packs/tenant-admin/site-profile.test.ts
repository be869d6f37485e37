import { expect } from 'chai';
import { createTenant } from '../../helpers/test-app.js';
import { as, superadmin } from '../../helpers/tokens.js';
import { tenantAdminApp, type TenantAdminTestApp } from './tenant-admin-app.js';

describe('site config and branding', () => {
  let t: TenantAdminTestApp;
  let tenant: string;

  before(async () => {
    t = await tenantAdminApp();
  });
  beforeEach(async () => {
    tenant = await createTenant(t, 'site');
  });

  describe('GET /api/v1/tenants/:id/site-config', () => {
    it('answers the defaults for a new tenant', async () => {
      const res = await t.http.get(`/api/v1/tenants/${tenant}/site-config`).set(as(tenant, 'viewer'));
      expect(res.status).to.equal(200);
      expect(res.body.data).to.deep.equal({ siteName: `Tenant ${tenant}`, defaultLocale: 'en', locales: ['en'], timezone: 'UTC', navigation: [] });
    });
  });

  describe('PATCH /api/v1/tenants/:id/site-config', () => {
    it('merges the patch (null removes a key) and keeps the rest', async () => {
      const first = await t.http.patch(`/api/v1/tenants/${tenant}/site-config`).set(as(tenant, 'admin')).send({
        siteName: 'Acme Clinic', seo: { title: 'Acme', description: 'Care' }, navigation: [{ label: 'Home', href: '/', children: [{ label: 'A', href: '/a' }] }],
      });
      expect(first.status, JSON.stringify(first.body)).to.equal(200);
      const second = await t.http.patch(`/api/v1/tenants/${tenant}/site-config`).set(as(tenant, 'admin')).send({ seo: { description: null }, timezone: 'Europe/Berlin' });
      expect(second.body.data).to.deep.include({ siteName: 'Acme Clinic', seo: { title: 'Acme' }, timezone: 'Europe/Berlin' });
      const read = await t.http.get(`/api/v1/tenants/${tenant}/site-config`).set(as(tenant, 'viewer'));
      expect(read.body.data).to.deep.equal(second.body.data);
    });

    it('answers 400 validation_failed for unknown keys and bad values, changing nothing', async () => {
      const res = await t.http.patch(`/api/v1/tenants/${tenant}/site-config`).set(as(tenant, 'admin')).send({ colour: 'red', seo: { keywords: 'x' }, locales: 'en' });
      expect(res.status).to.equal(400);
      expect(res.body.error.code).to.equal('validation_failed');
      expect(res.body.error.details.map((d: { path: string }) => d.path)).to.include.members(['/colour', '/seo/keywords', '/locales']);
      const read = await t.http.get(`/api/v1/tenants/${tenant}/site-config`).set(as(tenant, 'viewer'));
      expect(read.body.data.siteName).to.equal(`Tenant ${tenant}`);
    });

    it('answers 400 validation_failed naming the path for a javascript: href, in an item or a child', async () => {
      const res = await t.http.patch(`/api/v1/tenants/${tenant}/site-config`).set(as(tenant, 'admin')).send({
        navigation: [{ label: 'Evil', href: 'javascript:alert(1)' }, { label: 'Home', href: '/', children: [{ label: 'Data', href: 'data:text/html,x' }] }],
      });
      expect(res.status).to.equal(400);
      expect(res.body.error.code).to.equal('validation_failed');
      expect(res.body.error.details.map((d: { path: string }) => d.path)).to.include.members(['/navigation/0/href', '/navigation/1/children/0/href']);
      const allowed = await t.http.patch(`/api/v1/tenants/${tenant}/site-config`).set(as(tenant, 'admin')).send({
        navigation: [{ label: 'Site', href: 'https://example.com/' }, { label: 'Top', href: '#top' }, { label: 'Mail', href: 'mailto:a@example.com' }, { label: 'Call', href: 'tel:+351123' }],
      });
      expect(allowed.status, JSON.stringify(allowed.body)).to.equal(200);
      const resolved = await t.http.get('/api/v1/public/resolve-host').query({ host: `${tenant}.${t.config.platformBaseDomain}` });
      expect(resolved.status, JSON.stringify(resolved.body)).to.equal(200);
      expect(JSON.stringify(resolved.body.data)).not.to.include('javascript:');
    });

    it('answers 400 for a body that is not an object', async () => {
      const res = await t.http.patch(`/api/v1/tenants/${tenant}/site-config`).set(as(tenant, 'admin')).send([1, 2]);
      expect(res.status).to.equal(400);
    });
  });

  describe('PATCH /api/v1/tenants/:id/branding', () => {
    it('stores colours and fonts', async () => {
      const res = await t.http.patch(`/api/v1/tenants/${tenant}/branding`).set(as(tenant, 'admin')).send({
        logoUrl: 'https://cdn.example.test/logo.svg', colors: { primary: '#0E7490', text: '#111' }, fonts: { heading: 'Merriweather' },
      });
      expect(res.status).to.equal(200);
      const read = await t.http.get(`/api/v1/tenants/${tenant}/branding`).set(as(tenant, 'viewer'));
      expect(read.body.data).to.deep.equal({ logoUrl: 'https://cdn.example.test/logo.svg', colors: { primary: '#0E7490', text: '#111' }, fonts: { heading: 'Merriweather' } });
    });

    it('answers 400 for a colour that is not hex and for unknown keys', async () => {
      const res = await t.http.patch(`/api/v1/tenants/${tenant}/branding`).set(as(tenant, 'admin')).send({ colors: { primary: 'blue', shadow: '#000' }, logoUrl: 'javascript:alert(1)' });
      expect(res.status).to.equal(400);
      expect(res.body.error.details.map((d: { path: string }) => d.path)).to.include.members(['/colors/primary', '/colors/shadow', '/logoUrl']);
    });
  });

  describe('PUT /api/v1/tenants/:id/domains', () => {
    it('lower-cases, deduplicates and replaces the list', async () => {
      const res = await t.http.put(`/api/v1/tenants/${tenant}/domains`).set(as(tenant, 'admin')).send({ domains: [`WWW.${tenant}.localhost`, `www.${tenant}.localhost.`, `${tenant}.localhost`] });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.data.domains).to.deep.equal([`${tenant}.localhost`, `www.${tenant}.localhost`]);
      const replaced = await t.http.put(`/api/v1/tenants/${tenant}/domains`).set(as(tenant, 'admin')).send({ domains: [`${tenant}.localhost`] });
      expect(replaced.body.data.domains).to.deep.equal([`${tenant}.localhost`]);
      const list = await t.http.get(`/api/v1/tenants/${tenant}/domains`).set(as(tenant, 'viewer'));
      expect(list.body.data.domains).to.deep.equal([`${tenant}.localhost`]);
    });

    it('answers 400 for invalid hostnames, naming each', async () => {
      const res = await t.http.put(`/api/v1/tenants/${tenant}/domains`).set(as(tenant, 'admin')).send({ domains: ['ok.example.com', 'http://x.com', 'a..b', 'bad_host.com', 'x.com:80'] });
      expect(res.status).to.equal(400);
      expect(res.body.error.details.map((d: { path: string }) => d.path)).to.deep.equal(['/domains/1', '/domains/2', '/domains/3', '/domains/4']);
      // A host name below the platform's base domain that is not the tenant's: the document's pattern takes it, the service does not.
      const other = await t.http.put(`/api/v1/tenants/${tenant}/domains`).set(as(tenant, 'admin')).send({ domains: ['ok.example.com', 'other.localhost'] });
      expect(other.status).to.equal(400);
      expect(other.body.error.details.map((d: { path: string }) => d.path)).to.deep.equal(['/domains/1']);
    });

    it('answers 400 for more than 20 domains', async () => {
      await t.http.patch(`/api/v1/tenants/${tenant}/features`).set(superadmin()).send({ custom_domain: true }).expect(200);
      const domains = Array.from({ length: 21 }, (_, i) => `d${i}.example.com`);
      const res = await t.http.put(`/api/v1/tenants/${tenant}/domains`).set(as(tenant, 'admin')).send({ domains });
      expect(res.status).to.equal(400);
      expect(res.body.error.details[0].path).to.equal('/domains');
    });

    it('answers 402 feature_required for a custom domain without custom_domain, and accepts it with the feature', async () => {
      const res = await t.http.put(`/api/v1/tenants/${tenant}/domains`).set(as(tenant, 'admin')).send({ domains: [`www.${tenant}.example.com`] });
      expect(res.status).to.equal(402);
      expect(res.body.error.code).to.equal('feature_required');
      expect((await t.http.get(`/api/v1/tenants/${tenant}/domains`).set(as(tenant, 'viewer'))).body.data.domains).to.deep.equal([]);
      await t.http.patch(`/api/v1/tenants/${tenant}/features`).set(superadmin()).send({ custom_domain: true }).expect(200);
      const ok = await t.http.put(`/api/v1/tenants/${tenant}/domains`).set(as(tenant, 'admin')).send({ domains: [`www.${tenant}.example.com`] });
      expect(ok.status).to.equal(200);
    });

    it('answers 409 domain_taken for a domain another tenant holds', async () => {
      const other = await createTenant(t, 'other', 'pro');
      await t.http.put(`/api/v1/tenants/${other}/domains`).set(as(other, 'admin')).send({ domains: [`shop.${other}.example.com`] }).expect(200);
      await t.http.patch(`/api/v1/tenants/${tenant}/features`).set(superadmin()).send({ custom_domain: true }).expect(200);
      const res = await t.http.put(`/api/v1/tenants/${tenant}/domains`).set(as(tenant, 'admin')).send({ domains: [`SHOP.${other}.example.com`] });
      expect(res.status).to.equal(409);
      expect(res.body.error.code).to.equal('domain_taken');
    });
  });

  describe('GET /api/v1/public/resolve-host', () => {
    it('resolves a registered domain ignoring port and case, with site config and branding', async () => {
      await t.http.patch(`/api/v1/tenants/${tenant}/features`).set(superadmin()).send({ custom_domain: true }).expect(200);
      await t.http.put(`/api/v1/tenants/${tenant}/domains`).set(as(tenant, 'admin')).send({ domains: [`www.${tenant}.example.org`] }).expect(200);
      await t.http.patch(`/api/v1/tenants/${tenant}/branding`).set(as(tenant, 'admin')).send({ colors: { primary: '#123456' } }).expect(200);
      const res = await t.http.get(`/api/v1/public/resolve-host?host=WWW.${tenant.toUpperCase()}.Example.org:8443`);
      expect(res.status).to.equal(200);
      expect(res.body.data).to.deep.equal({
        tenantId: tenant, host: `www.${tenant}.example.org`,
        siteConfig: { siteName: `Tenant ${tenant}`, defaultLocale: 'en', locales: ['en'], timezone: 'UTC', navigation: [] },
        branding: { colors: { primary: '#123456' } },
      });
    });

    it('resolves {tenantId}.{PLATFORM_BASE_DOMAIN}', async () => {
      const res = await t.http.get(`/api/v1/public/resolve-host?host=${tenant}.localhost:3000`);
      expect(res.status).to.equal(200);
      expect(res.body.data.tenantId).to.equal(tenant);
    });

    it('answers 404 host_not_found for an unknown host and 400 without host', async () => {
      const res = await t.http.get('/api/v1/public/resolve-host?host=nobody.example.net');
      expect(res.status).to.equal(404);
      expect(res.body.error.code).to.equal('host_not_found');
      expect((await t.http.get('/api/v1/public/resolve-host?host=no-such-tenant-zz.localhost')).body.error.code).to.equal('host_not_found');
      expect((await t.http.get('/api/v1/public/resolve-host')).status).to.equal(400);
    });
  });
});
