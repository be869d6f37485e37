import { expect } from 'chai';
import { createTenant, sharedTestApp, type TestApp } from '../../helpers/test-app.js';
import { as, superadmin } from '../../helpers/tokens.js';
import { Shop, type Json } from './shop.js';

const REGIONS = '/api/v1/erp/tax-regions';
const OPTIONS = '/api/v1/erp/shipping-options';

describe('Tax regions and shipping options (CONTRACT 15.1)', () => {
  let t: TestApp;
  let shop: Shop;
  const admin = () => as(shop.tenant, 'admin');
  const option = async (body: Json) => {
    const res = await t.http.post(OPTIONS).set(admin()).send(body);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body.data as Json;
  };

  before(async () => {
    t = await sharedTestApp();
  });

  beforeEach(async () => {
    shop = new Shop(t, await createTenant(t, 'tax'));
  });

  describe('PUT/GET/DELETE /erp/tax-regions/{country}', () => {
    it('creates and replaces a region, lists and deletes it', async () => {
      const put = await t.http.put(`${REGIONS}/DE`).set(admin()).send({ name: 'Germany', standardRateBasisPoints: 1900, reducedRateBasisPoints: 700 });
      expect(put.status, JSON.stringify(put.body)).to.equal(200);
      expect(put.body.data).to.deep.equal({ country: 'DE', name: 'Germany', standardRateBasisPoints: 1900, reducedRateBasisPoints: 700 });
      const replaced = await t.http.put(`${REGIONS}/DE`).set(admin()).send({ standardRateBasisPoints: 2000 }).expect(200);
      expect(replaced.body.data).to.deep.equal({ country: 'DE', name: 'DE', standardRateBasisPoints: 2000, reducedRateBasisPoints: null });
      await t.http.put(`${REGIONS}/AT`).set(admin()).send({ name: 'Austria', standardRateBasisPoints: 2000, reducedRateBasisPoints: 1000 }).expect(200);
      const list = await t.http.get(REGIONS).set(as(shop.tenant, 'viewer')).expect(200);
      expect(list.body.data.items.map((r: Json) => r.country)).to.deep.equal(['AT', 'DE']);
      expect((await t.http.get(`${REGIONS}/AT`).set(as(shop.tenant, 'viewer')).expect(200)).body.data.name).to.equal('Austria');
      expect((await t.http.delete(`${REGIONS}/AT`).set(admin())).status).to.equal(200);
      expect((await t.http.get(`${REGIONS}/AT`).set(as(shop.tenant, 'viewer'))).body.error.code).to.equal('not_found');
      expect((await t.http.delete(`${REGIONS}/AT`).set(admin())).status).to.equal(404);
    });

    it('answers 400 for a country that is not two upper-case letters and for rates outside 0..10000', async () => {
      const lower = await t.http.put(`${REGIONS}/de`).set(admin()).send({ standardRateBasisPoints: 1900 });
      expect(lower.status).to.equal(400);
      expect(lower.body.error.details[0].path).to.equal('/country');
      expect((await t.http.put(`${REGIONS}/DEU`).set(admin()).send({ standardRateBasisPoints: 1900 })).status).to.equal(400);
      expect((await t.http.get(`${REGIONS}/D1`).set(admin())).status).to.equal(400);
      const high = await t.http.put(`${REGIONS}/DE`).set(admin()).send({ standardRateBasisPoints: 10001 });
      expect(high.status).to.equal(400);
      expect(high.body.error.details[0].path).to.equal('/standardRateBasisPoints');
      expect((await t.http.put(`${REGIONS}/DE`).set(admin()).send({ standardRateBasisPoints: 19.5 })).status).to.equal(400);
    });

    it('lets viewers read and only admins write; a write through /data is 403 forbidden', async () => {
      expect((await t.http.put(`${REGIONS}/DE`).set(as(shop.tenant, 'editor')).send({ standardRateBasisPoints: 1900 })).status).to.equal(403);
      await t.http.put(`${REGIONS}/DE`).set(admin()).send({ standardRateBasisPoints: 1900 }).expect(200);
      expect((await t.http.delete(`${REGIONS}/DE`).set(as(shop.tenant, 'editor'))).status).to.equal(403);
      const sealed = await t.http.post('/api/v1/data/erp/tax_region').set(admin()).send({ country: 'FR', name: 'France', standardRateBasisPoints: 2000 });
      expect(sealed.status).to.equal(403);
      const read = await t.http.get('/api/v1/data/erp/tax_region').set(as(shop.tenant, 'viewer')).expect(200);
      expect(read.body.data.items.map((r: Json) => r.country)).to.deep.equal(['DE']);
    });

    it('keeps each tenant\'s regions apart', async () => {
      await t.http.put(`${REGIONS}/DE`).set(admin()).send({ standardRateBasisPoints: 1900 }).expect(200);
      const other = await createTenant(t, 'tax');
      expect((await t.http.get(`${REGIONS}/DE`).set(as(other, 'viewer'))).status).to.equal(404);
      expect((await t.http.get(REGIONS).set(as(other, 'viewer'))).body.data.items).to.deep.equal([]);
    });
  });

  describe('/erp/shipping-options', () => {
    it('creates, reads, patches, lists and deletes options', async () => {
      const created = await option({ name: 'Standard', priceCents: 495, countries: ['DE', 'AT'], freeAboveCents: 5000 });
      expect(created).to.include({ name: 'Standard', priceCents: 495, currency: 'EUR', freeAboveCents: 5000, active: true, version: 1 });
      expect(created.countries).to.deep.equal(['DE', 'AT']);
      const got = await t.http.get(`${OPTIONS}/${created.id}`).set(as(shop.tenant, 'viewer')).expect(200);
      expect(got.body.data).to.deep.equal(created);
      const patched = await t.http.patch(`${OPTIONS}/${created.id}`).set(admin()).send({ priceCents: 595, freeAboveCents: null }).expect(200);
      expect(patched.body.data).to.include({ priceCents: 595, freeAboveCents: null, version: 2 });
      const list = await t.http.get(`${OPTIONS}?filter[active]=true`).set(as(shop.tenant, 'viewer')).expect(200);
      expect(list.body.data.items.map((o: Json) => o.id)).to.deep.equal([created.id]);
      expect((await t.http.delete(`${OPTIONS}/${created.id}`).set(admin())).status).to.equal(200);
      expect((await t.http.get(`${OPTIONS}/${created.id}`).set(admin())).status).to.equal(404);
    });

    it('answers 400 for a bad body, 403 to an editor and to writes through /data', async () => {
      const bad = await t.http.post(OPTIONS).set(admin()).send({ name: 'X', priceCents: 4.95, countries: ['de'] });
      expect(bad.status).to.equal(400);
      expect(bad.body.error.details.map((d: Json) => d.path)).to.include.members(['/priceCents', '/countries/0']);
      expect((await t.http.post(OPTIONS).set(admin()).send({ name: 'X', priceCents: 1, countries: [] })).status).to.equal(400);
      expect((await t.http.post(OPTIONS).set(as(shop.tenant, 'editor')).send({ name: 'X', priceCents: 1, countries: ['DE'] })).status).to.equal(403);
      const o = await option({ name: 'Express', priceCents: 990, countries: ['DE'] });
      expect((await t.http.post('/api/v1/data/erp/shipping_option').set(admin()).send({ name: 'Y', priceCents: 1, currency: 'EUR', countries: ['DE'], active: true })).status).to.equal(403);
      expect((await t.http.patch(`/api/v1/data/erp/shipping_option/${o.id}`).set(admin()).send({ priceCents: 1 })).status).to.equal(403);
      expect((await t.http.delete(`/api/v1/data/erp/shipping_option/${o.id}`).set(admin())).status).to.equal(403);
    });
  });

  describe('GET /public/tenant/{tenantId}/shipping-options', () => {
    it('lists the active options of the currency that ship to the country, without credentials, cheapest first', async () => {
      const express = await option({ name: 'Express', priceCents: 990, countries: ['DE'] });
      const standard = await option({ name: 'Standard', priceCents: 495, countries: ['DE', 'AT'], freeAboveCents: 5000 });
      await option({ name: 'Off', priceCents: 100, countries: ['DE'], active: false });
      await option({ name: 'Dollars', priceCents: 100, currency: 'USD', countries: ['DE'] });
      await option({ name: 'France', priceCents: 100, countries: ['FR'] });
      const res = await t.http.get(`/api/v1/public/tenant/${shop.tenant}/shipping-options?country=DE&currency=EUR`);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.data.items).to.deep.equal([
        { id: standard.id, name: 'Standard', priceCents: 495, currency: 'EUR', freeAboveCents: 5000 },
        { id: express.id, name: 'Express', priceCents: 990, currency: 'EUR', freeAboveCents: null },
      ]);
      const usd = await t.http.get(`/api/v1/public/tenant/${shop.tenant}/shipping-options?country=DE&currency=USD`).expect(200);
      expect(usd.body.data.items.map((o: Json) => o.name)).to.deep.equal(['Dollars']);
      // EUR is the default currency.
      expect((await t.http.get(`/api/v1/public/tenant/${shop.tenant}/shipping-options?country=AT`).expect(200)).body.data.items.map((o: Json) => o.name)).to.deep.equal(['Standard']);
    });

    it('answers 400 without a country, 404 tenant_not_found for an unknown tenant, 404 not_found without the erp module', async () => {
      expect((await t.http.get(`/api/v1/public/tenant/${shop.tenant}/shipping-options`)).status).to.equal(400);
      expect((await t.http.get(`/api/v1/public/tenant/${shop.tenant}/shipping-options?country=de`)).status).to.equal(400);
      expect((await t.http.get('/api/v1/public/tenant/no-such-tenant/shipping-options?country=DE')).body.error.code).to.equal('tenant_not_found');
      await t.http.patch(`/api/v1/tenants/${shop.tenant}/licensed-modules`).set(superadmin()).send({ appCode: 'erp', isEnabled: false }).expect(200);
      const off = await t.http.get(`/api/v1/public/tenant/${shop.tenant}/shipping-options?country=DE`);
      expect(off.status).to.equal(404);
      expect(off.body.error.code).to.equal('not_found');
    });
  });

  describe('product taxClass', () => {
    it('defaults to standard and takes reduced and zero; anything else is 400', async () => {
      expect((await shop.product()).taxClass).to.equal('standard');
      expect((await shop.product({ taxClass: 'reduced' })).taxClass).to.equal('reduced');
      const bad = await t.http.post('/api/v1/erp/products').set(as(shop.tenant, 'editor')).send({ sku: 'B', name: 'B', priceCents: 1, taxClass: 'luxury' });
      expect(bad.status).to.equal(400);
      expect(bad.body.error.details[0].path).to.equal('/taxClass');
    });
  });
});
