import { expect } from 'chai';
import { createTenant, sharedTestApp, type TestApp } from '../helpers/test-app.js';
import { as, superadmin } from '../helpers/tokens.js';

const productSchema = {
  namespace: 'shop',
  name: 'product',
  schema: {
    type: 'object',
    required: ['sku', 'title'],
    additionalProperties: false,
    properties: {
      sku: { type: 'string' },
      title: { type: 'string' },
      price: { type: 'integer', minimum: 0 },
      active: { type: 'boolean' },
    },
  },
  indexes: [['price']],
  unique: [['sku']],
};

describe('universal data API', () => {
  let t: TestApp;
  let tenant: string;

  before(async () => {
    t = await sharedTestApp();
  });

  beforeEach(async () => {
    tenant = await createTenant(t, 'data');
    const res = await t.http.post('/api/v1/metadata/schemas').set(as(tenant, 'admin')).send(productSchema);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
  });

  describe('POST /api/v1/data/:ns/:schema', () => {
    it('creates a record with server-managed fields and an ETag', async () => {
      const res = await t.http.post('/api/v1/data/shop/product').set(as(tenant, 'editor')).send({ sku: 'A-1', title: 'Lamp', price: 1200 });
      expect(res.status).to.equal(201);
      expect(res.headers.etag).to.equal('"1"');
      const item = res.body.data.item;
      expect(res.body.status).to.equal('success');
      expect(item).to.include({ sku: 'A-1', title: 'Lamp', price: 1200, version: 1 });
      expect(item.id).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-/);
      expect(item.createdAt).to.equal(item.updatedAt);
    });

    it('answers 400 validation_failed naming each failing path', async () => {
      const res = await t.http.post('/api/v1/data/shop/product').set(as(tenant, 'editor')).send({ sku: 5, price: -1 });
      expect(res.status).to.equal(400);
      expect(res.body.status).to.equal('fail');
      expect(res.body.data.code).to.equal('validation_failed');
      const paths = res.body.data.errors.map((e: { path: string }) => e.path);
      expect(paths).to.include.members(['/sku', '/title', '/price']);
    });

    it('answers 409 conflict for a duplicate unique value', async () => {
      await t.http.post('/api/v1/data/shop/product').set(as(tenant, 'editor')).send({ sku: 'dup', title: 'One' }).expect(201);
      const res = await t.http.post('/api/v1/data/shop/product').set(as(tenant, 'editor')).send({ sku: 'dup', title: 'Two' });
      expect(res.status).to.equal(409);
      expect(res.body.data.code).to.equal('conflict');
    });

    it('answers 404 schema_not_found for an unregistered schema', async () => {
      const res = await t.http.post('/api/v1/data/shop/nothing').set(as(tenant, 'editor')).send({});
      expect(res.status).to.equal(404);
      expect(res.body.data.code).to.equal('schema_not_found');
    });

    it('answers 403 forbidden to a viewer', async () => {
      const res = await t.http.post('/api/v1/data/shop/product').set(as(tenant, 'viewer')).send({ sku: 'v', title: 'V' });
      expect(res.status).to.equal(403);
      expect(res.body.data.code).to.equal('forbidden');
    });
  });

  describe('GET /api/v1/data/:ns/:schema', () => {
    it('filters by typed values and pages with a cursor', async () => {
      for (let i = 0; i < 5; i++) {
        await t.http.post('/api/v1/data/shop/product').set(superadmin(tenant)).send({ sku: `s${i}`, title: `P${i}`, price: i * 100, active: i % 2 === 0 }).expect(201);
      }
      const filtered = await t.http.get('/api/v1/data/shop/product').query({ 'filter[active]': 'true', 'filter[price][gte]': '100' }).set(as(tenant, 'viewer'));
      expect(filtered.status).to.equal(200);
      expect(filtered.body.data.items.map((i: { sku: string }) => i.sku).sort()).to.deep.equal(['s2', 's4']);
      expect(filtered.body.data.pagination.total).to.equal(2);

      const first = await t.http.get('/api/v1/data/shop/product').query({ limit: 3, sort: 'price' }).set(as(tenant, 'viewer'));
      expect(first.body.data.items.map((i: { sku: string }) => i.sku)).to.deep.equal(['s0', 's1', 's2']);
      expect(first.body.data.pagination).to.include({ hasMore: true, total: 5, limit: 3 });
      const second = await t.http.get('/api/v1/data/shop/product').query({ limit: 3, sort: 'price', cursor: first.body.data.pagination.nextCursor }).set(as(tenant, 'viewer'));
      expect(second.body.data.items.map((i: { sku: string }) => i.sku)).to.deep.equal(['s3', 's4']);
      expect(second.body.data.pagination).to.include({ hasMore: false, nextCursor: null });
    });

    it('never shows another tenant\'s records', async () => {
      await t.http.post('/api/v1/data/shop/product').set(as(tenant, 'editor')).send({ sku: 'mine', title: 'Mine' }).expect(201);
      const other = await createTenant(t, 'other');
      await t.http.post('/api/v1/metadata/schemas').set(as(other, 'admin')).send(productSchema).expect(201);
      const res = await t.http.get('/api/v1/data/shop/product').set(as(other, 'viewer'));
      expect(res.body.data.items).to.deep.equal([]);
    });
  });

  describe('PATCH /api/v1/data/:ns/:schema/:id', () => {
    it('merges, bumps the version and answers 412 on a stale If-Match', async () => {
      const created = await t.http.post('/api/v1/data/shop/product').set(as(tenant, 'editor')).send({ sku: 'p', title: 'Old', price: 5 });
      const id = created.body.data.item.id;
      const patched = await t.http.patch(`/api/v1/data/shop/product/${id}`).set(as(tenant, 'editor')).set('If-Match', '"1"').send({ title: 'New', price: null });
      expect(patched.status).to.equal(200);
      expect(patched.body.data.item).to.include({ title: 'New', version: 2 });
      expect(patched.body.data.item).to.not.have.property('price');
      const stale = await t.http.patch(`/api/v1/data/shop/product/${id}`).set(as(tenant, 'editor')).set('If-Match', '"1"').send({ title: 'Again' });
      expect(stale.status).to.equal(412);
      expect(stale.body.data.code).to.equal('version_mismatch');
    });
  });
});
