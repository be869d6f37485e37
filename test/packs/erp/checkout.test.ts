import { expect } from 'chai';
import { createTenant, sharedTestApp, type TestApp } from '../../helpers/test-app.js';
import { as } from '../../helpers/tokens.js';
import { ORDERS, Shop, Storefront, dataOf, errorOf, type Json } from './shop.js';

const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000).toISOString();

describe('Checkout with a manual payment method (CONTRACT 15.3)', function () {
  this.timeout(60_000);
  let t: TestApp;
  let shop: Shop;
  let store: Storefront;
  const carts = () => store.cartsPath();
  const newCart = (body: Json = {}) => store.cart(body);
  const read = (cart: Json) => store.read(cart);
  const checkout = (cart: Json, body: Json = {}, headers: Record<string, string> = {}) =>
    store.write('post', cart, 'checkout', { paymentMethod: 'bank_transfer', ...body }, headers);
  const setAddress = (cart: Json, address: Json) => store.write('put', cart, 'shipping-address', address).expect(200);
  const setOption = (cart: Json, id: string) => store.write('put', cart, 'shipping-option', { id }).expect(200);
  const region = (country: string, body: Json) => store.region(country, body);
  const option = (body: Json) => store.shippingOption(body);
  const created = (res: { status: number; body: Json }) => dataOf(res, 201);
  const failed = errorOf;
  const orderCount = () => store.orderCount();

  before(async () => {
    t = await sharedTestApp();
  });

  beforeEach(async () => {
    shop = new Shop(t, await createTenant(t, 'checkout'));
    store = new Storefront(shop);
  });

  describe('POST /public/tenant/{tenantId}/carts/{id}/checkout', () => {
    it('places the order in one go: destination tax, shipping and its tax in the total, stock taken, the cart completed with the order', async () => {
      const mug = await shop.product({ sku: 'MUG', priceCents: 1000, physicalStock: 5 });
      const book = await shop.product({ sku: 'BOOK', priceCents: 2000, physicalStock: 5, taxClass: 'reduced' });
      await region('DE', { name: 'Germany', standardRateBasisPoints: 1900, reducedRateBasisPoints: 700 });
      const post = await option({ name: 'Post', priceCents: 495, countries: ['DE'] });
      const cart = await newCart({ email: 'ann@example.com', items: [{ sku: 'MUG', quantity: 2 }, { sku: 'BOOK', quantity: 1 }] });
      await setAddress(cart, { country: 'DE', name: 'Ann', city: 'Berlin' });
      const priced = (await setOption(cart, post.id)).body.data as Json;
      // MUG 2000 + 380 tax, BOOK 2000 + 140 tax, shipping 495 + 94 tax.
      expect(priced).to.include({ subtotalCents: 4000, shippingCents: 495, taxCents: 380 + 140 + 94, totalCents: 4000 + 495 + 614 });

      const answer = created(await checkout(cart, { expectedTotalCents: priced.totalCents, clientId: 42 }));
      expect(answer.payment).to.deep.equal({ provider: 'manual', method: 'bank_transfer', status: 'pending' });
      const order = answer.order as Json;
      expect(order).to.include({
        status: 'placed', clientId: 42, paymentMethod: 'bank_transfer', currency: 'EUR', cartId: cart.id, email: 'ann@example.com',
        subtotalCents: 4000, discountCents: 0, shippingCents: 495, shippingTaxCents: 94, taxCents: 614, totalCents: 5109,
        paymentStatus: 'pending', fulfillmentStatus: 'unfulfilled', refundedCents: 0, cancelReason: null, number: 1,
      });
      expect(order.shippingAddress).to.deep.equal({ country: 'DE', name: 'Ann', city: 'Berlin' });
      expect(order.shippingOption).to.deep.equal({ id: post.id, name: 'Post', priceCents: 495, taxCents: 94 });
      expect(order).to.deep.include({ payments: [], fulfillments: [], refunds: [] });
      expect(order.items.map((i: Json) => [i.sku, i.quantity, i.taxRateBasisPoints, i.taxCents, i.totalCents]))
        .to.deep.equal([['BOOK', 1, 700, 140, 2140], ['MUG', 2, 1900, 380, 2380]]);

      expect((await shop.get(mug.id)).physicalStock).to.equal(3);
      expect((await shop.get(book.id)).physicalStock).to.equal(4);
      expect(await shop.expectLedgerConsistent(mug.id)).to.equal(3);
      const stored = (await t.http.get(`${ORDERS}/${order.number}`).set(as(shop.tenant, 'viewer')).expect(200)).body.data;
      expect(stored).to.include({ id: order.id, totalCents: 5109, cartId: cart.id });

      const completed = (await read(cart).expect(200)).body.data as Json;
      expect(completed).to.include({ status: 'completed', subtotalCents: 4000, shippingCents: 495, taxCents: 614, totalCents: 5109 });
      expect(completed.order).to.deep.equal({ id: order.id, number: 1, status: 'placed', paymentStatus: 'pending', clientSecret: null });
      expect(completed.items.map((i: Json) => [i.sku, i.totalCents, i.availableStock])).to.deep.equal([['BOOK', 2140, 4], ['MUG', 2380, 3]]);

      // A cart is checked out once; a completed cart refuses writes.
      failed(await checkout(cart), 409, 'conflict');
      failed(await t.http.post(`${carts()}/${cart.id}/items`).set('X-Cart-Token', cart.token).send({ sku: 'MUG', quantity: 1 }), 409, 'conflict');
      expect(await orderCount()).to.equal(1);
    });

    it('takes cash_on_delivery, the body\'s e-mail and clientId 1 by default; no shipping needed when the shop has no option for the currency', async () => {
      await shop.product({ sku: 'MUG', priceCents: 1999, physicalStock: 5 });
      await option({ name: 'Dollar post', priceCents: 700, currency: 'USD', countries: ['US'] });
      const cart = await newCart({ items: [{ sku: 'MUG', quantity: 3 }] });
      const order = created(await checkout(cart, { paymentMethod: 'cash_on_delivery', email: 'bob@example.com' })).order as Json;
      expect(order).to.include({ clientId: 1, email: 'bob@example.com', paymentMethod: 'cash_on_delivery', shippingCents: 0, shippingTaxCents: 0, taxCents: 1139, totalCents: 7136 });
      expect(order.shippingOption).to.equal(null);
    });

    it('answers 400 naming what is missing: items, email, shipping address and option (when the shop ships in the cart\'s currency)', async () => {
      await shop.product({ sku: 'MUG', physicalStock: 5 });
      await option({ name: 'Post', priceCents: 495, countries: ['DE'] });
      const empty = await newCart();
      let error = failed(await checkout(empty), 400, 'validation_failed');
      expect(error.details.map((d: Json) => d.path)).to.deep.equal(['/items', '/email', '/shippingAddress', '/shippingOption']);
      const cart = await newCart({ email: 'ann@example.com', items: [{ sku: 'MUG', quantity: 1 }] });
      await setAddress(cart, { country: 'FR' });
      error = failed(await checkout(cart), 400, 'validation_failed');
      expect(error.details.map((d: Json) => d.path)).to.deep.equal(['/shippingOption']);
      const bad = failed(await checkout(cart, { paymentMethod: 'cheque' }), 400, 'validation_failed');
      expect(JSON.stringify(bad.details)).to.contain('/paymentMethod');
      const card = failed(await checkout(cart, { paymentMethod: 'stripe_card' }), 400, 'validation_failed');
      expect(card.details[0].path).to.equal('/paymentMethod');
      expect((await read(cart).expect(200)).body.data.status).to.equal('open');
      expect(await orderCount()).to.equal(0);
    });

    it('answers 409 price_changed when expectedTotalCents is not the cart\'s total, and 404 for a wrong token', async () => {
      const mug = await shop.product({ sku: 'MUG', priceCents: 1000, physicalStock: 5 });
      const cart = await newCart({ email: 'ann@example.com', items: [{ sku: 'MUG', quantity: 1 }] });
      await t.http.patch(`/api/v1/erp/products/${mug.id}`).set(as(shop.tenant, 'editor')).send({ priceCents: 1100 }).expect(200);
      const error = failed(await checkout(cart, { expectedTotalCents: 1190 }), 409, 'price_changed');
      expect(error.details[0]).to.include({ path: '/expectedTotalCents', expected: 1309 });
      failed(await checkout({ ...cart, token: 'wrong' }), 404, 'not_found');
      expect(created(await checkout(cart, { expectedTotalCents: 1309 })).order.totalCents).to.equal(1309);
    });

    it('answers 409 insufficient_stock naming the sku and writes nothing: no order, no stock change, the cart still open', async () => {
      const mug = await shop.product({ sku: 'MUG', physicalStock: 5 });
      const pen = await shop.product({ sku: 'PEN', physicalStock: 5 });
      const cart = await newCart({ email: 'ann@example.com', items: [{ sku: 'MUG', quantity: 2 }, { sku: 'PEN', quantity: 4 }] });
      await t.http.post(`/api/v1/erp/products/${pen.id}/stock-adjustments`).set(as(shop.tenant, 'admin')).send({ delta: -2, reason: 'damage' }).expect(201);
      const error = failed(await checkout(cart), 409, 'insufficient_stock');
      expect(error.details[0].sku).to.equal('PEN');
      expect((await shop.get(mug.id)).physicalStock).to.equal(5);
      expect(await shop.expectLedgerConsistent(pen.id)).to.equal(3);
      expect(await orderCount()).to.equal(0);
      expect((await read(cart).expect(200)).body.data).to.include({ status: 'open', order: null });
    });

    it('50 concurrent checkouts of carts holding the last unit: exactly one 201, 49 × 409 insufficient_stock', async () => {
      const mug = await shop.product({ sku: 'MUG', physicalStock: 1 });
      const all = await Promise.all(Array.from({ length: 50 }, () => newCart({ email: 'ann@example.com', items: [{ sku: 'MUG', quantity: 1 }] })));
      const results = await Promise.all(all.map((cart) => checkout(cart)));
      const statuses = results.map((r) => r.status);
      expect(statuses.filter((s) => s === 201), JSON.stringify(results.find((r) => r.status >= 500)?.body)).to.have.length(1);
      expect(results.filter((r) => r.status === 409 && r.body.error.code === 'insufficient_stock' && r.body.error.details[0].sku === 'MUG')).to.have.length(49);
      expect(await shop.expectLedgerConsistent(mug.id)).to.equal(0);
      expect(await orderCount()).to.equal(1);
    });

    it('replays the answer for the same Idempotency-Key and body, 422 for another body; another token is not this cart\'s caller', async () => {
      await shop.product({ sku: 'MUG', physicalStock: 5 });
      const cart = await newCart({ email: 'ann@example.com', items: [{ sku: 'MUG', quantity: 1 }] });
      const key = { 'Idempotency-Key': 'checkout-1' };
      const first = created(await checkout(cart, {}, key));
      const again = await checkout(cart, {}, key);
      expect(again.status).to.equal(201);
      expect(again.headers['idempotent-replayed']).to.equal('true');
      expect(again.body.data.order.id).to.equal(first.order.id);
      failed(await checkout(cart, { paymentMethod: 'cash_on_delivery' }, key), 422, 'idempotency_key_reused');
      failed(await checkout({ ...cart, token: 'someone-else' }, {}, key), 404, 'not_found');
      expect(await orderCount()).to.equal(1);
    });
  });

  describe('coupons and the CRM', () => {
    const couponFor = async (customerRef: string) => {
      await t.http.post('/api/v1/crm/events').set(as(shop.tenant, 'editor'))
        .send({ customerRef, eventType: 'cart.item_added', eventData: { sku: 'MUG', quantity: 1 }, occurredAt: minutesAgo(120) }).expect(201);
      const res = await t.http.post('/api/v1/crm/recover-abandoned-carts').set(as(shop.tenant, 'admin')).send({}).expect(200);
      return (res.body.data.recovered as Json[]).find((c) => c.customerRef === customerRef)!.coupon as { code: string; percentOff: number };
    };
    const coupons = async (customerRef: string) => (await t.http.get(`/api/v1/crm/coupons?customerRef=${customerRef}`).set(as(shop.tenant, 'admin')).expect(200)).body.data.items as Json[];

    it('redeems the cart\'s coupon for the order and records checkout.completed { orderId } for the customer', async () => {
      await shop.product({ sku: 'MUG', priceCents: 1999, physicalStock: 20 });
      const coupon = await couponFor('ann');
      const cart = await newCart({ customerRef: 'ann', email: 'ann@example.com', items: [{ sku: 'MUG', quantity: 3 }] });
      const priced = (await t.http.put(`${carts()}/${cart.id}/coupon`).set('X-Cart-Token', cart.token).send({ code: coupon.code }).expect(200)).body.data;
      const order = created(await checkout(cart, { expectedTotalCents: priced.totalCents })).order as Json;
      expect(order).to.include({ couponCode: coupon.code, customerRef: 'ann', discountCents: priced.discountCents, totalCents: priced.totalCents });
      expect((await coupons('ann'))[0]).to.include({ code: coupon.code, orderId: order.id });
      const events = (await t.http.get('/api/v1/crm/events?customerRef=ann').set(as(shop.tenant, 'viewer')).expect(200)).body.data.items as Json[];
      expect(events.filter((e) => e.eventType === 'checkout.completed').map((e) => e.eventData)).to.deep.equal([{ orderId: order.id }]);
    });

    it('answers 409 coupon_invalid when the coupon was redeemed meanwhile, and writes nothing', async () => {
      const mug = await shop.product({ sku: 'MUG', priceCents: 1999, physicalStock: 20 });
      const coupon = await couponFor('ann');
      const first = await newCart({ customerRef: 'ann', email: 'ann@example.com', items: [{ sku: 'MUG', quantity: 1 }] });
      const second = await newCart({ customerRef: 'ann', email: 'ann@example.com', items: [{ sku: 'MUG', quantity: 2 }] });
      for (const cart of [first, second]) await t.http.put(`${carts()}/${cart.id}/coupon`).set('X-Cart-Token', cart.token).send({ code: coupon.code }).expect(200);
      created(await checkout(first));
      failed(await checkout(second), 409, 'coupon_invalid');
      expect((await shop.get(mug.id)).physicalStock).to.equal(19);
      expect((await read(second).expect(200)).body.data.status).to.equal('open');
      expect(await orderCount()).to.equal(1);
    });
  });

  describe('taxClass without a destination', () => {
    it('applies in POST /erp/orders (zero is 0) and in the storefront\'s grossPriceCents', async () => {
      const food = await shop.product({ sku: 'BREAD', priceCents: 1000, taxClass: 'zero' });
      const order = await shop.order([{ productId: food.number, quantity: 2, unitPrice: 1000 }]);
      expect(order.status, JSON.stringify(order.body)).to.equal(201);
      expect(order.body.data).to.include({ taxCents: 0, totalCents: 2000 });
      expect(order.body.data.items[0]).to.include({ taxRateBasisPoints: 0, taxCents: 0 });
      const shown = (await t.http.get(`/api/v1/public/tenant/${shop.tenant}/products/BREAD`).expect(200)).body.data;
      expect(shown.grossPriceCents).to.equal(1000);
    });
  });
});
