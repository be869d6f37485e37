import { expect } from 'chai';
import { createTestDatabase, ENGINE, type TestDatabase } from '../../helpers/engine.js';
import { startServiceProcess, type ServiceProcess } from '../../helpers/service-process.js';
import { uniqueTenantId } from '../../helpers/test-app.js';
import { superadmin } from '../../helpers/tokens.js';

/** Two service processes on one database (on SQLite: one file, each with its own connection and write lock). */
describe(`ERP orders from two processes on one database (${ENGINE})`, function () {
  this.timeout(120_000);
  let database: TestDatabase;
  const services: ServiceProcess[] = [];

  before(async () => {
    database = await createTestDatabase();
    // The first one migrates; then the second one starts.
    services.push(await startServiceProcess(database.url));
    services.push(await startServiceProcess(database.url));
  });

  after(async () => {
    for (const s of services.splice(0)) {
      s.kill('SIGTERM');
      await s.exited;
    }
    await database.drop();
  });

  it('POST /api/v1/erp/orders: 40 orders split across two processes for 5 units sell exactly 5, and the ledger holds', async () => {
    const [a, b] = services;
    const tenant = uniqueTenantId('procs');
    await a.http.post('/api/v1/admin/tenants').set(superadmin()).send({ id: tenant, name: 'Two processes' }).expect(201);
    const product = (await a.http.post('/api/v1/erp/products').set(superadmin(tenant)).send({ sku: 'LAST-5', name: 'Scarce', priceCents: 999, physicalStock: 5 })).body.data;
    const order = (s: ServiceProcess) => s.http.post('/api/v1/erp/orders').set(superadmin(tenant))
      .send({ clientId: 1, paymentMethod: 'bank_transfer', items: [{ productId: product.number, quantity: 1, unitPrice: 999 }] });
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => order(i % 2 ? a : b)));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 201), JSON.stringify(results.filter((r) => r.status >= 500).map((r) => r.body))).to.have.length(5);
    expect(statuses.filter((s) => s === 409)).to.have.length(35);
    const stored = (await b.http.get(`/api/v1/erp/products/${product.id}`).set(superadmin(tenant))).body.data;
    expect(stored.physicalStock).to.equal(0);
    const ledger = (await b.http.get(`/api/v1/erp/products/${product.id}/stock-movements`).set(superadmin(tenant))).body.data.items as Array<{ delta: number }>;
    expect(ledger.reduce((sum, m) => sum + m.delta, 0)).to.equal(0);
    expect(ledger).to.have.length(6);
    const numbers = results.filter((r) => r.status === 201).map((r) => r.body.data.number).sort();
    expect(numbers).to.deep.equal([1, 2, 3, 4, 5]);
  });
});
