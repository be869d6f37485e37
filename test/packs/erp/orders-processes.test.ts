import { expect } from 'chai';
import { ENGINE } from '../../helpers/engine.js';
import { serviceProcessesOnOneDatabase, type ServiceProcess } from '../../helpers/service-process.js';
import { uniqueTenantId } from '../../helpers/test-app.js';
import { superadmin } from '../../helpers/tokens.js';

/** Two service processes on one database (on SQLite: one file, each with its own connection and write lock). */
describe(`ERP orders and storefront from two processes on one database (${ENGINE})`, function () {
  this.timeout(120_000);
  const { services } = serviceProcessesOnOneDatabase(2);

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

  it('GET /public/tenant/{tenantId}/products/{sku} in one process shows what the other one wrote on its next request', async () => {
    const [writer, shop] = services;
    const tenant = uniqueTenantId('procs');
    await writer.http.post('/api/v1/admin/tenants').set(superadmin()).send({ id: tenant, name: 'Shop window' }).expect(201);
    const product = (await writer.http.post('/api/v1/erp/products').set(superadmin(tenant))
      .send({ sku: 'SHOWN', name: 'Lamp', priceCents: 1000, physicalStock: 5 }).expect(201)).body.data;
    const page = `/api/v1/public/tenant/${tenant}/products/SHOWN`;
    const show = async (etag?: string) => {
      const res = await shop.http.get(page).set(etag ? { 'If-None-Match': etag } : {});
      expect(res.status, JSON.stringify(res.body)).to.be.oneOf([200, 304, 404]);
      return res;
    };
    const first = await show();
    expect(first.body.data).to.include({ name: 'Lamp', availableStock: 5, grossPriceCents: 1190 });
    expect((await show()).body).to.deep.equal(first.body);
    expect((await show(first.headers.etag)).status).to.equal(304);

    // An order taken by the other process: the stock on the next request, a new ETag.
    await writer.http.post('/api/v1/erp/orders').set(superadmin(tenant))
      .send({ clientId: 1, paymentMethod: 'bank_transfer', items: [{ productId: product.number, quantity: 2, unitPrice: 1000 }] }).expect(201);
    const sold = await show(first.headers.etag);
    expect(sold.status).to.equal(200);
    expect(sold.body.data).to.include({ availableStock: 3 });
    expect(sold.headers.etag).to.not.equal(first.headers.etag);

    // A rename, an archive (404) and its undoing.
    await writer.http.patch(`/api/v1/erp/products/${product.id}`).set(superadmin(tenant)).send({ name: 'Desk lamp' }).expect(200);
    expect((await show()).body.data).to.include({ name: 'Desk lamp', availableStock: 3 });
    await writer.http.patch(`/api/v1/erp/products/${product.id}`).set(superadmin(tenant)).send({ status: 'archived' }).expect(200);
    expect((await show()).status).to.equal(404);
    await writer.http.patch(`/api/v1/erp/products/${product.id}`).set(superadmin(tenant)).send({ status: 'active', priceCents: 2000 }).expect(200);
    expect((await show()).body.data).to.include({ name: 'Desk lamp', priceCents: 2000, grossPriceCents: 2380 });

    // Deleted and made again with the same sku: the new product, never the one rendered before.
    await writer.http.delete(`/api/v1/data/erp/product/${product.id}`).set(superadmin(tenant)).expect(200);
    expect((await show()).status).to.equal(404);
    await writer.http.post('/api/v1/erp/products').set(superadmin(tenant)).send({ sku: 'SHOWN', name: 'Floor lamp', priceCents: 1000, physicalStock: 1 }).expect(201);
    expect((await show()).body.data).to.include({ name: 'Floor lamp', number: 2, availableStock: 1, grossPriceCents: 1190 });
  });
});
