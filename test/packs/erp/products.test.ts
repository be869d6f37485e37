import { expect } from 'chai';
import { createTenant, sharedTestApp, type TestApp } from '../../helpers/test-app.js';
import { as, superadmin } from '../../helpers/tokens.js';
import { PRODUCTS, Shop } from './shop.js';

const DATA = '/api/v1/data/erp/product';

describe('ERP products and the stock ledger', () => {
  let t: TestApp;
  let tenant: string;
  let shop: Shop;

  before(async () => {
    t = await sharedTestApp();
  });

  beforeEach(async () => {
    tenant = await createTenant(t, 'prod');
    shop = new Shop(t, tenant);
  });

  describe('POST /api/v1/erp/products', () => {
    it('creates a product with defaults, number 1, and its initial stock as the first movement', async () => {
      const p = await shop.product({ sku: 'MUG-1', physicalStock: 12 });
      expect(p).to.include({ number: 1, sku: 'MUG-1', currency: 'EUR', taxRateBasisPoints: 1900, status: 'active', physicalStock: 12, version: 1 });
      const movements = await shop.movements(p.id);
      expect(movements).to.have.length(1);
      expect(movements[0]).to.include({ delta: 12, reason: 'initial', stockAfter: 12, orderId: null });
    });

    it('numbers products per tenant from 1 and never reuses a number of a deleted product', async () => {
      const a = await shop.product();
      const b = await shop.product();
      expect([a.number, b.number]).to.deep.equal([1, 2]);
      await t.http.delete(`${DATA}/${b.id}`).set(as(tenant, 'editor')).expect(200);
      const c = await shop.product();
      expect(c.number).to.equal(3);
      const other = new Shop(t, await createTenant(t, 'prod'));
      expect((await other.product()).number).to.equal(1);
    });

    it('writes no movement for a product created without stock', async () => {
      const p = await shop.product({ physicalStock: 0 });
      expect(await shop.movements(p.id)).to.deep.equal([]);
    });

    it('answers 409 conflict for a sku the tenant has already, but not for another tenant', async () => {
      await shop.product({ sku: 'DUP' });
      const res = await t.http.post(PRODUCTS).set(as(tenant, 'editor')).send({ sku: 'DUP', name: 'x', priceCents: 1 });
      expect(res.status).to.equal(409);
      expect(res.body.error.code).to.equal('conflict');
      await new Shop(t, await createTenant(t, 'prod')).product({ sku: 'DUP' });
    });

    it('answers 400 validation_failed for a float or string price, a bad sku, a tax rate over 10000 and a client-set number', async () => {
      for (const body of [
        { sku: 'A', name: 'x', priceCents: 19.99 },
        { sku: 'A', name: 'x', priceCents: '1999' },
        { sku: '-bad', name: 'x', priceCents: 1 },
        { sku: 'A', name: 'x', priceCents: 1, taxRateBasisPoints: 10001 },
        { sku: 'A', name: 'x', priceCents: 1, number: 5 },
        { sku: 'A', name: 'x', priceCents: 1, physicalStock: -1 },
      ]) {
        const res = await t.http.post(PRODUCTS).set(as(tenant, 'editor')).send(body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(res.body.error.code).to.equal('validation_failed');
      }
    });

    it('answers 403 to a viewer', async () => {
      const res = await t.http.post(PRODUCTS).set(as(tenant, 'viewer')).send({ sku: 'A', name: 'x', priceCents: 1 });
      expect(res.status).to.equal(403);
    });
  });

  describe('GET/PATCH /api/v1/erp/products/{id}', () => {
    it('reads a product by UUID and by number, with an ETag', async () => {
      const p = await shop.product();
      const byNumber = await t.http.get(`${PRODUCTS}/${p.number}`).set(as(tenant, 'viewer'));
      expect(byNumber.status).to.equal(200);
      expect(byNumber.headers.etag).to.equal('"1"');
      expect(byNumber.body.data.id).to.equal(p.id);
      expect((await shop.get(p.id)).number).to.equal(p.number);
      await t.http.get(`${PRODUCTS}/999`).set(as(tenant, 'viewer')).expect(404);
      await t.http.get(`${PRODUCTS}/not-a-ref`).set(as(tenant, 'viewer')).expect(404);
    });

    it('lists products with the data API query language', async () => {
      await shop.product({ sku: 'CHEAP', priceCents: 100 });
      await shop.product({ sku: 'DEAR', priceCents: 100000 });
      const res = await t.http.get(`${PRODUCTS}?filter[priceCents][gt]=500&sort=-priceCents`).set(as(tenant, 'viewer'));
      expect(res.status).to.equal(200);
      expect(res.body.data.items.map((p: { sku: string }) => p.sku)).to.deep.equal(['DEAR']);
      expect(res.body.data.pagination).to.include({ total: 1 });
    });

    it('lets an editor change the price but not the stock (403), and an admin change the stock as a patch movement', async () => {
      const p = await shop.product({ physicalStock: 5 });
      const price = await t.http.patch(`${PRODUCTS}/${p.number}`).set(as(tenant, 'editor')).send({ priceCents: 2500 });
      expect(price.status, JSON.stringify(price.body)).to.equal(200);
      expect(price.body.data).to.include({ priceCents: 2500, version: 2 });
      const denied = await t.http.patch(`${PRODUCTS}/${p.id}`).set(as(tenant, 'editor')).send({ physicalStock: 9 });
      expect(denied.status).to.equal(403);
      expect(denied.body.error.code).to.equal('forbidden');
      const viaData = await t.http.patch(`${DATA}/${p.id}`).set(as(tenant, 'editor')).send({ physicalStock: 9 });
      expect(viaData.status).to.equal(403);
      const ok = await t.http.patch(`${PRODUCTS}/${p.id}`).set(as(tenant, 'admin')).send({ physicalStock: 9 });
      expect(ok.status).to.equal(200);
      const movements = await shop.movements(p.id);
      expect(movements.map((m) => [m.reason, m.delta, m.stockAfter])).to.deep.equal([['initial', 5, 5], ['patch', 4, 9]]);
      expect(await shop.expectLedgerConsistent(p.id)).to.equal(9);
    });

    it('removes a field patched to null (merge patch)', async () => {
      const p = await shop.product({ description: 'Blue' });
      const res = await t.http.patch(`${PRODUCTS}/${p.id}`).set(as(tenant, 'editor')).send({ description: null });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.data).to.not.have.property('description');
    });

    it('refuses a change of number (400) and honours If-Match (412)', async () => {
      const p = await shop.product();
      const res = await t.http.patch(`${PRODUCTS}/${p.id}`).set(as(tenant, 'editor')).send({ number: 77 });
      expect(res.status).to.equal(400);
      const stale = await t.http.patch(`${PRODUCTS}/${p.id}`).set(as(tenant, 'editor')).set('If-Match', '"9"').send({ name: 'x' });
      expect(stale.status).to.equal(412);
    });

    it('keeps the rules on /data/erp/product: number assigned, initial movement', async () => {
      const res = await t.http.post(DATA).set(as(tenant, 'editor')).send({ sku: 'VIA-DATA', name: 'Via data', priceCents: 10, physicalStock: 3 });
      expect(res.status).to.equal(201);
      expect(res.body.data.item).to.include({ number: 1, physicalStock: 3 });
      const refused = await t.http.post(DATA).set(as(tenant, 'editor')).send({ sku: 'VIA-DATA-2', name: 'x', priceCents: 10, number: 9 });
      expect(refused.status).to.equal(400);
      expect(await shop.expectLedgerConsistent(res.body.data.item.id)).to.equal(3);
    });
  });

  describe('POST /api/v1/erp/products/{id}/stock-adjustments', () => {
    it('adjusts the stock (admin) with one movement and answers { product, movement }', async () => {
      const p = await shop.product({ physicalStock: 4 });
      const res = await t.http.post(`${PRODUCTS}/${p.number}/stock-adjustments`).set(as(tenant, 'admin')).send({ delta: 6, reason: 'restock', note: 'pallet 7' });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      expect(res.body.data.product).to.include({ physicalStock: 10, version: 2 });
      expect(res.body.data.movement).to.include({ delta: 6, reason: 'restock', note: 'pallet 7', stockAfter: 10 });
      const down = await t.http.post(`${PRODUCTS}/${p.id}/stock-adjustments`).set(as(tenant, 'admin')).send({ delta: -3, reason: 'damage' });
      expect(down.body.data.product.physicalStock).to.equal(7);
      expect(await shop.expectLedgerConsistent(p.id)).to.equal(7);
      // Each adjustment is an administration entry of the audit log (CONTRACT 16.4), by number or by id alike.
      const audit = await t.http.get(`/api/v1/tenants/${tenant}/audit-log?action=stock.adjusted&target=erp.product/${p.id}`).set(as(tenant, 'admin'));
      expect(audit.body.data.items).to.have.length(2);
    });

    it('answers 409 insufficient_stock below 0 and writes nothing', async () => {
      const p = await shop.product({ physicalStock: 2 });
      const res = await t.http.post(`${PRODUCTS}/${p.id}/stock-adjustments`).set(as(tenant, 'admin')).send({ delta: -3, reason: 'correction' });
      expect(res.status).to.equal(409);
      expect(res.body.error.code).to.equal('insufficient_stock');
      expect(res.body.error.details[0]).to.include({ sku: p.sku, available: 2 });
      expect((await shop.get(p.id))).to.include({ physicalStock: 2, version: 1 });
      expect(await shop.movements(p.id)).to.have.length(1);
      const audit = await t.http.get(`/api/v1/tenants/${tenant}/audit-log?action=stock.adjusted`).set(as(tenant, 'admin'));
      expect(audit.body.data.items).to.have.length(0);
    });

    it('answers 403 to an editor, 400 for a zero delta or an unknown reason, 404 for an unknown product', async () => {
      const p = await shop.product();
      expect((await t.http.post(`${PRODUCTS}/${p.id}/stock-adjustments`).set(as(tenant, 'editor')).send({ delta: 1, reason: 'restock' })).status).to.equal(403);
      expect((await t.http.post(`${PRODUCTS}/${p.id}/stock-adjustments`).set(as(tenant, 'admin')).send({ delta: 0, reason: 'restock' })).status).to.equal(400);
      expect((await t.http.post(`${PRODUCTS}/${p.id}/stock-adjustments`).set(as(tenant, 'admin')).send({ delta: 1, reason: 'order' })).status).to.equal(400);
      expect((await t.http.post(`${PRODUCTS}/4242/stock-adjustments`).set(as(tenant, 'admin')).send({ delta: 1, reason: 'restock' })).status).to.equal(404);
    });
  });

  describe('tenant isolation', () => {
    it('never shows or changes another tenant\'s product', async () => {
      const p = await shop.product();
      const other = await createTenant(t, 'prod');
      expect((await t.http.get(`${PRODUCTS}/${p.id}`).set(as(other, 'admin'))).status).to.equal(404);
      expect((await t.http.get(`${PRODUCTS}/${p.number}`).set(as(other, 'admin'))).status).to.equal(404);
      expect((await t.http.patch(`${PRODUCTS}/${p.id}`).set(as(other, 'admin')).send({ name: 'x' })).status).to.equal(404);
      expect((await t.http.post(`${PRODUCTS}/${p.id}/stock-adjustments`).set(as(other, 'admin')).send({ delta: 1, reason: 'restock' })).status).to.equal(404);
      expect((await t.http.get(PRODUCTS).set(as(other, 'admin'))).body.data.items).to.deep.equal([]);
    });
  });

  it('answers 403 module_disabled when the tenant\'s erp module is off', async () => {
    await t.http.patch(`/api/v1/tenants/${tenant}/licensed-modules`).set(superadmin()).send({ appCode: 'erp', isEnabled: false }).expect(200);
    expect((await t.http.get(PRODUCTS).set(as(tenant, 'admin'))).status).to.equal(403);
  });
});
