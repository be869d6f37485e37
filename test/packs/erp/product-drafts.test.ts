import { expect } from 'chai';
import { createTenant, sharedTestApp, type TestApp } from '../../helpers/test-app.js';
import { as } from '../../helpers/tokens.js';
import { Shop } from './shop.js';

type Json = Record<string, any>;

/**
 * Drafts of products (CONTRACT.md 17.1): a price, a name, a status wait in a draft; stock never goes through one,
 * and the storefront's answer and ETag change exactly when the price goes live.
 */
describe('drafts of erp.product: prices that go live at once, stock never drafted', () => {
  let t: TestApp;
  let tenant: string;
  let shop: Shop;
  const DATA = '/api/v1/data/erp/product';
  const storefront = (sku: string) => t.http.get(`/api/v1/public/tenant/${tenant}/products/${sku}`);

  before(async () => {
    t = await sharedTestApp();
  });

  beforeEach(async () => {
    tenant = await createTenant(t, 'pd');
    shop = new Shop(t, tenant);
  });

  it('answers 400 validation_failed at the path of a field a draft may not change (stock above all)', async () => {
    const p = await shop.product({ physicalStock: 5 });
    for (const [patch, path] of [[{ physicalStock: 50 }, '/physicalStock'], [{ sku: 'OTHER' }, '/sku'], [{ currency: 'USD', priceCents: 1 }, '/currency']] as const) {
      const res = await t.http.put(`${DATA}/${p.id}/draft`).set(as(tenant, 'editor')).send(patch);
      expect(res.status, JSON.stringify(patch)).to.equal(400);
      expect(res.body.data.code).to.equal('validation_failed');
      expect(res.body.data.errors.map((e: Json) => e.path)).to.deep.equal([path]);
    }
    const ok = await t.http.put(`${DATA}/${p.id}/draft`).set(as(tenant, 'editor'))
      .send({ name: 'Renamed', description: 'New', priceCents: 2500, taxRateBasisPoints: 700, status: 'active', metadata: { a: 1 } });
    expect(ok.status, JSON.stringify(ok.body)).to.equal(200);
    expect(ok.body.data.item).to.include({ physicalStock: 5, priceCents: 2500 });
  });

  it('changes the storefront answer and its ETag exactly when the price goes live, and never reverts stock sold meanwhile', async () => {
    const p = await shop.product({ priceCents: 1000, physicalStock: 10 });
    const before = await storefront(p.sku).expect(200);
    await t.http.put(`${DATA}/${p.id}/draft`).set(as(tenant, 'editor')).send({ priceCents: 800 }).expect(200);
    const waiting = await storefront(p.sku).expect(200);
    expect(waiting.headers.etag).to.equal(before.headers.etag);
    expect(waiting.body.data.priceCents).to.equal(1000);
    expect((await storefront(p.sku).set('If-None-Match', before.headers.etag)).status).to.equal(304);

    // Stock moves after the draft was made: the publish is refused until the draft is rebased, and keeps the new stock.
    await t.http.post(`/api/v1/erp/products/${p.id}/stock-adjustments`).set(as(tenant, 'admin')).send({ delta: -3, reason: 'damage' }).expect(201);
    const moved = await storefront(p.sku).expect(200);
    expect((await t.http.post(`${DATA}/${p.id}/draft/publish`).set(as(tenant, 'editor'))).status).to.equal(409);
    await t.http.put(`${DATA}/${p.id}/draft?rebase=true`).set(as(tenant, 'editor')).send({}).expect(200);
    const published = await t.http.post(`${DATA}/${p.id}/draft/publish`).set(as(tenant, 'editor'));
    expect(published.status, JSON.stringify(published.body)).to.equal(200);
    expect(published.body.data.item).to.include({ priceCents: 800, physicalStock: 7 });

    const after = await storefront(p.sku).expect(200);
    expect(after.body.data).to.include({ priceCents: 800, availableStock: 7 });
    expect(after.headers.etag).to.not.equal(moved.headers.etag);
    expect((await storefront(p.sku).set('If-None-Match', moved.headers.etag)).status).to.equal(200);
    expect(await shop.expectLedgerConsistent(p.id)).to.equal(7);
  });
});
