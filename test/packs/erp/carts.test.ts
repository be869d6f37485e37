import { expect } from 'chai';
import { systemContext } from '../../../core/base/request-context.js';
import { createTenant, sharedTestApp, startTestApp, type TestApp } from '../../helpers/test-app.js';
import { as, superadmin } from '../../helpers/tokens.js';
import { PRODUCTS, Shop, type Json } from './shop.js';

const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000).toISOString();

describe('Storefront carts (CONTRACT 15.2)', () => {
  let t: TestApp;
  let shop: Shop;
  const carts = (tenant = shop.tenant) => `/api/v1/public/tenant/${tenant}/carts`;

  /** A new cart: its id and token. */
  const newCart = async (body: Json = {}) => {
    const res = await t.http.post(carts()).send(body);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body.data as Json;
  };
  const read = (cart: Json) => t.http.get(`${carts()}/${cart.id}`).set('X-Cart-Token', cart.token);
  const addItem = (cart: Json, sku: string, quantity: number) => t.http.post(`${carts()}/${cart.id}/items`).set('X-Cart-Token', cart.token).send({ sku, quantity });
  const setQuantity = (cart: Json, sku: string, quantity: number) => t.http.patch(`${carts()}/${cart.id}/items/${sku}`).set('X-Cart-Token', cart.token).send({ quantity });
  const setAddress = (cart: Json, address: Json) => t.http.put(`${carts()}/${cart.id}/shipping-address`).set('X-Cart-Token', cart.token).send(address);
  const setOption = (cart: Json, id: string) => t.http.put(`${carts()}/${cart.id}/shipping-option`).set('X-Cart-Token', cart.token).send({ id });
  const region = (country: string, body: Json) => t.http.put(`/api/v1/erp/tax-regions/${country}`).set(as(shop.tenant, 'admin')).send(body).expect(200);
  const option = async (body: Json) => (await t.http.post('/api/v1/erp/shipping-options').set(as(shop.tenant, 'admin')).send(body).expect(201)).body.data as Json;
  const ok = (res: { status: number; body: Json }) => {
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body.data as Json;
  };
  /** Moves the cart's expiry into the past, as 7 days without a change would. */
  const age = async (cart: Json, column = 'expires_at', value: string = minutesAgo(1)) => {
    await t.app.kernel.db.sql(systemContext(shop.tenant)).rows(`UPDATE erp_carts SET ${column} = ? WHERE tenant_id = ? AND id = ?`, [value, shop.tenant, cart.id]);
  };

  before(async () => {
    t = await sharedTestApp();
  });

  beforeEach(async () => {
    shop = new Shop(t, await createTenant(t, 'cart'));
  });

  describe('POST /public/tenant/{tenantId}/carts', () => {
    it('answers 201 with the priced cart and a token of at least 128 random bits; the token is never shown again', async () => {
      await shop.product({ sku: 'MUG', name: 'Mug', priceCents: 1999, physicalStock: 5 });
      const cart = await newCart({ items: [{ sku: 'MUG', quantity: 3 }], email: 'ann@example.com' });
      expect(Buffer.from(cart.token, 'base64url').length).to.be.at.least(16);
      const { token, ...shown } = cart;
      expect(shown).to.deep.include({
        status: 'open', currency: 'EUR', customerRef: null, email: 'ann@example.com', shippingAddress: null, shippingOption: null, couponCode: null,
        subtotalCents: 5997, discountCents: 0, shippingCents: 0, taxCents: 1139, totalCents: 7136, order: null,
      });
      expect(shown.items).to.deep.equal([{
        sku: 'MUG', productNumber: 1, name: 'Mug', quantity: 3, unitPriceCents: 1999, taxRateBasisPoints: 1900,
        discountCents: 0, netCents: 5997, taxCents: 1139, totalCents: 7136, availableStock: 5,
      }]);
      expect(Date.parse(shown.expiresAt) - Date.parse(shown.updatedAt)).to.equal(7 * 24 * 3600_000);
      const again = ok(await read(cart));
      expect(again).to.not.have.property('token');
      expect(again).to.deep.equal(shown);
    });

    it('makes a new cart on each call, even with the same Idempotency-Key', async () => {
      const a = await t.http.post(carts()).set('Idempotency-Key', 'k1').send({}).expect(201);
      const b = await t.http.post(carts()).set('Idempotency-Key', 'k1').send({}).expect(201);
      expect(a.body.data.id).to.not.equal(b.body.data.id);
      expect(a.body.data.token).to.not.equal(b.body.data.token);
      expect(b.headers).to.not.have.property('idempotent-replayed');
    });

    it('answers 400 naming the item for an unknown or archived sku, another currency or a quantity out of range, and 409 insufficient_stock naming the sku', async () => {
      const old = await shop.product({ sku: 'OLD' });
      await t.http.patch(`${PRODUCTS}/${old.id}`).set(as(shop.tenant, 'editor')).send({ status: 'archived' }).expect(200);
      await shop.product({ sku: 'USD', currency: 'USD' });
      await shop.product({ sku: 'PEN', physicalStock: 2 });
      const bad = await t.http.post(carts()).send({ items: [{ sku: 'PEN', quantity: 1 }, { sku: 'NOPE', quantity: 1 }, { sku: 'OLD', quantity: 1 }, { sku: 'USD', quantity: 1 }] });
      expect(bad.status).to.equal(400);
      expect(bad.body.error.details.map((d: Json) => d.path)).to.deep.equal(['/items/1/sku', '/items/2/sku', '/items/3/sku']);
      const tooMany = await t.http.post(carts()).send({ items: [{ sku: 'PEN', quantity: 10001 }] });
      expect(tooMany.status).to.equal(400);
      expect(tooMany.body.error.details[0].path).to.equal('/items/0/quantity');
      expect((await t.http.post(carts()).send({ items: [{ sku: 'PEN', quantity: 0 }] })).status).to.equal(400);
      const short = await t.http.post(carts()).send({ items: [{ sku: 'PEN', quantity: 2 }, { sku: 'PEN', quantity: 1 }] });
      expect(short.status).to.equal(409);
      expect(short.body.error.code).to.equal('insufficient_stock');
      expect(short.body.error.details[0]).to.include({ sku: 'PEN', available: 2 });
    });

    it('answers 404 tenant_not_found for an unknown tenant and 404 not_found without the erp module', async () => {
      expect((await t.http.post(carts('no-such-tenant')).send({})).body.error.code).to.equal('tenant_not_found');
      const cart = await newCart();
      await t.http.patch(`/api/v1/tenants/${shop.tenant}/licensed-modules`).set(superadmin()).send({ appCode: 'erp', isEnabled: false }).expect(200);
      const create = await t.http.post(carts()).send({});
      expect(create.status).to.equal(404);
      expect(create.body.error.code).to.equal('not_found');
      expect((await read(cart)).status).to.equal(404);
    });
  });

  describe('the cart token', () => {
    it('answers the same 404 not_found for a missing or wrong token and an unknown cart, also on writes', async () => {
      await shop.product({ sku: 'MUG' });
      const cart = await newCart();
      const missing = await t.http.get(`${carts()}/${cart.id}`);
      const wrong = await t.http.get(`${carts()}/${cart.id}`).set('X-Cart-Token', `${cart.token}x`);
      const unknown = await t.http.get(`${carts()}/00000000-0000-7000-8000-000000000000`).set('X-Cart-Token', cart.token);
      for (const res of [missing, wrong, unknown]) {
        expect(res.status).to.equal(404);
        expect(res.body.error).to.deep.equal({ code: 'not_found', details: [] });
        expect(res.body.message).to.equal(missing.body.message);
      }
      expect((await addItem({ ...cart, token: 'wrong' }, 'MUG', 1)).status).to.equal(404);
      expect((await t.http.post(`${carts()}/${cart.id}/items`).send({ sku: 'MUG', quantity: 1 })).status).to.equal(404);
      expect(ok(await read(cart)).items).to.deep.equal([]);
    });

    it('may be sent from a storefront on another origin: CORS allows X-Cart-Token', async () => {
      const cart = await newCart();
      const preflight = await t.http.options(`${carts()}/${cart.id}/items`)
        .set({ Origin: 'https://shop.example', 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'content-type, x-cart-token' });
      expect(preflight.status).to.equal(204);
      expect(preflight.headers['access-control-allow-origin']).to.equal('*');
      expect(preflight.headers['access-control-allow-headers'].toLowerCase()).to.include('x-cart-token');
      expect(preflight.headers['access-control-allow-methods']).to.include('PATCH');
      const res = await read(cart).set('Origin', 'https://shop.example');
      expect(res.headers['access-control-allow-origin']).to.equal('*');
      expect(res.headers).to.not.have.property('set-cookie');
      const missing = await t.http.get(`${carts()}/${cart.id}`).set('Origin', 'https://shop.example');
      expect(missing.headers['access-control-allow-origin']).to.equal('*');
      // Authenticated routes get no CORS headers.
      const admin = await t.http.get('/api/v1/erp/tax-regions').set(as(shop.tenant, 'viewer')).set('Origin', 'https://shop.example');
      expect(admin.headers).to.not.have.property('access-control-allow-origin');
    });

    it('keeps carts to their tenant: another tenant\'s cart id with its token is 404', async () => {
      const cart = await newCart();
      const other = await createTenant(t, 'cart');
      const res = await t.http.get(`${carts(other)}/${cart.id}`).set('X-Cart-Token', cart.token);
      expect(res.status).to.equal(404);
      expect(res.body.error.code).to.equal('not_found');
      expect((await t.http.patch(`${carts(other)}/${cart.id}`).set('X-Cart-Token', cart.token).send({ email: 'x@example.com' })).status).to.equal(404);
      expect(ok(await read(cart)).email).to.equal(null);
    });
  });

  describe('lines', () => {
    it('adds to the line of a sku, sets its quantity, removes it at 0, sorts lines by sku', async () => {
      await shop.product({ sku: 'b-PEN', name: 'Pen', priceCents: 150, physicalStock: 20 });
      await shop.product({ sku: 'MUG', name: 'Mug', priceCents: 1999, physicalStock: 20 });
      await shop.product({ sku: 'Z-1', name: 'Zed', priceCents: 100, physicalStock: 20 });
      const cart = await newCart();
      ok(await addItem(cart, 'b-PEN', 1));
      ok(await addItem(cart, 'MUG', 1));
      ok(await addItem(cart, 'Z-1', 1));
      const added = ok(await addItem(cart, 'MUG', 2));
      expect(added.items.map((l: Json) => [l.sku, l.quantity])).to.deep.equal([['MUG', 3], ['Z-1', 1], ['b-PEN', 1]]);
      expect(added).to.include({ subtotalCents: 6247, taxCents: 1139 + 19 + 29, totalCents: 6247 + 1187 });
      const set = ok(await setQuantity(cart, 'MUG', 1));
      expect(set.items[0]).to.include({ sku: 'MUG', quantity: 1, netCents: 1999, taxCents: 380 });
      const removed = ok(await setQuantity(cart, 'Z-1', 0));
      expect(removed.items.map((l: Json) => l.sku)).to.deep.equal(['MUG', 'b-PEN']);
      expect((await setQuantity(cart, 'Z-1', 1)).status).to.equal(404);
    });

    it('answers 400 naming the item for an unknown or archived sku or more than 10000 units, 409 insufficient_stock above the stock', async () => {
      const pen = await shop.product({ sku: 'PEN', physicalStock: 3 });
      await shop.product({ sku: 'LOTS', physicalStock: 20000 });
      const cart = await newCart();
      const unknown = await addItem(cart, 'NOPE', 1);
      expect(unknown.status).to.equal(400);
      expect(unknown.body.error.details[0].path).to.equal('/sku');
      expect((await addItem(cart, 'PEN', 0)).status).to.equal(400);
      const range = await addItem(cart, 'LOTS', 10001);
      expect(range.status).to.equal(400);
      expect(range.body.error.details[0].path).to.equal('/quantity');
      ok(await addItem(cart, 'LOTS', 10000));
      const beyond = await addItem(cart, 'LOTS', 1);
      expect(beyond.status).to.equal(400);
      expect(beyond.body.error.details[0].path).to.equal('/quantity');
      expect((await setQuantity(cart, 'LOTS', 10001)).status).to.equal(400);
      ok(await addItem(cart, 'PEN', 2));
      const short = await addItem(cart, 'PEN', 2);
      expect(short.status).to.equal(409);
      expect(short.body.error.code).to.equal('insufficient_stock');
      expect(short.body.error.details[0]).to.include({ sku: 'PEN', available: 3 });
      expect((await setQuantity(cart, 'PEN', 4)).body.error.code).to.equal('insufficient_stock');
      // Archived later: the line stays, with no stock; it cannot grow.
      await t.http.patch(`${PRODUCTS}/${pen.id}`).set(as(shop.tenant, 'editor')).send({ status: 'archived' }).expect(200);
      const shown = ok(await read(cart));
      expect(shown.items.find((l: Json) => l.sku === 'PEN')).to.include({ quantity: 2, availableStock: 0 });
      const archived = await addItem(cart, 'PEN', 1);
      expect(archived.status).to.equal(400);
      expect(archived.body.error.details[0].path).to.equal('/sku');
      ok(await setQuantity(cart, 'PEN', 0));
    });

    it('prices every read from the live catalogue: a price or stock change shows on the next read; a cart takes no stock', async () => {
      const mug = await shop.product({ sku: 'MUG', priceCents: 1000, physicalStock: 4 });
      const cart = await newCart({ items: [{ sku: 'MUG', quantity: 2 }] });
      await t.http.patch(`${PRODUCTS}/${mug.id}`).set(as(shop.tenant, 'admin')).send({ priceCents: 1200, physicalStock: 3 }).expect(200);
      const shown = ok(await read(cart));
      expect(shown.items[0]).to.include({ unitPriceCents: 1200, netCents: 2400, availableStock: 3 });
      expect((await shop.get(mug.id)).physicalStock).to.equal(3);
    });
  });

  describe('taxes by destination and shipping (the worked examples of docs/commerce.md)', () => {
    let standard: Json;
    let express: Json;

    beforeEach(async () => {
      await shop.product({ sku: 'MUG', name: 'Mug', priceCents: 1999, physicalStock: 50 });
      await shop.product({ sku: 'BOOK', name: 'Book', priceCents: 1500, physicalStock: 50, taxClass: 'reduced' });
      await shop.product({ sku: 'GIFTCARD', name: 'Gift card', priceCents: 1000, physicalStock: 50, taxClass: 'zero' });
      await region('DE', { name: 'Germany', standardRateBasisPoints: 1900, reducedRateBasisPoints: 700 });
      await region('FR', { name: 'France', standardRateBasisPoints: 2000, reducedRateBasisPoints: 550 });
      await region('DK', { name: 'Denmark', standardRateBasisPoints: 2500 });
      standard = await option({ name: 'Standard', priceCents: 495, countries: ['DE', 'FR', 'DK', 'CH'], freeAboveCents: 10000 });
      express = await option({ name: 'Express', priceCents: 1490, countries: ['DE'] });
    });

    const basket = [{ sku: 'MUG', quantity: 3 }, { sku: 'BOOK', quantity: 2 }, { sku: 'GIFTCARD', quantity: 1 }];
    const taxes = (cart: Json) => Object.fromEntries(cart.items.map((l: Json) => [l.sku, [l.taxRateBasisPoints, l.taxCents]]));

    it('without a destination: each product\'s own rate (zero is still 0), no shipping', async () => {
      const cart = await newCart({ items: basket });
      expect(taxes(cart)).to.deep.equal({ BOOK: [1900, 570], GIFTCARD: [0, 0], MUG: [1900, 1139] });
      expect(cart).to.include({ subtotalCents: 9997, shippingCents: 0, taxCents: 1709, totalCents: 11706 });
    });

    it('Germany: standard 19 %, reduced 7 %, shipping 4.95 taxed at 19 %', async () => {
      const cart = await newCart({ items: basket });
      ok(await setAddress(cart, { country: 'DE', name: 'Ann', city: 'Berlin' }));
      const priced = ok(await setOption(cart, standard.id));
      expect(taxes(priced)).to.deep.equal({ BOOK: [700, 210], GIFTCARD: [0, 0], MUG: [1900, 1139] });
      expect(priced.shippingOption).to.deep.equal({ id: standard.id, name: 'Standard', priceCents: 495, taxCents: 94 });
      expect(priced).to.include({ subtotalCents: 9997, discountCents: 0, shippingCents: 495, taxCents: 1443, totalCents: 11935 });
    });

    it('France: standard 20 %, reduced 5.5 % (rounded half up per line)', async () => {
      const cart = await newCart({ items: basket });
      ok(await setAddress(cart, { country: 'FR' }));
      const priced = ok(await setOption(cart, standard.id));
      expect(taxes(priced)).to.deep.equal({ BOOK: [550, 165], GIFTCARD: [0, 0], MUG: [2000, 1199] });
      expect(priced).to.include({ shippingCents: 495, taxCents: 1199 + 165 + 99, totalCents: 9997 + 495 + 1463 });
    });

    it('Denmark without a reduced rate: reduced products pay the standard rate', async () => {
      const cart = await newCart({ items: basket });
      ok(await setAddress(cart, { country: 'DK' }));
      expect(taxes(ok(await read(cart)))).to.deep.equal({ BOOK: [2500, 750], GIFTCARD: [0, 0], MUG: [2500, 1499] });
    });

    it('a country without a region: the products\' own rates, shipping at 19 %', async () => {
      const cart = await newCart({ items: basket });
      ok(await setAddress(cart, { country: 'CH' }));
      const priced = ok(await setOption(cart, standard.id));
      expect(taxes(priced)).to.deep.equal({ BOOK: [1900, 570], GIFTCARD: [0, 0], MUG: [1900, 1139] });
      expect(priced).to.include({ shippingCents: 495, taxCents: 1709 + 94, totalCents: 9997 + 495 + 1803 });
    });

    it('free shipping once the net after discounts reaches freeAboveCents; the option\'s price is still shown', async () => {
      const cart = await newCart({ items: [{ sku: 'MUG', quantity: 5 }, { sku: 'GIFTCARD', quantity: 1 }] });
      ok(await setAddress(cart, { country: 'DE' }));
      const free = ok(await setOption(cart, standard.id));
      expect(free.subtotalCents).to.equal(10995);
      expect(free.shippingOption).to.deep.equal({ id: standard.id, name: 'Standard', priceCents: 495, taxCents: 0 });
      expect(free).to.include({ shippingCents: 0, taxCents: 1899, totalCents: 12894 });
      const below = ok(await setQuantity(cart, 'MUG', 4));
      expect(below).to.include({ subtotalCents: 8996, shippingCents: 495 });
    });

    it('reads a priced cart in two statements once the tenant\'s regions and options are kept: the cart with its lines, its products by sku', async () => {
      const cart = await newCart({ items: basket });
      ok(await setAddress(cart, { country: 'DE', city: 'Berlin' }));
      ok(await setOption(cart, standard.id));
      ok(await read(cart));
      const again = await read(cart);
      expect(ok(again)).to.include({ totalCents: ok(await read(cart)).totalCents });
      expect(ok(again).items.map((l: Json) => l.sku)).to.deep.equal(['BOOK', 'GIFTCARD', 'MUG']);
      expect(again.headers['x-query-count']).to.equal('2');
    });

    it('a region\'s change shows on the next read', async () => {
      const cart = await newCart({ items: [{ sku: 'BOOK', quantity: 2 }] });
      ok(await setAddress(cart, { country: 'DE' }));
      await region('DE', { standardRateBasisPoints: 1900, reducedRateBasisPoints: 500 });
      expect(taxes(ok(await read(cart)))).to.deep.equal({ BOOK: [500, 150] });
      await t.http.delete('/api/v1/erp/tax-regions/DE').set(as(shop.tenant, 'admin')).expect(200);
      expect(taxes(ok(await read(cart)))).to.deep.equal({ BOOK: [1900, 570] });
    });

    it('shows a region or option changed by another process on the next reads there (kept configuration is dropped)', async () => {
      const other = await startTestApp({ database: t.database });
      try {
        const cart = await newCart({ items: [{ sku: 'BOOK', quantity: 2 }] });
        ok(await setAddress(cart, { country: 'DE' }));
        ok(await setOption(cart, express.id));
        const readThere = async () => ok(await other.http.get(`${carts()}/${cart.id}`).set('X-Cart-Token', cart.token));
        expect(taxes(await readThere())).to.deep.equal({ BOOK: [700, 210] });
        await region('DE', { standardRateBasisPoints: 1900, reducedRateBasisPoints: 500 });
        await t.http.patch(`/api/v1/erp/shipping-options/${express.id}`).set(as(shop.tenant, 'admin')).send({ priceCents: 1000 }).expect(200);
        let seen: Json = {};
        for (let i = 0; i < 50; i++) {
          seen = await readThere();
          if (seen.items[0].taxRateBasisPoints === 500 && seen.shippingOption.priceCents === 1000) break;
          await new Promise((r) => setTimeout(r, 20));
        }
        expect(taxes(seen)).to.deep.equal({ BOOK: [500, 150] });
        expect(seen.shippingOption).to.include({ priceCents: 1000, taxCents: 190 });
      } finally {
        await other.close();
      }
    });

    it('answers 400 at /id for an option of another currency, another country, an inactive or unknown one, or before an address', async () => {
      const usd = await option({ name: 'Dollars', priceCents: 100, currency: 'USD', countries: ['DE'] });
      const off = await option({ name: 'Off', priceCents: 100, countries: ['DE'], active: false });
      const cart = await newCart({ items: [{ sku: 'MUG', quantity: 1 }] });
      const first = await setOption(cart, standard.id);
      expect(first.status).to.equal(400);
      expect(first.body.error.details[0].path).to.equal('/id');
      ok(await setAddress(cart, { country: 'FR' }));
      for (const id of [express.id, usd.id, off.id, '00000000-0000-7000-8000-000000000000']) {
        const res = await setOption(cart, id);
        expect(res.status, id).to.equal(400);
        expect(res.body.error.details[0].path).to.equal('/id');
      }
      expect((await setAddress(cart, { country: 'fr' })).status).to.equal(400);
    });

    it('drops the chosen option when a new address is in a country it does not serve', async () => {
      const cart = await newCart({ items: [{ sku: 'MUG', quantity: 1 }] });
      ok(await setAddress(cart, { country: 'DE' }));
      expect(ok(await setOption(cart, express.id)).shippingOption.id).to.equal(express.id);
      expect(ok(await setAddress(cart, { country: 'DE', city: 'Bonn' })).shippingOption.id).to.equal(express.id);
      const moved = ok(await setAddress(cart, { country: 'FR', city: 'Paris' }));
      expect(moved.shippingOption).to.equal(null);
      expect(moved.shippingAddress).to.deep.equal({ country: 'FR', city: 'Paris' });
      expect(moved.shippingCents).to.equal(0);
    });
  });

  describe('PATCH, expiry and completed carts', () => {
    it('sets email and customerRef; a customerRef with "@" is 400', async () => {
      const cart = await newCart();
      const patched = ok(await t.http.patch(`${carts()}/${cart.id}`).set('X-Cart-Token', cart.token).send({ email: 'bob@example.com', customerRef: 'c-1' }));
      expect(patched).to.include({ email: 'bob@example.com', customerRef: 'c-1' });
      const bad = await t.http.patch(`${carts()}/${cart.id}`).set('X-Cart-Token', cart.token).send({ customerRef: 'bob@example.com' });
      expect(bad.status).to.equal(400);
      expect((await t.http.patch(`${carts()}/${cart.id}`).set('X-Cart-Token', cart.token).send({ email: 'not-mail' })).status).to.equal(400);
    });

    it('expires 7 days after the last change: status expired, writes 409 conflict; a completed cart refuses writes too', async () => {
      await shop.product({ sku: 'MUG' });
      const cart = await newCart({ items: [{ sku: 'MUG', quantity: 1 }] });
      const first = ok(await read(cart));
      await new Promise((r) => setTimeout(r, 5));
      const changed = ok(await addItem(cart, 'MUG', 1));
      expect(Date.parse(changed.expiresAt)).to.be.greaterThan(Date.parse(first.expiresAt));
      await age(cart);
      const expired = ok(await read(cart));
      expect(expired.status).to.equal('expired');
      for (const res of [await addItem(cart, 'MUG', 1), await setQuantity(cart, 'MUG', 0), await setAddress(cart, { country: 'DE' }),
        await t.http.patch(`${carts()}/${cart.id}`).set('X-Cart-Token', cart.token).send({ email: 'a@example.com' })]) {
        expect(res.status).to.equal(409);
        expect(res.body.error.code).to.equal('conflict');
      }
      const done = await newCart();
      await age(done, 'status', 'completed');
      expect(ok(await read(done)).status).to.equal('completed');
      expect((await t.http.patch(`${carts()}/${done.id}`).set('X-Cart-Token', done.token).send({ email: 'a@example.com' })).status).to.equal(409);
    });
  });

  describe('coupons and CRM events', () => {
    const events = async (customerRef: string) => {
      const res = await t.http.get(`/api/v1/crm/events?customerRef=${customerRef}`).set(as(shop.tenant, 'viewer')).expect(200);
      return (res.body.data.items as Json[]).map((e) => [e.eventType, e.eventData.sku, e.eventData.quantity]).reverse();
    };
    /** A coupon of the cart recovery for `customerRef`. */
    const couponFor = async (customerRef: string) => {
      await t.http.post('/api/v1/crm/events').set(as(shop.tenant, 'editor'))
        .send({ customerRef, eventType: 'cart.item_added', eventData: { sku: 'MUG', quantity: 1 }, occurredAt: minutesAgo(120) }).expect(201);
      const res = await t.http.post('/api/v1/crm/recover-abandoned-carts').set(as(shop.tenant, 'admin')).send({}).expect(200);
      return (res.body.data.recovered as Json[]).find((c) => c.customerRef === customerRef)!.coupon as { code: string; percentOff: number };
    };
    const putCoupon = (cart: Json, code: string) => t.http.put(`${carts()}/${cart.id}/coupon`).set('X-Cart-Token', cart.token).send({ code });

    it('records cart.item_added and cart.item_removed with the difference for a cart with a customerRef, one item_added per line when it is set later', async () => {
      await shop.product({ sku: 'MUG', physicalStock: 20 });
      await shop.product({ sku: 'PEN', physicalStock: 20 });
      const cart = await newCart({ customerRef: 'ann', items: [{ sku: 'MUG', quantity: 2 }] });
      ok(await addItem(cart, 'PEN', 3));
      ok(await setQuantity(cart, 'PEN', 5));
      ok(await setQuantity(cart, 'MUG', 1));
      ok(await setQuantity(cart, 'PEN', 0));
      expect(await events('ann')).to.deep.equal([
        ['cart.item_added', 'MUG', 2], ['cart.item_added', 'PEN', 3], ['cart.item_added', 'PEN', 2],
        ['cart.item_removed', 'MUG', 1], ['cart.item_removed', 'PEN', 5],
      ]);
      const anonymous = await newCart({ items: [{ sku: 'MUG', quantity: 1 }, { sku: 'PEN', quantity: 4 }] });
      ok(await t.http.patch(`${carts()}/${anonymous.id}`).set('X-Cart-Token', anonymous.token).send({ customerRef: 'bob' }));
      expect(await events('bob')).to.deep.equal([['cart.item_added', 'MUG', 1], ['cart.item_added', 'PEN', 4]]);
      // The recovery sees the server-side cart (too recent to recover yet).
      const run = await t.http.post('/api/v1/crm/recover-abandoned-carts').set(as(shop.tenant, 'admin')).send({ dryRun: true }).expect(200);
      expect(run.body.data.skipped).to.deep.include({ customerRef: 'bob', reason: 'not_old_enough' });
    });

    it('takes a coupon checked against the cart\'s customerRef off each line, before tax and the free-shipping threshold', async () => {
      await shop.product({ sku: 'MUG', priceCents: 1999, physicalStock: 20 });
      const coupon = await couponFor('ann');
      const cart = await newCart({ customerRef: 'ann', items: [{ sku: 'MUG', quantity: 3 }] });
      // Free shipping from exactly the cart's net: reached without the coupon, missed with it.
      const post = await option({ name: 'Post', priceCents: 500, countries: ['DE'], freeAboveCents: 5997 });
      ok(await setAddress(cart, { country: 'DE' }));
      expect(ok(await setOption(cart, post.id)).shippingCents).to.equal(0);
      const priced = ok(await putCoupon(cart, coupon.code.toLowerCase()));
      const discount = Math.floor((5997 * coupon.percentOff * 100 + 5000) / 10000);
      const tax = Math.floor(((5997 - discount) * 1900 + 5000) / 10000);
      expect(priced).to.include({ couponCode: coupon.code, subtotalCents: 5997, discountCents: discount, shippingCents: 500, taxCents: tax + 95, totalCents: 5997 - discount + tax + 500 + 95 });
      expect(priced.items[0]).to.include({ discountCents: discount, netCents: 5997 - discount });
      // Checked, not redeemed.
      const listed = (await t.http.get('/api/v1/crm/coupons?customerRef=ann').set(as(shop.tenant, 'admin')).expect(200)).body.data.items;
      expect(listed[0]).to.include({ code: coupon.code, redeemedAt: null });
      const removed = ok(await t.http.delete(`${carts()}/${cart.id}/coupon`).set('X-Cart-Token', cart.token));
      expect(removed).to.include({ couponCode: null, discountCents: 0, shippingCents: 0 });
      // Another customer on the cart: the coupon is taken off.
      ok(await putCoupon(cart, coupon.code));
      expect(ok(await t.http.patch(`${carts()}/${cart.id}`).set('X-Cart-Token', cart.token).send({ customerRef: 'zed' })).couponCode).to.equal(null);
    });

    it('answers 409 coupon_invalid for another customer\'s code, an unknown one, or a cart without customerRef; 404 without the crm module', async () => {
      await shop.product({ sku: 'MUG', physicalStock: 20 });
      const coupon = await couponFor('ann');
      const bobs = await newCart({ customerRef: 'bob' });
      for (const res of [await putCoupon(bobs, coupon.code), await putCoupon(bobs, 'NOSUCHCODE00'), await putCoupon(await newCart(), coupon.code)]) {
        expect(res.status).to.equal(409);
        expect(res.body.error.code).to.equal('coupon_invalid');
      }
      const anns = await newCart({ customerRef: 'ann' });
      await t.http.patch(`/api/v1/tenants/${shop.tenant}/licensed-modules`).set(superadmin()).send({ appCode: 'crm', isEnabled: false }).expect(200);
      const off = await putCoupon(anns, coupon.code);
      expect(off.status).to.equal(404);
      expect(off.body.error.code).to.equal('not_found');
    });
  });
});
