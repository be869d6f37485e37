import { expect } from 'chai';
import { createTenant, sharedTestApp, type TestApp } from '../../helpers/test-app.js';
import { as } from '../../helpers/tokens.js';
import { ORDERS, Shop, type Json } from '../erp/shop.js';

const RECOVER = '/api/v1/crm/recover-abandoned-carts';
const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000).toISOString();

/** The cart recovery with the ERP pack's orders: the `ordered` rule, recommendations, and coupons redeemed by orders. */
describe('CRM cart recovery with ERP orders', () => {
  let t: TestApp;
  let shop: Shop;

  before(async () => {
    t = await sharedTestApp();
  });

  beforeEach(async () => {
    shop = new Shop(t, await createTenant(t, 'rec'));
  });

  const add = async (customerRef: string, sku: string, quantity = 1, occurredAt?: string) => {
    const res = await t.http.post('/api/v1/crm/events').set(as(shop.tenant, 'editor'))
      .send({ customerRef, eventType: 'cart.item_added', eventData: { sku, quantity }, ...(occurredAt ? { occurredAt } : {}) });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
  };
  const recover = async (body: Json = {}) => {
    const res = await t.http.post(RECOVER).set(as(shop.tenant, 'admin')).send(body);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body.data as { recovered: Json[]; skipped: Json[] };
  };
  const line = (p: Json, quantity = 1) => ({ productId: p.number, quantity, unitPrice: p.priceCents });
  const coupons = async () => (await t.http.get('/api/v1/crm/coupons').set(as(shop.tenant, 'admin'))).body.data.items as Json[];
  /** A recovered cart's coupon for `customerRef`. */
  const couponFor = async (customerRef: string, sku: string) => {
    await add(customerRef, sku, 1, minutesAgo(120));
    const [cart] = (await recover()).recovered.filter((c) => c.customerRef === customerRef);
    return cart.coupon as { code: string; percentOff: number };
  };

  describe('the ordered rule', () => {
    it('skips a cart as ordered when the customer placed an order after its last cart event; a cancelled order does not count', async () => {
      const a = await shop.product({ sku: 'A' });
      await add('ann', 'A', 1, minutesAgo(120));
      await add('bob', 'A', 1, minutesAgo(120));
      await shop.order([line(a)], { customerRef: 'ann' }).expect(201);
      const bobs = (await shop.order([line(a)], { customerRef: 'bob' }).expect(201)).body.data;
      await t.http.patch(`${ORDERS}/${bobs.id}`).set(as(shop.tenant, 'editor')).send({ status: 'cancelled' }).expect(200);
      const result = await recover({ dryRun: true });
      expect(result.skipped).to.deep.equal([{ customerRef: 'ann', reason: 'ordered' }]);
      expect(result.recovered.map((c) => c.customerRef)).to.deep.equal(['bob']);
    });

    it('makes the cart of the events after the last order only', async () => {
      const a = await shop.product({ sku: 'A' });
      await shop.product({ sku: 'B' });
      await add('ann', 'A', 1, minutesAgo(120));
      await shop.order([line(a)], { customerRef: 'ann' }).expect(201);
      await new Promise((r) => setTimeout(r, 20));
      await add('ann', 'B', 2);
      const result = await recover({ dryRun: true, olderThanMinutes: 0 });
      expect(result.recovered.map((c) => c.items)).to.deep.equal([[{ sku: 'B', quantity: 2 }]]);
    });
  });

  describe('recommendations', () => {
    it('ranks products bought together with the cart, fills up with best sellers, breaks ties by sku, and leaves out the cart, archived, sold-out and never-ordered products', async () => {
      const p: Record<string, Json> = {};
      for (const sku of ['A', 'B', 'C', 'D', 'E', 'G', 'H', 'S', 'N']) p[sku] = await shop.product({ sku, name: `Name ${sku}`, physicalStock: 100 });
      const order = (skus: string[]) => shop.order(skus.map((s) => line(p[s])), { customerRef: `buyer-${skus.join('')}` }).expect(201);
      await order(['A', 'B']);
      await order(['A', 'B']);
      await order(['A', 'B', 'H']);
      await order(['A', 'G']);
      await order(['A', 'C']);
      await order(['A', 'S']);
      await order(['D']);
      await order(['D']);
      await order(['E']);
      // H is archived and S sold out after their orders; N is in no order.
      await t.http.patch(`/api/v1/erp/products/${p.H.id}`).set(as(shop.tenant, 'editor')).send({ status: 'archived' }).expect(200);
      await t.http.post(`/api/v1/erp/products/${p.S.id}/stock-adjustments`).set(as(shop.tenant, 'admin')).send({ delta: -99, reason: 'damage' }).expect(201);

      await add('ann', 'A', 1, minutesAgo(120));
      await add('ben', 'N', 1, minutesAgo(120));
      await add('cat', 'A', 1, minutesAgo(120));
      await add('cat', 'B', 1, minutesAgo(120));
      const result = await recover({ dryRun: true });
      const byCustomer = Object.fromEntries(result.recovered.map((c) => [c.customerRef, c.recommendations]));
      // ann: B in 3 orders with A, then C and G in 1 each (sku order).
      expect(byCustomer.ann).to.deep.equal([
        { sku: 'B', name: 'Name B', reason: 'bought_together' },
        { sku: 'C', name: 'Name C', reason: 'bought_together' },
        { sku: 'G', name: 'Name G', reason: 'bought_together' },
      ]);
      // ben: N was never ordered, so nothing is bought with it: the best sellers by orders (A 6, B 3, D 2).
      expect(byCustomer.ben).to.deep.equal([
        { sku: 'A', name: 'Name A', reason: 'best_seller' },
        { sku: 'B', name: 'Name B', reason: 'best_seller' },
        { sku: 'D', name: 'Name D', reason: 'best_seller' },
      ]);
      // cat (A and B): orders holding A or B also hold C, G (1 each); D fills up.
      expect(byCustomer.cat).to.deep.equal([
        { sku: 'C', name: 'Name C', reason: 'bought_together' },
        { sku: 'G', name: 'Name G', reason: 'bought_together' },
        { sku: 'D', name: 'Name D', reason: 'best_seller' },
      ]);
      // The same answer on every run.
      expect((await recover({ dryRun: true })).recovered).to.deep.equal(result.recovered);
    });

    it('does not count cancelled orders', async () => {
      const [a, b, c] = [await shop.product({ sku: 'A' }), await shop.product({ sku: 'B' }), await shop.product({ sku: 'C' })];
      await shop.order([line(a), line(c)], { customerRef: 'x' }).expect(201);
      const cancelled = (await shop.order([line(a), line(b)], { customerRef: 'y' }).expect(201)).body.data;
      await shop.order([line(a), line(b)], { customerRef: 'z' }).expect(201);
      await shop.order([line(c)], { customerRef: 'w' }).expect(201);
      await t.http.patch(`${ORDERS}/${cancelled.id}`).set(as(shop.tenant, 'editor')).send({ status: 'cancelled' }).expect(200);
      await add('ann', 'A', 1, minutesAgo(120));
      const [cart] = (await recover({ dryRun: true })).recovered;
      // B and C are each in one non-cancelled order with A; C is also a best seller, but each product appears once.
      expect(cart.recommendations).to.deep.equal([
        { sku: 'B', name: b.name, reason: 'bought_together' },
        { sku: 'C', name: c.name, reason: 'bought_together' },
      ]);
    });

    it('counts the orders holding a product and one of the cart\'s products, each order once (CONTRACT 11.4)', async () => {
      const p: Record<string, Json> = {};
      for (const sku of ['A', 'B', 'C', 'W', 'Z']) p[sku] = await shop.product({ sku, name: `Name ${sku}`, physicalStock: 100 });
      const order = (skus: string[]) => shop.order(skus.map((s) => line(p[s])), { customerRef: `buyer-${skus.join('')}` }).expect(201);
      await order(['A', 'B', 'C']);
      await order(['A', 'W']);
      await order(['B', 'W']);
      await order(['A', 'Z']);
      await add('cat', 'A', 1, minutesAgo(120));
      await add('cat', 'B', 1, minutesAgo(120));
      const [cart] = (await recover({ dryRun: true })).recovered;
      // W: two orders (one with A, one with B) = 2; C: one order holding A and B = 1, before Z (1) by sku.
      expect(cart.recommendations.map((r: Json) => [r.sku, r.reason])).to.deep.equal([['W', 'bought_together'], ['C', 'bought_together'], ['Z', 'bought_together']]);
    });

    it('keeps tenants apart: another tenant\'s orders of the same skus count for nothing', async () => {
      const other = new Shop(t, await createTenant(t, 'rec-other'));
      const mine = { A: await shop.product({ sku: 'A' }), B: await shop.product({ sku: 'B' }) };
      await shop.product({ sku: 'C' });
      const theirs = { A: await other.product({ sku: 'A' }), C: await other.product({ sku: 'C' }) };
      await shop.order([line(mine.A), line(mine.B)], { customerRef: 'x' }).expect(201);
      for (let i = 0; i < 3; i++) await other.order([line(theirs.A), line(theirs.C)], { customerRef: `y${i}` }).expect(201);
      await add('ann', 'A', 1, minutesAgo(120));
      const res = await t.http.post('/api/v1/crm/events').set(as(other.tenant, 'editor'))
        .send({ customerRef: 'ann', eventType: 'cart.item_added', eventData: { sku: 'A', quantity: 1 }, occurredAt: minutesAgo(120) });
      expect(res.status).to.equal(201);
      const [mineCart] = (await recover({ dryRun: true })).recovered;
      expect(mineCart.recommendations).to.deep.equal([{ sku: 'B', name: mine.B.name, reason: 'bought_together' }]);
      const theirsRes = await t.http.post(RECOVER).set(as(other.tenant, 'admin')).send({ dryRun: true });
      expect(theirsRes.status).to.equal(200);
      expect(theirsRes.body.data.recovered[0].recommendations).to.deep.equal([{ sku: 'C', name: theirs.C.name, reason: 'bought_together' }]);
    });
  });

  describe('coupons redeemed by orders', () => {
    it('takes percentOff off each line\'s net before tax and marks the coupon redeemed by the order', async () => {
      const mug = await shop.product({ sku: 'MUG', priceCents: 1999 });
      const coupon = await couponFor('ann', 'MUG');
      const res = await shop.order([line(mug, 3)], { customerRef: 'ann', couponCode: coupon.code });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      const order = res.body.data;
      // 3 × 1999 = 5997; 10% off = 599.7 → 600; net 5397; 19% tax = 1025.43 → 1025.
      expect(order).to.include({ couponCode: coupon.code, subtotalCents: 5997, discountCents: 600, taxCents: 1025, totalCents: 6422 });
      const [stored] = await coupons();
      expect(stored).to.include({ code: coupon.code, customerRef: 'ann', orderId: order.id });
      expect(stored.redeemedAt).to.be.a('string');
    });

    it('answers 409 coupon_invalid for a redeemed code, another customer\'s, an expired one and an unknown one, and places nothing', async () => {
      const mug = await shop.product({ sku: 'MUG', physicalStock: 50 });
      const anns = await couponFor('ann', 'MUG');
      const bens = await couponFor('ben', 'MUG');
      await shop.order([line(mug)], { customerRef: 'ann', couponCode: anns.code }).expect(201);
      // Expiry: the coupon's expiresAt moved into the past (as time would).
      await t.app.kernel.db.knex('crm_coupons').where({ tenant_id: shop.tenant, code: bens.code }).update({ expires_at: minutesAgo(1) });
      const cases: Array<[Json, RegExp]> = [
        [{ customerRef: 'ann', couponCode: anns.code }, /redeemed/],
        [{ customerRef: 'cat', couponCode: anns.code }, /another customer/],
        [{ customerRef: 'ben', couponCode: bens.code }, /expired/],
        [{ customerRef: 'ann', couponCode: 'ABCDEFGHJKLM' }, /no such coupon/],
        [{ couponCode: anns.code }, /customerRef/],
      ];
      for (const [extra, reason] of cases) {
        const res = await shop.order([line(mug)], extra);
        expect(res.status, JSON.stringify(extra)).to.equal(409);
        expect(res.body.error.code).to.equal('coupon_invalid');
        expect(res.body.message).to.match(reason);
      }
      expect((await shop.get(mug.id)).physicalStock).to.equal(49);
    });

    it('lets exactly one of 20 concurrent orders with one code redeem it', async () => {
      const mug = await shop.product({ sku: 'MUG', physicalStock: 100 });
      const coupon = await couponFor('ann', 'MUG');
      const results = await Promise.all(Array.from({ length: 20 }, () => shop.order([line(mug)], { customerRef: 'ann', couponCode: coupon.code })));
      const statuses = results.map((r) => r.status).sort();
      expect(statuses).to.deep.equal([201, ...Array(19).fill(409)]);
      expect(results.filter((r) => r.status === 409).every((r) => r.body.error.code === 'coupon_invalid')).to.equal(true);
      const winner = results.find((r) => r.status === 201)!.body.data;
      expect((await coupons())[0]).to.include({ orderId: winner.id });
      expect((await shop.get(mug.id)).physicalStock).to.equal(99);
      await shop.expectLedgerConsistent(mug.id);
    });

    it('leaves the coupon unredeemed when the order fails for another reason (one transaction)', async () => {
      const mug = await shop.product({ sku: 'MUG', physicalStock: 1 });
      const coupon = await couponFor('ann', 'MUG');
      const res = await shop.order([line(mug, 2)], { customerRef: 'ann', couponCode: coupon.code });
      expect(res.status).to.equal(409);
      expect(res.body.error.code).to.equal('insufficient_stock');
      expect((await coupons())[0]).to.include({ redeemedAt: null, orderId: null });
      await shop.order([line(mug)], { customerRef: 'ann', couponCode: coupon.code }).expect(201);
    });
  });
});
