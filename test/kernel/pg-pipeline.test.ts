import { expect } from 'chai';
import { createTestDatabase, type TestDatabase } from '../helpers/engine.js';
import { startServiceProcess } from '../helpers/service-process.js';
import { superadmin } from '../helpers/tokens.js';

/**
 * The writes of a transaction go out in one round trip without queuing queries on a busy pg client, which pg
 * 8 warns about and pg 9 refuses ("Calling client.query() when the client is already executing a query").
 */
describe('a transaction\'s writes on one connection (#34)', function () {
  this.timeout(90_000);
  let database: TestDatabase;

  before(async () => {
    database = await createTestDatabase();
  });
  after(() => database?.drop());

  it('records, bulk writes and orders are written without pg\'s warning about queued queries', async () => {
    const service = await startServiceProcess(database.url, { NODE_OPTIONS: '--trace-deprecation' });
    try {
      const tenant = `pipe-${Date.now().toString(36)}`;
      await service.http.post('/api/v1/admin/tenants').set(superadmin()).send({ id: tenant, name: 'Pipelines' }).expect(201);
      const as = superadmin(tenant);
      await service.http.post('/api/v1/metadata/schemas').set(as).send({
        namespace: 'shop', name: 'item', unique: [['sku']], schema: { type: 'object', properties: { sku: { type: 'string' }, n: { type: 'integer' } } },
      }).expect(201);
      // Concurrent single writes (each a record, its outbox event, revision and audit entry) and bulk writes.
      await Promise.all(Array.from({ length: 30 }, (_, n) => service.http.post('/api/v1/data/shop/item').set(as).send({ sku: `s${n}`, n }).expect(201)));
      await service.http.post('/api/v1/data/shop/item/bulk').set(as).send({ items: Array.from({ length: 50 }, (_, n) => ({ sku: `b${n}`, n })) }).expect(201);
      const product = (await service.http.post('/api/v1/erp/products').set(as).send({ sku: 'P', name: 'P', priceCents: 100, physicalStock: 50 }).expect(201)).body.data;
      await Promise.all(Array.from({ length: 5 }, () => service.http.post('/api/v1/erp/orders').set(as)
        .send({ clientId: 1, paymentMethod: 'bank_transfer', items: [{ productId: product.number, quantity: 1, unitPrice: 100 }] }).expect(201)));
      const list = await service.http.get('/api/v1/data/shop/item?limit=1').set(as).expect(200);
      expect(list.body.data.pagination.total).to.equal(80);
    } finally {
      service.kill('SIGTERM');
      await service.exited;
    }
    expect(service.output()).to.not.include('already executing a query');
  });
});
