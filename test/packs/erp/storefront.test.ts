import { expect } from 'chai';
import { createTenant, sharedTestApp, type TestApp } from '../../helpers/test-app.js';
import { as, superadmin } from '../../helpers/tokens.js';
import { PRODUCTS, Shop, type Json } from './shop.js';

describe('Storefront catalogue (public)', () => {
  let t: TestApp;
  let shop: Shop;
  const base = () => `/api/v1/public/tenant/${shop.tenant}/products`;

  before(async () => {
    t = await sharedTestApp();
  });

  beforeEach(async () => {
    shop = new Shop(t, await createTenant(t, 'store'));
  });

  const upload = async (filename: string, visibility: 'public' | 'private') => {
    const res = await t.http.post('/api/v1/storage/objects').set(as(shop.tenant, 'editor'))
      .set({ 'X-Platform-Product': 'shop', 'X-Platform-Collection': 'images', 'X-Platform-Filename': filename, 'X-Platform-Visibility': visibility, 'Content-Type': 'image/png' })
      .send(Buffer.from('png-bytes'));
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body.data.key as string;
  };

  describe('GET /public/tenant/{tenantId}/products/{sku}', () => {
    it('shows gross price, stock and public image URLs, with ETag and a short cache lifetime', async () => {
      const open = await upload('mug.png', 'public');
      const hidden = await upload('secret.png', 'private');
      await shop.product({ sku: 'MUG', name: 'Mug', description: 'Blue', priceCents: 1999, physicalStock: 3, imageKeys: [open, hidden] });
      const res = await t.http.get(`${base()}/MUG`);
      expect(res.status).to.equal(200);
      expect(res.body.data).to.deep.equal({
        number: 1, sku: 'MUG', name: 'Mug', description: 'Blue', priceCents: 1999, currency: 'EUR', taxRateBasisPoints: 1900,
        grossPriceCents: 2379, inStock: true, availableStock: 3, imageUrls: [`${t.baseUrl}/api/v1/public/assets/${shop.tenant}/${open.split('/').slice(2).join('/')}`],
      });
      expect(res.headers['cache-control']).to.match(/^public, max-age=[0-5]$/);
      expect(res.headers.etag).to.match(/^"/);
      const image = await t.http.get(new URL(res.body.data.imageUrls[0]).pathname);
      expect(image.status).to.equal(200);
    });

    it('answers 304 for If-None-Match, and shows a stock change on the next request', async () => {
      const p = await shop.product({ sku: 'PEN', priceCents: 150, physicalStock: 1 });
      const first = await t.http.get(`${base()}/PEN`);
      expect(first.body.data).to.include({ grossPriceCents: 179, inStock: true, availableStock: 1 });
      const again = await t.http.get(`${base()}/PEN`).set('If-None-Match', first.headers.etag);
      expect(again.status).to.equal(304);
      // A 304 repeats the validator and cache lifetime, and has no body.
      expect(again.headers).to.include({ etag: first.headers.etag, 'cache-control': 'public, max-age=5' });
      expect(again.headers).to.not.have.property('content-type');
      expect(again.text ?? '').to.equal('');
      expect((await shop.order([{ productId: p.number, quantity: 1, unitPrice: 150 }])).status).to.equal(201);
      const after = await t.http.get(`${base()}/PEN`).set('If-None-Match', first.headers.etag);
      expect(after.status).to.equal(200);
      expect(after.body.data).to.include({ inStock: false, availableStock: 0 });
    });

    it('answers 200 with a new ETag after a price change, and 304 for a product with images whose view is unchanged', async () => {
      const p = await shop.product({ sku: 'CUP', priceCents: 500, physicalStock: 4 });
      const first = await t.http.get(`${base()}/CUP`);
      expect((await t.http.get(`${base()}/CUP`).set('If-None-Match', first.headers.etag)).status).to.equal(304);
      await t.http.patch(`${PRODUCTS}/${p.id}`).set(as(shop.tenant, 'editor')).send({ priceCents: 600 }).expect(200);
      const repriced = await t.http.get(`${base()}/CUP`).set('If-None-Match', first.headers.etag);
      expect(repriced.status).to.equal(200);
      expect(repriced.body.data).to.include({ priceCents: 600, grossPriceCents: 714 });
      expect(repriced.headers.etag).to.not.equal(first.headers.etag);

      const open = await upload('cup.png', 'public');
      await shop.product({ sku: 'PLATE', physicalStock: 2, imageKeys: [open] });
      const pictured = await t.http.get(`${base()}/PLATE`);
      expect(pictured.body.data.imageUrls).to.have.length(1);
      const unchanged = await t.http.get(`${base()}/PLATE`).set('If-None-Match', pictured.headers.etag);
      expect(unchanged.status).to.equal(304);
      expect(unchanged.headers.etag).to.equal(pictured.headers.etag);
    });

    it('answers 404 not_found for an archived or unknown sku, and when the erp module is disabled', async () => {
      const p = await shop.product({ sku: 'OLD' });
      await t.http.patch(`${PRODUCTS}/${p.id}`).set(as(shop.tenant, 'editor')).send({ status: 'archived' }).expect(200);
      expect((await t.http.get(`${base()}/OLD`)).status).to.equal(404);
      expect((await t.http.get(`${base()}/NOPE`)).body.error.code).to.equal('not_found');
      await shop.product({ sku: 'LIVE' });
      expect((await t.http.get(`${base()}/LIVE`)).status).to.equal(200);
      await t.http.patch(`/api/v1/tenants/${shop.tenant}/licensed-modules`).set(superadmin()).send({ appCode: 'erp', isEnabled: false }).expect(200);
      const off = await t.http.get(`${base()}/LIVE`);
      expect(off.status).to.equal(404);
      expect(off.body.error.code).to.equal('not_found');
      expect((await t.http.get(base())).status).to.equal(404);
    });

    it('never shows another tenant\'s product, and 404 tenant_not_found for an unknown tenant', async () => {
      await shop.product({ sku: 'MINE', name: 'Mine' });
      expect((await t.http.get(`${base()}/MINE`)).body.data).to.include({ name: 'Mine' });
      const other = await createTenant(t, 'store');
      expect((await t.http.get(`/api/v1/public/tenant/${other}/products/MINE`)).status).to.equal(404);
      expect((await t.http.get(`/api/v1/public/tenant/${other}/products`)).body.data.items).to.deep.equal([]);
      // The same sku in the other tenant, after this tenant's answer was shown: each tenant sees its own.
      await t.http.post(PRODUCTS).set(superadmin(other)).send({ sku: 'MINE', name: 'Theirs', priceCents: 100 }).expect(201);
      expect((await t.http.get(`/api/v1/public/tenant/${other}/products/MINE`)).body.data).to.include({ name: 'Theirs' });
      expect((await t.http.get(`${base()}/MINE`)).body.data).to.include({ name: 'Mine' });
      expect((await t.http.get('/api/v1/public/tenant/no-such-tenant/products/MINE')).body.error.code).to.equal('tenant_not_found');
    });
  });

  describe('GET /public/tenant/{tenantId}/products', () => {
    it('lists active products only, by number, with ?sku=, ?q= (case-insensitive on name and sku), limit and offset', async () => {
      await shop.product({ sku: 'TEA-GREEN', name: 'Green Tea' });
      await shop.product({ sku: 'COFFEE-1', name: 'Dark Roast' });
      const archived = await shop.product({ sku: 'TEA-OLD', name: 'Old tea' });
      await shop.product({ sku: 'cup-9', name: 'Teacup' });
      await t.http.patch(`${PRODUCTS}/${archived.id}`).set(as(shop.tenant, 'editor')).send({ status: 'archived' }).expect(200);
      const skus = async (query: string) => {
        const res = await t.http.get(`${base()}${query}`);
        expect(res.status, JSON.stringify(res.body)).to.equal(200);
        return res.body.data.items.map((p: Json) => p.sku);
      };
      expect(await skus('')).to.deep.equal(['TEA-GREEN', 'COFFEE-1', 'cup-9']);
      expect(await skus('?q=tea')).to.deep.equal(['TEA-GREEN', 'cup-9']);
      expect(await skus('?q=CUP')).to.deep.equal(['cup-9']);
      expect(await skus('?q=roast')).to.deep.equal(['COFFEE-1']);
      expect(await skus('?q=%25')).to.deep.equal([]);
      expect(await skus('?sku=COFFEE-1')).to.deep.equal(['COFFEE-1']);
      expect(await skus('?sku=TEA-OLD')).to.deep.equal([]);
      expect(await skus('?limit=1&offset=1')).to.deep.equal(['COFFEE-1']);
      const page = await t.http.get(`${base()}?limit=2`);
      expect(page.body.data.pagination).to.include({ limit: 2, offset: 0, total: 3, hasMore: true });
      expect(page.body.data.items[0]).to.have.all.keys('number', 'sku', 'name', 'description', 'priceCents', 'currency', 'taxRateBasisPoints', 'grossPriceCents', 'inStock', 'availableStock', 'imageUrls');
    });
  });
});
