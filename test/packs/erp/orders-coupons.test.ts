import { expect } from 'chai';
import { packs } from '../../../config/packs.js';
import { CouponInvalid, definePack, type RequestContext } from '../../../core/pack-api.js';
import { createTenant, startTestApp, type TestApp } from '../../helpers/test-app.js';
import { Shop } from './shop.js';

/**
 * The CRM pack with a coupon service of the test's own (what `crm.coupons` will be): SAVE10 takes 10 % off
 * once per customer, anything else is refused. It records each call, to show it runs inside the order's
 * transaction.
 */
const calls: Array<{ code: string; customerRef: string; orderId: string; inTransaction: boolean }> = [];
const redeemed = new Set<string>();
const coupons = {
  async redeem(rc: RequestContext, input: { code: string; customerRef: string; orderId: string }) {
    calls.push({ ...input, inTransaction: rc.trx !== undefined });
    if (input.code !== 'SAVE10') throw CouponInvalid('unknown code', [{ path: '/couponCode', message: 'no such coupon' }]);
    const key = `${rc.tenantId}/${input.customerRef}`;
    if (redeemed.has(key)) throw CouponInvalid('already redeemed by this customer', [{ path: '/couponCode', message: 'already redeemed' }]);
    redeemed.add(key);
    return { percentOff: 10 };
  },
};
const crm = packs.find((p) => p.name === 'crm')!;
const crmWithCoupons = definePack({ ...crm, provides: { ...(crm.provides ?? {}), coupons: () => coupons } });

describe('ERP orders with a coupon service (crm.coupons)', () => {
  let t: TestApp;
  let shop: Shop;

  before(async () => {
    t = await startTestApp({ packs: packs.map((p) => (p.name === 'crm' ? crmWithCoupons : p)) });
  });

  after(async () => {
    await t.close();
  });

  beforeEach(async () => {
    shop = new Shop(t, await createTenant(t, 'cpn'));
    calls.length = 0;
  });

  it('takes percentOff from each line\'s net, rounded half up per line, before tax, inside the order\'s transaction', async () => {
    const mug = await shop.product({ priceCents: 1999 });
    const pen = await shop.product({ priceCents: 150 });
    const res = await shop.order([{ productId: mug.number, quantity: 3, unitPrice: 1999 }, { productId: pen.number, quantity: 1, unitPrice: 150 }], { couponCode: 'SAVE10', customerRef: 'ann' });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    const [a, b] = res.body.data.items;
    // 5997 × 10 % = 599.7 → 600; net 5397; tax 1025.43 → 1025.  150 × 10 % = 15; net 135; tax 25.65 → 26.
    expect(a).to.include({ discountCents: 600, netCents: 5397, taxCents: 1025, totalCents: 6422 });
    expect(b).to.include({ discountCents: 15, netCents: 135, taxCents: 26, totalCents: 161 });
    expect(res.body.data).to.include({ couponCode: 'SAVE10', subtotalCents: 6147, discountCents: 615, taxCents: 1051, totalCents: 6583 });
    expect(calls).to.have.length(1);
    expect(calls[0]).to.include({ code: 'SAVE10', customerRef: 'ann', orderId: res.body.data.id, inTransaction: true });
  });

  it('answers 409 coupon_invalid with the reason and writes nothing when the coupon service refuses', async () => {
    const p = await shop.product({ physicalStock: 3 });
    await shop.order([{ productId: p.number, quantity: 1, unitPrice: 1999 }], { couponCode: 'SAVE10', customerRef: 'bob' }).then((r) => expect(r.status).to.equal(201));
    const again = await shop.order([{ productId: p.number, quantity: 1, unitPrice: 1999 }], { couponCode: 'SAVE10', customerRef: 'bob' });
    expect(again.status).to.equal(409);
    expect(again.body.error.code).to.equal('coupon_invalid');
    expect(again.body.message).to.contain('already redeemed');
    const unknown = await shop.order([{ productId: p.number, quantity: 1, unitPrice: 1999 }], { couponCode: 'NOPE', customerRef: 'cy' });
    expect(unknown.body.error.code).to.equal('coupon_invalid');
    expect((await shop.get(p.id)).physicalStock).to.equal(2);
    expect((await shop.movements(p.id)).filter((m) => m.reason === 'order')).to.have.length(1);
  });

  it('never asks the coupon service when the stock is short, and answers 409 coupon_invalid without a customerRef', async () => {
    const p = await shop.product({ physicalStock: 1 });
    const res = await shop.order([{ productId: p.number, quantity: 2, unitPrice: 1999 }], { couponCode: 'SAVE10', customerRef: 'dan' });
    expect(res.body.error.code).to.equal('insufficient_stock');
    expect(calls).to.have.length(0);
    const noRef = await shop.order([{ productId: p.number, quantity: 1, unitPrice: 1999 }], { couponCode: 'SAVE10' });
    expect(noRef.status).to.equal(409);
    expect(noRef.body.error.code).to.equal('coupon_invalid');
    expect(calls).to.have.length(0);
  });
});
