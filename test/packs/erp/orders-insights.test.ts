import { expect } from 'chai';
import { systemContext } from '../../../core/pack-api.js';
import { backfillCoPurchases } from '../../../packs/erp/migrations/0510-erp-co-purchases.js';
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

  it('ranks a cart of several products by the orders holding one of them, each order counted once (CONTRACT 11.4)', async () => {
    const [a, b, p, q, r] = await Promise.all(['A', 'B', 'P', 'Q', 'R'].map((sku) => shop.product({ sku })));
    const line = (x: Json) => ({ productId: x.number, quantity: 1, unitPrice: 1999 });
    // P is in one order with both of the cart's products; Q in two orders, each with one of them. Summing the
    // pairs would give both 2 (and P first by sku); the orders are 1 and 2.
    await shop.order([line(a), line(b), line(p)], { customerRef: 'ann' });
    await shop.order([line(a), line(q)], { customerRef: 'bob' });
    await shop.order([line(b), line(q)], { customerRef: 'cy' });
    // R: two orders with both cart products, one of them cancelled (counts once).
    await shop.order([line(a), line(b), line(r)], { customerRef: 'dee' });
    const cancelled = (await shop.order([line(a), line(b), line(r)], { customerRef: 'eve' })).body.data;
    await t.http.patch(`${ORDERS}/${cancelled.id}`).set(as(shop.tenant, 'editor')).send({ status: 'cancelled' }).expect(200);

    const recommend = await orders().recommender(systemContext(shop.tenant));
    const ranked = await recommend([{ key: 'both', skus: ['A', 'B'] }, { key: 'one', skus: ['A'] }], 3);
    expect(ranked.get('both')!.map((x) => [x.sku, x.reason])).to.deep.equal([['Q', 'bought_together'], ['P', 'bought_together'], ['R', 'bought_together']]);
    // A alone: B is in 2 orders with it, P, Q and R in 1.
    expect(ranked.get('one')!.map((x) => x.sku)).to.deep.equal(['B', 'P', 'Q']);
  });

  describe('the co-purchase table (erp_co_purchases)', () => {
    const pairs = async (tenant?: string) => {
      const q = t.app.kernel.db.knex('erp_co_purchases').where('orders', '>', 0).select('tenant_id', 'product_id', 'other_id', 'orders')
        .orderBy(['tenant_id', 'product_id', 'other_id']);
      return (tenant ? q.where({ tenant_id: tenant }) : q).then((rows) => rows.map((r) => ({ ...r, orders: Number(r.orders) })));
    };

    it('counts every pair of 20 concurrent orders of the same products once each (no update lost)', async () => {
      const [a, b] = [await shop.product({ sku: 'A', physicalStock: 100 }), await shop.product({ sku: 'B', physicalStock: 100 })];
      const line = (p: Json) => ({ productId: p.number, quantity: 1, unitPrice: 1999 });
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => shop.order(i % 2 ? [line(a), line(b)] : [line(b), line(a)], { customerRef: `c${i}` })));
      expect(results.map((r) => r.status)).to.deep.equal(Array(20).fill(201));
      const rc = systemContext(shop.tenant);
      expect(await orders().coPurchases(rc, 'A')).to.deep.equal([{ sku: 'B', orders: 20 }]);
      expect(await orders().coPurchases(rc, 'B')).to.deep.equal([{ sku: 'A', orders: 20 }]);
      // Each product with itself: the orders holding it.
      const [ida, idb] = [a.id, b.id];
      expect((await pairs(shop.tenant)).map((r) => [r.product_id, r.other_id, r.orders])).to.have.deep.members([
        [ida, ida, 20], [ida, idb, 20], [idb, ida, 20], [idb, idb, 20],
      ]);
    });

    it('counts the 10,000 pairs of an order of 100 products (more than one statement holds)', async () => {
      const products: Json[] = [];
      for (let i = 0; i < 100; i += 20) products.push(...await Promise.all(Array.from({ length: 20 }, () => shop.product({ physicalStock: 1 }))));
      const res = await shop.order(products.map((p) => ({ productId: p.number, quantity: 1, unitPrice: 1999 })), { customerRef: 'big' });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      const counted = await pairs(shop.tenant);
      expect(counted).to.have.length(10_000);
      expect(counted.every((r) => r.orders === 1)).to.equal(true);
    });

    it('is what the migration\'s backfill makes from the stock ledger (cancelled orders left out)', async () => {
      const [a, b, c] = [await shop.product({ sku: 'A' }), await shop.product({ sku: 'B' }), await shop.product({ sku: 'C' })];
      const line = (p: Json) => ({ productId: p.number, quantity: 1, unitPrice: 1999 });
      await shop.order([line(a), line(b), line(c)], { customerRef: 'ann' }).expect(201);
      await shop.order([line(a), line(b)], { customerRef: 'bob' }).expect(201);
      const cancelled = (await shop.order([line(b), line(c)], { customerRef: 'cat' }).expect(201)).body.data;
      await t.http.patch(`${ORDERS}/${cancelled.id}`).set(as(shop.tenant, 'editor')).send({ status: 'cancelled' }).expect(200);
      const kept = await pairs();
      expect((await pairs(shop.tenant)).find((r) => r.product_id === b.id && r.other_id === c.id)?.orders).to.equal(1);

      await t.app.kernel.db.knex('erp_co_purchases').delete();
      await backfillCoPurchases(t.app.kernel.db.knex);
      expect(await pairs()).to.deep.equal(kept);
    });
  });
});
