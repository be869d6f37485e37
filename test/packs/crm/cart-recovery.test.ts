import { expect } from 'chai';
import type { PlatformEvent } from '../../../core/events/event.js';
import { systemContext } from '../../../core/base/request-context.js';
import { HttpReceiver } from '../../helpers/http-receiver.js';
import { createTenant, sharedTestApp, startTestApp, type TestApp } from '../../helpers/test-app.js';
import { as } from '../../helpers/tokens.js';
import { ensureProduct } from './cart-products.js';

const RECOVER = '/api/v1/crm/recover-abandoned-carts';
const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
const CODE = /^[ABCDEFGHJKLMNPQRSTUVWXYZ23456789]{12}$/;
const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000).toISOString();
const daysAgo = (d: number) => minutesAgo(d * 24 * 60);

describe('CRM abandoned-cart recovery', () => {
  let t: TestApp;
  let tenant: string;
  const abandoned: PlatformEvent[] = [];

  before(async () => {
    t = await sharedTestApp();
    t.app.kernel.events.on('crm.cart.abandoned', (event) => { abandoned.push(event); });
  });

  beforeEach(async () => {
    tenant = await createTenant(t, 'cart');
  });

  const event = async (customerRef: string, eventType: string, occurredAt: string, eventData: Record<string, unknown> = {}, on = tenant) => {
    const res = await t.http.post('/api/v1/crm/events').set(as(on, 'editor')).send({ customerRef, eventType, occurredAt, eventData });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
  };
  const add = async (customerRef: string, sku: string, quantity: number, occurredAt: string, on = tenant) => {
    await ensureProduct(t, on, sku);
    await event(customerRef, 'cart.item_added', occurredAt, { sku, quantity }, on);
  };
  const recover = async (body: Record<string, unknown> = {}, on = tenant) => {
    const res = await t.http.post(RECOVER).set(as(on, 'admin')).send(body);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body.data as { recovered: any[]; skipped: Array<{ customerRef: string; reason: string }>; ai: string };
  };
  const coupons = async (query: Record<string, string> = {}) => {
    const res = await t.http.get('/api/v1/crm/coupons').query(query).set(as(tenant, 'admin'));
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body.data.items as any[];
  };

  it('recovers an abandoned cart: net items, a coupon bound to the customer, a message and crm.cart.abandoned', async () => {
    await add('ana', 'MUG-1', 2, minutesAgo(180));
    await add('ana', 'TEE-2', 1, minutesAgo(170));
    await add('ana', 'MUG-1', 1, minutesAgo(160));
    await event('ana', 'cart.item_removed', minutesAgo(150), { sku: 'MUG-1', quantity: 2 });
    await add('ana', 'CAP-3', 1, minutesAgo(140));
    await event('ana', 'cart.item_removed', minutesAgo(130), { sku: 'CAP-3' });
    await event('ana', 'page.viewed', minutesAgo(10));

    const result = await recover({ coupon: { percentOff: 15, expiresInDays: 3 } });
    expect(result.skipped).to.deep.equal([]);
    expect(result.ai).to.equal('off');
    expect(result.recovered).to.have.length(1);
    const [cart] = result.recovered;
    expect(cart.customerRef).to.equal('ana');
    expect(cart.items).to.deep.equal([{ sku: 'MUG-1', quantity: 1 }, { sku: 'TEE-2', quantity: 1 }]);
    expect(Date.parse(cart.lastActivityAt)).to.be.closeTo(Date.now() - 130 * 60_000, 60_000);
    expect(cart.coupon.code).to.match(CODE);
    expect(cart.coupon.percentOff).to.equal(15);
    expect(Date.parse(cart.coupon.expiresAt)).to.be.closeTo(Date.now() + 3 * 86400_000, 60_000);
    expect(cart.recommendations).to.deep.equal([]);
    expect(cart.message).to.include(cart.coupon.code).and.include('MUG-1').and.include('15%');

    expect(await coupons()).to.deep.equal([{ code: cart.coupon.code, customerRef: 'ana', percentOff: 15, expiresAt: cart.coupon.expiresAt, redeemedAt: null, orderId: null }]);
    const emitted = abandoned.filter((e) => e.tenantId === tenant);
    expect(emitted).to.have.length(1);
    expect(emitted[0].payload).to.deep.equal({ customerRef: 'ana', items: cart.items, coupon: cart.coupon, recommendations: [], message: cart.message });
  });

  it('gives each skip reason: empty, bot, too_old, not_old_enough; customers without cart events are not listed', async () => {
    await add('empty-cart', 'A', 1, minutesAgo(120));
    await event('empty-cart', 'cart.item_removed', minutesAgo(110), { sku: 'A' });
    const bot = await t.http.post(`/api/v1/public/tenant/${tenant}/events`).set('User-Agent', GOOGLEBOT)
      .send({ customerRef: 'crawler', eventType: 'cart.item_added', eventData: { sku: 'A', quantity: 1 }, occurredAt: minutesAgo(120) });
    expect(bot.status).to.equal(201);
    await add('old-cart', 'A', 1, daysAgo(8));
    await add('fresh-cart', 'A', 1, minutesAgo(5));
    await event('browser-only', 'page.viewed', minutesAgo(120));
    await add('bought', 'A', 1, minutesAgo(200));
    await event('bought', 'checkout.completed', minutesAgo(190), { orderId: 'o-1' });

    const result = await recover();
    expect(result.recovered).to.deep.equal([]);
    expect(result.skipped).to.deep.equal([
      { customerRef: 'crawler', reason: 'bot' },
      { customerRef: 'empty-cart', reason: 'empty' },
      { customerRef: 'fresh-cart', reason: 'not_old_enough' },
      { customerRef: 'old-cart', reason: 'too_old' },
    ]);
    expect(await coupons()).to.deep.equal([]);
  });

  it('gives the first reason in the contract\'s order when several apply (empty before too_old, bot before not_old_enough)', async () => {
    await add('old-and-empty', 'A', 1, daysAgo(9));
    await event('old-and-empty', 'cart.item_removed', daysAgo(9), { sku: 'A' });
    await t.http.post(`/api/v1/public/tenant/${tenant}/events`).set('User-Agent', GOOGLEBOT)
      .send({ customerRef: 'fresh-bot', eventType: 'cart.item_added', eventData: { sku: 'A', quantity: 1 } }).expect(201);
    const result = await recover();
    expect(result.skipped).to.deep.equal([{ customerRef: 'fresh-bot', reason: 'bot' }, { customerRef: 'old-and-empty', reason: 'empty' }]);
  });

  it('takes olderThanMinutes and maxAgeDays from the body', async () => {
    await add('c1', 'A', 1, minutesAgo(20));
    await add('c2', 'A', 1, daysAgo(2));
    const result = await recover({ olderThanMinutes: 10, maxAgeDays: 1, dryRun: true });
    expect(result.recovered.map((c) => c.customerRef)).to.deep.equal(['c1']);
    expect(result.skipped).to.deep.equal([{ customerRef: 'c2', reason: 'too_old' }]);
  });

  it('counts only the cart events since the last checkout.completed', async () => {
    await add('returning', 'OLD', 1, minutesAgo(300));
    await event('returning', 'checkout.completed', minutesAgo(290));
    await add('returning', 'NEW', 2, minutesAgo(120));
    const result = await recover();
    expect(result.recovered.map((c) => c.items)).to.deep.equal([[{ sku: 'NEW', quantity: 2 }]]);
  });

  it('is idempotent per cart: a second run skips it as already_recovered and makes no coupon; new cart activity is a new cart', async () => {
    await add('ana', 'A', 1, minutesAgo(120));
    const first = await recover();
    expect(first.recovered).to.have.length(1);
    const second = await recover();
    expect(second.recovered).to.deep.equal([]);
    expect(second.skipped).to.deep.equal([{ customerRef: 'ana', reason: 'already_recovered' }]);
    expect(await coupons()).to.have.length(1);
    expect(abandoned.filter((e) => e.tenantId === tenant)).to.have.length(1);

    await add('ana', 'B', 1, minutesAgo(90));
    const third = await recover();
    expect(third.recovered.map((c) => c.items)).to.deep.equal([[{ sku: 'A', quantity: 1 }, { sku: 'B', quantity: 1 }]]);
    expect(await coupons({ customerRef: 'ana' })).to.have.length(2);
  });

  it('makes one coupon per cart when five runs race', async () => {
    for (const c of ['a', 'b', 'c']) await add(c, 'A', 1, minutesAgo(120));
    const runs = await Promise.all(Array.from({ length: 5 }, () => t.http.post(RECOVER).set(as(tenant, 'admin')).send({})));
    expect(runs.map((r) => r.status)).to.deep.equal([200, 200, 200, 200, 200]);
    const recovered = runs.flatMap((r) => r.body.data.recovered.map((c: any) => c.customerRef)).sort();
    expect(recovered).to.deep.equal(['a', 'b', 'c']);
    expect((await coupons()).map((c) => c.customerRef).sort()).to.deep.equal(['a', 'b', 'c']);
    expect(abandoned.filter((e) => e.tenantId === tenant)).to.have.length(3);
  });

  it('writes nothing on dryRun: coupon null, no coupon made, no event, and a real run afterwards still recovers', async () => {
    await add('ana', 'A', 3, minutesAgo(120));
    const dry = await recover({ dryRun: true });
    expect(dry.recovered).to.have.length(1);
    expect(dry.recovered[0].coupon).to.equal(null);
    expect(dry.recovered[0].message).to.include('3 × A');
    expect(await coupons()).to.deep.equal([]);
    expect(abandoned.filter((e) => e.tenantId === tenant)).to.have.length(0);
    expect((await recover()).recovered).to.have.length(1);
  });

  it('says "ai": "unavailable" for use_ai without a configured LLM, and uses the template', async () => {
    await add('ana', 'A', 1, minutesAgo(120));
    const result = await recover({ use_ai: true, dryRun: true });
    expect(result.ai).to.equal('unavailable');
    expect(result.recovered[0].message).to.include('1 × A');
  });

  it('answers 400 for a bad body and 403 to an editor; GET /crm/coupons needs admin too', async () => {
    for (const body of [{ olderThanMinutes: -1 }, { maxAgeDays: 0 }, { coupon: { percentOff: 0 } }, { coupon: { percentOff: 101 } }, { dryRun: 'yes' }, { colour: 'red' }]) {
      const res = await t.http.post(RECOVER).set(as(tenant, 'admin')).send(body);
      expect(res.status, JSON.stringify(body)).to.equal(400);
      expect(res.body.error.code).to.equal('validation_failed');
    }
    expect((await t.http.post(RECOVER).set(as(tenant, 'editor')).send({})).status).to.equal(403);
    expect((await t.http.get('/api/v1/crm/coupons').set(as(tenant, 'editor'))).status).to.equal(403);
  });

  it('keeps tenants apart: carts, coupons and recovered marks', async () => {
    await add('ana', 'A', 1, minutesAgo(120));
    const other = await createTenant(t, 'cart');
    await add('ana', 'B', 1, minutesAgo(120), other);
    expect((await recover()).recovered.map((c) => c.items)).to.deep.equal([[{ sku: 'A', quantity: 1 }]]);
    const theirs = await recover({}, other);
    expect(theirs.recovered.map((c) => c.items)).to.deep.equal([[{ sku: 'B', quantity: 1 }]]);
    expect(await coupons()).to.have.length(1);
  });

  describe('with a configured LLM', () => {
    const llm = new HttpReceiver();
    let ai: TestApp;

    before(async () => {
      await llm.start();
      ai = await startTestApp({ env: { LLM_BASE_URL: `${llm.url}/v1`, LLM_MODEL: 'test-model', LLM_API_KEY: 'llm-key' } });
    });

    after(async () => {
      await ai.close();
      await llm.stop();
    });

    it('has the LLM write the message from the cart\'s facts, coupon code included', async () => {
      llm.responder = (req, res) => {
        const facts = JSON.parse(JSON.parse(req.body).messages[1].content);
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ choices: [{ message: { content: `Your mug misses you! Code ${facts.coupon.code} takes ${facts.coupon.percentOff}% off.` } }] }));
      };
      const shop = await createTenant(ai, 'cart');
      await ensureProduct(ai, shop, 'MUG-1');
      await ai.http.post('/api/v1/crm/events').set(as(shop, 'editor'))
        .send({ customerRef: 'ana', eventType: 'cart.item_added', eventData: { sku: 'MUG-1', quantity: 1 }, occurredAt: minutesAgo(120) }).expect(201);
      const res = await ai.http.post(RECOVER).set(as(shop, 'admin')).send({ use_ai: true });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      const [cart] = res.body.data.recovered;
      expect(res.body.data.ai).to.equal('used');
      expect(cart.message).to.equal(`Your mug misses you! Code ${cart.coupon.code} takes 10% off.`);
      const call = llm.requests.find((r) => r.path === '/v1/chat/completions')!;
      expect(call.headers.authorization).to.equal('Bearer llm-key');
      expect(JSON.parse(call.body).model).to.equal('test-model');
    });

    it('falls back to the template ("ai": "failed") when the LLM errs', async () => {
      llm.responder = (_req, res) => { res.writeHead(500); res.end(); };
      const shop = await createTenant(ai, 'cart');
      await ensureProduct(ai, shop, 'MUG-1');
      await ai.http.post('/api/v1/crm/events').set(as(shop, 'editor'))
        .send({ customerRef: 'ana', eventType: 'cart.item_added', eventData: { sku: 'MUG-1', quantity: 1 }, occurredAt: minutesAgo(120) }).expect(201);
      const res = await ai.http.post(RECOVER).set(as(shop, 'admin')).send({ use_ai: true });
      expect(res.body.data.ai).to.equal('failed');
      expect(res.body.data.recovered[0].message).to.include('1 × MUG-1');
    });
  });
});

describe('CRM abandoned-cart recovery on a schedule (CART_RECOVERY_INTERVAL_MINUTES)', () => {
  let first: TestApp;
  let second: TestApp;
  const abandoned: PlatformEvent[] = [];

  before(async () => {
    // Two service processes on one database, each with the schedule on (every 1.2 s).
    first = await startTestApp({ env: { CART_RECOVERY_INTERVAL_MINUTES: '0.02' } });
    second = await startTestApp({ env: { CART_RECOVERY_INTERVAL_MINUTES: '0.02' }, database: first.database });
    for (const app of [first, second]) app.app.kernel.events.on('crm.cart.abandoned', (event) => { abandoned.push(event); });
  });

  after(async () => {
    await second.close();
    await first.close();
  });

  it('recovers every tenant\'s abandoned carts once, whichever process runs, and leaves tenants without crm alone', async () => {
    const shop = await createTenant(first, 'sched');
    const off = await createTenant(first, 'sched');
    // A cart of a tenant whose crm module is off (events kept from when it was on).
    await first.app.kernel.tenants.setModule(systemContext(null), off, 'crm', false);
    await first.app.kernel.db.knex('crm_events').insert({
      tenant_id: off, id: '0190a5e4-0000-7000-8000-000000000001', event_id: null, event_type: 'cart.item_added', customer_ref: 'a',
      event_data: JSON.stringify({ sku: 'A', quantity: 1 }), occurred_at: minutesAgo(120), received_at: minutesAgo(120), bot: false,
    });
    await ensureProduct(first, shop, 'A');
    for (const customerRef of ['a', 'b', 'c']) {
      await first.http.post('/api/v1/crm/events').set(as(shop, 'editor'))
        .send({ customerRef, eventType: 'cart.item_added', eventData: { sku: 'A', quantity: 1 }, occurredAt: minutesAgo(120) }).expect(201);
    }
    const coupons = async () => (await first.http.get('/api/v1/crm/coupons').set(as(shop, 'admin'))).body.data.items as any[];
    const deadline = Date.now() + 15_000;
    while ((await coupons()).length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    // Several more intervals in both processes: still one coupon and one event per cart.
    await new Promise((r) => setTimeout(r, 3_000));
    expect((await coupons()).map((c) => c.customerRef).sort()).to.deep.equal(['a', 'b', 'c']);
    expect(abandoned.filter((e) => e.tenantId === shop).map((e) => e.payload.customerRef).sort()).to.deep.equal(['a', 'b', 'c']);
    expect(abandoned.filter((e) => e.tenantId === off)).to.deep.equal([]);
  });
});
