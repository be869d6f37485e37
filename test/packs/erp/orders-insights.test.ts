import { expect } from 'chai';
import { systemContext } from '../../../core/pack-api.js';
import { createTenant, sharedTestApp, type TestApp } from '../../helpers/test-app.js';
import { as } from '../../helpers/tokens.js';
import { ORDERS, Shop, type Json } from './shop.js';

/** erp.orders as the CRM pack reads it (the service the ERP pack provides), over orders placed through HTTP. */
describe('erp.orders: last order, best sellers, co-purchases', () => {
  let t: TestApp;
  let shop: Shop;

  before(async () => {
    t = await sharedTestApp();
  });

  beforeEach(async () => {
    shop = new Shop(t, await createTenant(t, 'ins'));
  });

  const orders = () => t.app.packs.find((p) => p.definition.name === 'erp')!.context.use('erp.orders');

  it('counts non-cancelled orders only', async () => {
    const [a, b, c] = [await shop.product({ sku: 'A' }), await shop.product({ sku: 'B' }), await shop.product({ sku: 'C' })];
    const line = (p: Json, quantity = 1) => ({ productId: p.number, quantity, unitPrice: 1999 });
    const first = (await shop.order([line(a, 2), line(b)], { customerRef: 'ann' })).body.data;
    await shop.order([line(a), line(b)], { customerRef: 'bob' });
    const cancelled = (await shop.order([line(a), line(c, 5)], { customerRef: 'ann' })).body.data;
    await t.http.patch(`${ORDERS}/${cancelled.id}`).set(as(shop.tenant, 'editor')).send({ status: 'cancelled' }).expect(200);

    const rc = systemContext(shop.tenant);
    expect(await orders().lastOrderAt(rc, 'ann')).to.equal(first.createdAt);
    expect(await orders().lastOrderAt(rc, 'nobody')).to.equal(null);
    expect(await orders().bestSellers(rc)).to.deep.equal([{ sku: 'A', quantity: 3 }, { sku: 'B', quantity: 2 }]);
    expect(await orders().coPurchases(rc, 'A')).to.deep.equal([{ sku: 'B', orders: 2 }]);
    expect(await orders().coPurchases(rc, 'C')).to.deep.equal([]);
  });
});
