import { expect } from 'chai';
import { packs as defaultPacks } from '../../config/packs.js';
import { defineError, definePack } from '../../core/pack-api.js';
import { createTenant, startTestApp, type TestApp } from '../helpers/test-app.js';
import { as } from '../helpers/tokens.js';

/** A pack's own error with its status, as a pack author declares it. */
const OutOfStock = defineError('out_of_stock', 409, (sku: string) => `Not enough stock of ${sku}`);

/** An inventory pack as a new pack author writes it: an atomic stock adjustment and a lookup by SKU. */
const inventory = definePack({
  name: 'inventory',
  namespaces: [{ name: 'inventory', open: true }],
  routes(router, pack) {
    router.post('/inventory/items/:id/adjust', {
      summary: 'Adjust the stock of an item atomically', tags: ['inventory'], auth: 'tenant', role: 'editor',
      body: { type: 'object', required: ['delta'], additionalProperties: false, properties: { delta: { type: 'integer' } } },
      errors: ['not_found', OutOfStock],
    }, (ctx) => {
      const { delta } = ctx.state.body;
      return pack.records.modify(ctx.state.rc, 'inventory', 'item', ctx.params.id, (current) => {
        const stock = Number(current.stock) + delta;
        if (stock < 0) throw OutOfStock(String(current.sku));
        return { stock };
      });
    });
    router.get('/inventory/items/by-sku/:sku', {
      summary: 'An item by its SKU', tags: ['inventory'], auth: 'tenant', errors: ['not_found'],
    }, async (ctx) => (await pack.records.findOne(ctx.state.rc, 'inventory', 'item', { sku: ctx.params.sku })) ?? { found: false });
  },
});

describe('records.modify and records.findOne (a pack author\'s inventory)', function () {
  this.timeout(60_000);
  let t: TestApp;
  let tenant: string;

  before(async () => {
    t = await startTestApp({ packs: [...defaultPacks, inventory] });
    tenant = await createTenant(t, 'inv');
    const registered = await t.http.post('/api/v1/metadata/schemas').set(as(tenant, 'admin')).send({
      namespace: 'inventory', name: 'item', unique: [['sku']],
      schema: { type: 'object', required: ['sku', 'stock'], properties: { sku: { type: 'string' }, stock: { type: 'integer', minimum: 0 } } },
    });
    expect(registered.status, JSON.stringify(registered.body)).to.equal(201);
  });
  after(() => t?.close());

  const createItem = async (sku: string, stock: number) => {
    const res = await t.http.post('/api/v1/data/inventory/item').set(as(tenant, 'editor')).send({ sku, stock });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body.data.item as { id: string; version: number };
  };
  const adjust = (id: string, delta: number) => t.http.post(`/api/v1/inventory/items/${id}/adjust`).set(as(tenant, 'editor')).send({ delta });
  const stockOf = async (id: string) => (await t.http.get(`/api/v1/data/inventory/item/${id}`).set(as(tenant, 'viewer'))).body.data.item;

  it('50 concurrent adjustments all succeed, none lost, none answered 409 or 412', async () => {
    const item = await createItem('A-1', 100);
    const answers = await Promise.all(Array.from({ length: 50 }, () => adjust(item.id, -1)));
    expect(answers.map((r) => r.status)).to.deep.equal(Array(50).fill(200));
    const stored = await stockOf(item.id);
    expect(stored.stock).to.equal(50);
    expect(stored.version).to.equal(item.version + 50);
  });

  it('refuses the adjustments that would go below zero with the pack\'s own error, and only those', async () => {
    const item = await createItem('B-2', 30);
    const answers = await Promise.all(Array.from({ length: 50 }, () => adjust(item.id, -1)));
    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).to.have.length(30);
    expect(statuses.filter((s) => s === 409)).to.have.length(20);
    const refused = answers.find((r) => r.status === 409)!;
    expect(refused.body.error).to.include({ code: 'out_of_stock' });
    expect(refused.body.message).to.include('Not enough stock of B-2');
    expect((await stockOf(item.id)).stock).to.equal(0);
  });

  it('answers 404 for an unknown record', async () => {
    const res = await adjust('0190a1b2-0000-7000-8000-000000000000', 1);
    expect(res.status).to.equal(404);
  });

  it('finds a record by a field', async () => {
    const item = await createItem('C-3', 7);
    const found = await t.http.get('/api/v1/inventory/items/by-sku/C-3').set(as(tenant, 'viewer'));
    expect(found.body.data).to.include({ id: item.id, sku: 'C-3', stock: 7 });
    const missing = await t.http.get('/api/v1/inventory/items/by-sku/NOPE').set(as(tenant, 'viewer'));
    expect(missing.body.data).to.deep.equal({ found: false });
  });
});
