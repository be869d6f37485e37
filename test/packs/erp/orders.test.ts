import { expect } from 'chai';
import { createTenant, sharedTestApp, type TestApp } from '../../helpers/test-app.js';
import { as } from '../../helpers/tokens.js';
import { ORDERS, PRODUCTS, Shop, type Json } from './shop.js';

describe('ERP orders', () => {
  let t: TestApp;
  let tenant: string;
  let shop: Shop;

  before(async () => {
    t = await sharedTestApp();
  });

  beforeEach(async () => {
    tenant = await createTenant(t, 'ord');
    shop = new Shop(t, tenant);
  });

  describe('POST /api/v1/erp/orders', () => {
    it('places an order with VAT per line: 3 × 1999 → tax 1139, total 7136; 1 × 150 → tax 29', async () => {
      const mug = await shop.product({ priceCents: 1999, physicalStock: 5 });
      const pen = await shop.product({ priceCents: 150, physicalStock: 5 });
      const res = await shop.order([{ productId: mug.number, quantity: 3, unitPrice: 1999 }, { productId: pen.id, quantity: 1, unitPrice: 150 }], { customerRef: 'cust-1' });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      const order = res.body.data;
      expect(order).to.include({ number: 1, status: 'placed', clientId: 7, customerRef: 'cust-1', paymentMethod: 'stripe_card', currency: 'EUR', couponCode: null, version: 1 });
      expect(order.items[0]).to.deep.include({
        productId: mug.id, number: mug.number, sku: mug.sku, quantity: 3, unitPriceCents: 1999, taxRateBasisPoints: 1900, discountCents: 0, netCents: 5997, taxCents: 1139, totalCents: 7136,
      });
      expect(order.items[1]).to.deep.include({ productId: pen.id, quantity: 1, netCents: 150, taxCents: 29, totalCents: 179 });
      expect(order).to.include({ subtotalCents: 6147, discountCents: 0, taxCents: 1168, totalCents: 7315 });
      expect((await shop.get(mug.id)).physicalStock).to.equal(2);
      expect((await shop.get(pen.id)).physicalStock).to.equal(4);
      const movements = await shop.movements(mug.id);
      expect(movements[1]).to.include({ delta: -3, reason: 'order', orderId: order.id, stockAfter: 2 });
      await shop.expectLedgerConsistent(mug.id);
    });

    it('rounds each line\'s tax half up on its own rate (0, 700, 2100 basis points)', async () => {
      const a = await shop.product({ priceCents: 50, taxRateBasisPoints: 1900 });
      const b = await shop.product({ priceCents: 150, taxRateBasisPoints: 700 });
      const c = await shop.product({ priceCents: 333, taxRateBasisPoints: 2100 });
      const d = await shop.product({ priceCents: 12345, taxRateBasisPoints: 0 });
      const res = await shop.order([
        { productId: a.number, quantity: 1, unitPrice: 50 }, { productId: b.number, quantity: 1, unitPrice: 150 },
        { productId: c.number, quantity: 7, unitPrice: 333 }, { productId: d.number, quantity: 1, unitPrice: 12345 },
      ]);
      expect(res.status).to.equal(201);
      // 9.5 → 10; 10.5 → 11; 489.51 → 490; 0
      expect(res.body.data.items.map((i: Json) => i.taxCents)).to.deep.equal([10, 11, 490, 0]);
      const { items, subtotalCents, taxCents, totalCents } = res.body.data;
      expect(subtotalCents).to.equal(items.reduce((s: number, i: Json) => s + i.netCents, 0));
      expect(taxCents).to.equal(511);
      expect(totalCents).to.equal(items.reduce((s: number, i: Json) => s + i.totalCents, 0));
    });

    it('merges lines of one product (by number and by UUID) and takes the stock once', async () => {
      const p = await shop.product({ physicalStock: 5 });
      const res = await shop.order([{ productId: p.number, quantity: 2, unitPrice: 1999 }, { productId: p.id, quantity: 3, unitPrice: 1999 }]);
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      expect(res.body.data.items).to.have.length(1);
      expect(res.body.data.items[0]).to.include({ quantity: 5, netCents: 9995 });
      expect((await shop.get(p.id)).physicalStock).to.equal(0);
      expect((await shop.movements(p.id)).filter((m) => m.reason === 'order')).to.have.length(1);
    });

    it('answers 409 insufficient_stock naming the sku when two lines of one product together exceed the stock, writing nothing', async () => {
      const p = await shop.product({ physicalStock: 4 });
      const other = await shop.product({ physicalStock: 4 });
      const res = await shop.order([
        { productId: other.number, quantity: 1, unitPrice: 1999 }, { productId: p.number, quantity: 3, unitPrice: 1999 }, { productId: p.number, quantity: 2, unitPrice: 1999 },
      ]);
      expect(res.status).to.equal(409);
      expect(res.body.error.code).to.equal('insufficient_stock');
      expect(res.body.error.details[0]).to.include({ sku: p.sku, available: 4 });
      expect((await shop.get(other.id))).to.include({ physicalStock: 4, version: 1 });
      expect((await shop.get(p.id))).to.include({ physicalStock: 4, version: 1 });
      expect((await t.http.get(ORDERS).set(as(tenant, 'viewer'))).body.data.items).to.deep.equal([]);
      expect(await shop.movements(other.id)).to.have.length(1);
    });

    it('answers 409 price_changed with the expected price per line', async () => {
      const p = await shop.product({ priceCents: 1999 });
      await t.http.patch(`${PRODUCTS}/${p.id}`).set(as(tenant, 'editor')).send({ priceCents: 2199 }).expect(200);
      const res = await shop.order([{ productId: p.number, quantity: 1, unitPrice: 1999 }]);
      expect(res.status).to.equal(409);
      expect(res.body.error.code).to.equal('price_changed');
      expect(res.body.error.details).to.deep.equal([{ path: '/items/0/unitPrice', message: `the price of ${p.sku} is 2199`, expected: 2199 }]);
      expect((await shop.get(p.id)).physicalStock).to.equal(10);
    });

    it('answers 400 validation_failed naming unknown and archived products, and bad bodies', async () => {
      const archived = await shop.product({ status: 'archived' });
      const res = await shop.order([{ productId: 999, quantity: 1, unitPrice: 1 }, { productId: archived.id, quantity: 1, unitPrice: 1999 }]);
      expect(res.status).to.equal(400);
      expect(res.body.error.details.map((d: Json) => d.path)).to.deep.equal(['/items/0/productId', '/items/1/productId']);
      const p = await shop.product();
      const line = { productId: p.number, quantity: 1, unitPrice: 1999 };
      for (const [body, path] of [
        [{ clientId: 7, paymentMethod: 'paypal', items: [line] }, '/paymentMethod'],
        [{ clientId: 0, paymentMethod: 'bank_transfer', items: [line] }, '/clientId'],
        [{ clientId: 7, paymentMethod: 'cash_on_delivery', items: [] }, '/items'],
        [{ clientId: 7, paymentMethod: 'visa_card', items: [{ ...line, unitPrice: 19.99 }] }, '/items/0/unitPrice'],
        [{ clientId: 7, paymentMethod: 'visa_card', items: [{ ...line, unitPrice: '1999' }] }, '/items/0/unitPrice'],
        [{ clientId: 7, paymentMethod: 'visa_card', items: [{ ...line, quantity: 10001 }] }, '/items/0/quantity'],
        [{ clientId: 7, paymentMethod: 'visa_card', items: [line], customerRef: 'x'.repeat(129) }, '/customerRef'],
      ] as const) {
        const r = await t.http.post(ORDERS).set(as(tenant, 'editor')).send(body);
        expect(r.status, JSON.stringify(body)).to.equal(400);
        expect(r.body.error.details.map((d: Json) => d.path), JSON.stringify(r.body)).to.include(path);
      }
    });

    it('answers 400 at /currency for another currency, and for products of two currencies', async () => {
      const eur = await shop.product();
      const usd = await shop.product({ currency: 'USD' });
      const res = await shop.order([{ productId: eur.number, quantity: 1, unitPrice: 1999 }], { currency: 'USD' });
      expect(res.status).to.equal(400);
      expect(res.body.error.details[0].path).to.equal('/currency');
      const mixed = await shop.order([{ productId: eur.number, quantity: 1, unitPrice: 1999 }, { productId: usd.number, quantity: 1, unitPrice: 1999 }]);
      expect(mixed.status).to.equal(400);
    });

    it('answers 409 coupon_invalid for a coupon (no coupon service yet), with or without customerRef, writing nothing', async () => {
      const p = await shop.product({ physicalStock: 1 });
      for (const extra of [{ couponCode: 'SAVE10', customerRef: 'c-1' }, { couponCode: 'SAVE10' }]) {
        const res = await shop.order([{ productId: p.number, quantity: 1, unitPrice: 1999 }], extra);
        expect(res.status).to.equal(409);
        expect(res.body.error.code).to.equal('coupon_invalid');
      }
      expect((await shop.get(p.id)).physicalStock).to.equal(1);
    });

    it('answers 403 to a viewer; orders are read-only through /data/erp/order (403 forbidden)', async () => {
      const p = await shop.product();
      expect((await t.http.post(ORDERS).set(as(tenant, 'viewer')).send({ clientId: 1, paymentMethod: 'bank_transfer', items: [{ productId: p.number, quantity: 1, unitPrice: 1999 }] })).status).to.equal(403);
      const order = (await shop.order([{ productId: p.number, quantity: 1, unitPrice: 1999 }])).body.data;
      const read = await t.http.get(`/api/v1/data/erp/order/${order.id}`).set(as(tenant, 'viewer'));
      expect(read.status).to.equal(200);
      expect(read.body.data.item).to.include({ number: order.number, totalCents: order.totalCents });
      const patch = await t.http.patch(`/api/v1/data/erp/order/${order.id}`).set(as(tenant, 'admin')).send({ status: 'paid' });
      expect(patch.status).to.equal(403);
      expect(patch.body.data.code).to.equal('forbidden');
      const create = await t.http.post('/api/v1/data/erp/order').set(as(tenant, 'admin')).send({ ...order, id: undefined, createdAt: undefined, updatedAt: undefined, version: undefined });
      expect(create.status).to.be.oneOf([400, 403]);
      expect((await t.http.delete(`/api/v1/data/erp/order/${order.id}`).set(as(tenant, 'admin'))).status).to.equal(403);
    });
  });

  describe('GET /api/v1/erp/orders', () => {
    it('lists with filters on status, clientId, customerRef and createdAt, and reads by UUID or number', async () => {
      const p = await shop.product({ physicalStock: 10 });
      const line = [{ productId: p.number, quantity: 1, unitPrice: 1999 }];
      const a = (await shop.order(line, { clientId: 1, customerRef: 'alice' })).body.data;
      const b = (await shop.order(line, { clientId: 2, customerRef: 'bob' })).body.data;
      await t.http.patch(`${ORDERS}/${b.number}`).set(as(tenant, 'editor')).send({ status: 'paid' }).expect(200);
      const q = async (query: string) => (await t.http.get(`${ORDERS}?${query}`).set(as(tenant, 'viewer'))).body.data.items.map((o: Json) => o.number);
      expect(await q('filter[status]=paid')).to.deep.equal([b.number]);
      expect(await q('filter[clientId]=1')).to.deep.equal([a.number]);
      expect(await q('filter[customerRef][eq]=bob')).to.deep.equal([b.number]);
      expect(await q(`filter[createdAt][gte]=${encodeURIComponent(a.createdAt)}&sort=createdAt`)).to.deep.equal([a.number, b.number]);
      expect((await t.http.get(`${ORDERS}/${a.number}`).set(as(tenant, 'viewer'))).body.data.id).to.equal(a.id);
      expect((await t.http.get(`${ORDERS}/${a.id}`).set(as(tenant, 'viewer'))).body.data.number).to.equal(a.number);
      expect((await t.http.get(`${ORDERS}/12345`).set(as(tenant, 'viewer'))).status).to.equal(404);
    });
  });

  describe('PATCH /api/v1/erp/orders/{id}', () => {
    it('goes placed → paid → fulfilled and refuses anything else with 409 invalid_transition', async () => {
      const p = await shop.product();
      const order = (await shop.order([{ productId: p.number, quantity: 1, unitPrice: 1999 }])).body.data;
      const move = (status: string) => t.http.patch(`${ORDERS}/${order.id}`).set(as(tenant, 'editor')).send({ status });
      expect((await move('fulfilled')).body.error.code).to.equal('invalid_transition');
      expect((await move('paid')).body.data).to.include({ status: 'paid', version: 2 });
      expect((await move('placed')).status).to.equal(409);
      expect((await move('fulfilled')).body.data.status).to.equal('fulfilled');
      expect((await move('cancelled')).body.error.code).to.equal('invalid_transition');
      expect((await shop.get(p.id)).physicalStock).to.equal(9);
    });

    it('puts the stock back exactly once when cancelled twice, also when the two race', async () => {
      const p = await shop.product({ physicalStock: 5 });
      const q = await shop.product({ physicalStock: 5 });
      const order = (await shop.order([{ productId: p.number, quantity: 2, unitPrice: 1999 }, { productId: q.number, quantity: 1, unitPrice: 1999 }])).body.data;
      const cancel = () => t.http.patch(`${ORDERS}/${order.number}`).set(as(tenant, 'editor')).send({ status: 'cancelled' });
      const results = await Promise.all([cancel(), cancel(), cancel()]);
      expect(results.map((r) => r.status).sort()).to.deep.equal([200, 409, 409]);
      expect((await cancel()).body.error.code).to.equal('invalid_transition');
      expect((await shop.get(p.id)).physicalStock).to.equal(5);
      expect((await shop.get(q.id)).physicalStock).to.equal(5);
      const cancels = (await shop.movements(p.id)).filter((m) => m.reason === 'cancel');
      expect(cancels).to.have.length(1);
      expect(cancels[0]).to.include({ delta: 2, orderId: order.id, stockAfter: 5 });
      await shop.expectLedgerConsistent(p.id);
      await shop.expectLedgerConsistent(q.id);
      const stored = (await t.http.get(`${ORDERS}/${order.id}`).set(as(tenant, 'viewer'))).body.data;
      expect(stored).to.include({ status: 'cancelled', totalCents: order.totalCents });
    });
  });

  describe('tenant isolation', () => {
    it('never orders, shows or changes another tenant\'s products and orders', async () => {
      const p = await shop.product();
      const order = (await shop.order([{ productId: p.number, quantity: 1, unitPrice: 1999 }])).body.data;
      const other = new Shop(t, await createTenant(t, 'ord'));
      const res = await other.order([{ productId: p.id, quantity: 1, unitPrice: 1999 }]);
      expect(res.status).to.equal(400);
      expect((await t.http.get(`${ORDERS}/${order.id}`).set(as(other.tenant, 'admin'))).status).to.equal(404);
      expect((await t.http.patch(`${ORDERS}/${order.id}`).set(as(other.tenant, 'admin')).send({ status: 'cancelled' })).status).to.equal(404);
      expect((await t.http.get(ORDERS).set(as(other.tenant, 'admin'))).body.data.items).to.deep.equal([]);
      expect((await shop.get(p.id)).physicalStock).to.equal(9);
    });
  });
});
