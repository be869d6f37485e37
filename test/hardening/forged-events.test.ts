import { expect } from 'chai';
import { createTenant, sharedTestApp, type TestApp } from '../helpers/test-app.js';
import { as } from '../helpers/tokens.js';
import { ensureProduct } from '../packs/crm/cart-products.js';

const RECOVER = '/api/v1/crm/recover-abandoned-carts';
const BROWSER = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0';
const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000).toISOString();

/** What someone who guessed a customerRef can still do through the public events (CONTRACT.md 13). */
describe('first-party events cannot be forged into someone\'s cart (#34)', () => {
  let t: TestApp;
  let tenant: string;

  before(async () => {
    t = await sharedTestApp();
  });
  beforeEach(async () => {
    tenant = await createTenant(t, 'forge');
  });

  const publicEvent = (body: Record<string, unknown>, userAgent: string | null = BROWSER) => {
    const req = t.http.post(`/api/v1/public/tenant/${tenant}/events`);
    // supertest sends no User-Agent unless told (superagent's default is off in Node).
    if (userAgent !== null) req.set('User-Agent', userAgent);
    return req.send(body);
  };
  const recover = async () => {
    const res = await t.http.post(RECOVER).set(as(tenant, 'admin')).send({});
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body.data as { recovered: Array<{ customerRef: string; items: unknown[]; lastActivityAt: string; message: string }>; skipped: Array<{ customerRef: string; reason: string }> };
  };

  it('POST /public/tenant/:tenantId/events refuses checkout.* types with 403 forbidden and stores nothing', async () => {
    for (const eventType of ['checkout.completed', 'checkout.started']) {
      const res = await publicEvent({ customerRef: 'ana', eventType, eventData: {} });
      expect(res.status, JSON.stringify(res.body)).to.equal(403);
      expect(res.body.error.code).to.equal('forbidden');
    }
    // The authenticated endpoint still takes them.
    await t.http.post('/api/v1/crm/events').set(as(tenant, 'editor')).send({ customerRef: 'ana', eventType: 'checkout.completed' }).expect(201);
    const listed = (await t.http.get('/api/v1/crm/events?customerRef=ana').set(as(tenant, 'viewer')).expect(200)).body.data.items;
    expect(listed).to.have.length(1);
  });

  it('stores an event without a User-Agent as a bot\'s', async () => {
    await publicEvent({ customerRef: 'nobody', eventType: 'page.viewed' }, null).expect(201);
    await publicEvent({ customerRef: 'blank', eventType: 'page.viewed' }, '  ').expect(201);
    await publicEvent({ customerRef: 'person', eventType: 'page.viewed' }).expect(201);
    const items = (await t.http.get('/api/v1/crm/events').set(as(tenant, 'viewer')).expect(200)).body.data.items as Array<{ customerRef: string; bot: boolean }>;
    expect(Object.fromEntries(items.map((e) => [e.customerRef, e.bot]))).to.deep.equal({ nobody: true, blank: true, person: false });
  });

  it('cart recovery leaves out skus that are not products and bot events; bot only when every cart event is a bot\'s', async () => {
    await ensureProduct(t, tenant, 'MUG-1');
    // The customer's own cart, two hours old.
    await publicEvent({ customerRef: 'ana', eventType: 'cart.item_added', eventData: { sku: 'MUG-1', quantity: 1 }, occurredAt: minutesAgo(120) }).expect(201);
    // What a forger adds: text that is no product, and a bot's event a minute ago (which would make the cart
    // too fresh to recover, or all of it a bot's).
    await publicEvent({ customerRef: 'ana', eventType: 'cart.item_added', eventData: { sku: 'www.evil-example.com', quantity: 9999 }, occurredAt: minutesAgo(110) }).expect(201);
    await publicEvent({ customerRef: 'ana', eventType: 'cart.item_added', eventData: { sku: 'MUG-1', quantity: 5 }, occurredAt: minutesAgo(1) }, GOOGLEBOT).expect(201);
    await publicEvent({ customerRef: 'ana', eventType: 'cart.item_removed', eventData: { sku: 'MUG-1' }, occurredAt: minutesAgo(1) }, null).expect(201);
    // A cart made only of unknown skus is empty; one made only of bot events is a bot's.
    await publicEvent({ customerRef: 'spam', eventType: 'cart.item_added', eventData: { sku: 'www.evil-example.com', quantity: 1 }, occurredAt: minutesAgo(120) }).expect(201);
    await publicEvent({ customerRef: 'crawler', eventType: 'cart.item_added', eventData: { sku: 'MUG-1', quantity: 1 }, occurredAt: minutesAgo(120) }, GOOGLEBOT).expect(201);

    const result = await recover();
    expect(result.recovered.map((c) => [c.customerRef, c.items])).to.deep.equal([['ana', [{ sku: 'MUG-1', quantity: 1 }]]]);
    const [cart] = result.recovered;
    expect(Date.parse(cart.lastActivityAt)).to.be.closeTo(Date.now() - 110 * 60_000, 60_000);
    expect(cart.message).to.not.include('evil');
    expect(result.skipped).to.deep.equal([{ customerRef: 'crawler', reason: 'bot' }, { customerRef: 'spam', reason: 'empty' }]);
  });

  it('POST /erp/orders refuses a clientId above 2147483647', async () => {
    const product = (await t.http.post('/api/v1/erp/products').set(as(tenant, 'editor')).send({ sku: 'P', name: 'P', priceCents: 100, physicalStock: 5 }).expect(201)).body.data;
    const order = (clientId: number | string) => t.http.post('/api/v1/erp/orders').set(as(tenant, 'editor')).set('Content-Type', 'application/json')
      .send(`{"clientId":${clientId},"paymentMethod":"bank_transfer","items":[{"productId":${product.number},"quantity":1,"unitPrice":100}]}`);
    for (const big of ['1e30', '2147483648']) {
      const res = await order(big);
      expect(res.status, JSON.stringify(res.body)).to.equal(400);
      expect(res.body.error.details.map((d: { path: string }) => d.path)).to.include('/clientId');
    }
    await order(2147483647).expect(201);
  });
});
