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

  it('a campaign: a page, a draft-only post and a price in one release, published together and rolled back (docs/content-workflow.md)', async () => {
    const editor = as(tenant, 'editor');
    const admin = as(tenant, 'admin');
    const page = (await t.http.post('/api/v1/data/cms/page').set(editor).send({ title: 'Home', slug: 'home', status: 'published', content: 'Welcome.' }).expect(201)).body.data.item;
    const product = await shop.product({ sku: 'MUG', priceCents: 1999, physicalStock: 40 });
    await t.http.put(`/api/v1/data/cms/page/${page.id}/draft`).set(editor).send({ content: 'Winter sale: every mug at 14.99.' }).expect(200);
    const post = (await t.http.post('/api/v1/data/cms/post?draft=true').set(editor).send({ title: 'The winter sale', slug: 'winter-sale', status: 'published', content: 'Mugs.' }).expect(201)).body.data.item;
    await t.http.put(`${DATA}/${product.id}/draft`).set(editor).send({ priceCents: 1499 }).expect(200);
    const before = await storefront('MUG').expect(200);

    const release = (await t.http.post('/api/v1/releases').set(editor).send({ name: 'Winter sale' }).expect(201)).body.data;
    for (const [namespace, schema, id] of [['cms', 'page', page.id], ['cms', 'post', post.id], ['erp', 'product', product.id]]) {
      await t.http.post(`/api/v1/releases/${release.id}/items`).set(editor).send({ namespace, schema, id }).expect(200);
    }
    expect((await storefront('MUG').expect(200)).headers.etag).to.equal(before.headers.etag);
    const published = await t.http.post(`/api/v1/releases/${release.id}/publish`).set(admin);
    expect(published.status, JSON.stringify(published.body)).to.equal(200);
    expect(published.body.data.items.map((i: Json) => i.version)).to.deep.equal([2, 1, 2]);
    const sale = await storefront('MUG').expect(200);
    expect(sale.body.data.priceCents).to.equal(1499);
    expect(sale.headers.etag).to.not.equal(before.headers.etag);
    const posts = (await t.http.get(`/api/v1/public/tenant/${tenant}/content/post`).query({ slug: 'winter-sale' }).expect(200)).body.data.items;
    expect(posts.map((p: Json) => p.title)).to.deep.equal(['The winter sale']);

    await t.http.post(`/api/v1/releases/${release.id}/rollback`).set(admin).expect(200);
    expect((await storefront('MUG').expect(200)).body.data.priceCents).to.equal(1999);
    expect((await t.http.get(`/api/v1/public/tenant/${tenant}/content/post`).query({ slug: 'winter-sale' }).expect(200)).body.data.items).to.deep.equal([]);
    const home = (await t.http.get(`/api/v1/public/tenant/${tenant}/content/page`).query({ slug: 'home' }).expect(200)).body.data.items;
    expect(home.map((p: Json) => p.content)).to.deep.equal(['Welcome.']);
    expect(await shop.expectLedgerConsistent(product.id)).to.equal(40);
  });
});
