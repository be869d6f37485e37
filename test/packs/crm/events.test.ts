import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Response } from 'supertest';
import { systemContext } from '../../../core/base/request-context.js';
import { createTenant, sharedTestApp, type TestApp } from '../../helpers/test-app.js';
import { as } from '../../helpers/tokens.js';
import { withinOneWindow } from '../../helpers/rate-window.js';

const EVENTS = '/api/v1/crm/events';
const publicEvents = (tenant: string) => `/api/v1/public/tenant/${tenant}/events`;
const BROWSER = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36';
const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';

const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000).toISOString();

describe('CRM first-party events', () => {
  let t: TestApp;
  let tenant: string;
  const responses: Array<{ label: string; res: Response }> = [];

  before(async () => {
    t = await sharedTestApp();
  });

  beforeEach(async () => {
    tenant = await createTenant(t, 'ev');
  });

  afterEach(() => {
    for (const { label, res } of responses.splice(0)) expect(res.headers['set-cookie'], `Set-Cookie on ${label}`).to.equal(undefined);
  });

  const kept = (res: Response) => { responses.push({ label: `${res.status} ${JSON.stringify(res.body).slice(0, 80)}`, res }); return res; };
  const post = async (body: Record<string, unknown>, role: 'admin' | 'editor' | 'viewer' = 'editor', on = tenant) =>
    kept(await t.http.post(EVENTS).set(as(on, role)).send(body));
  const postPublic = async (body: Record<string, unknown>, userAgent = BROWSER, on = tenant) =>
    kept(await t.http.post(publicEvents(on)).set('User-Agent', userAgent).send(body));
  const list = async (query: Record<string, string | number> = {}, on = tenant) => {
    const res = kept(await t.http.get(EVENTS).query(query).set(as(on, 'viewer')));
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body.data as { items: any[]; pagination: any };
  };
  const paths = (res: Response) => res.body.error.details.map((d: { path: string }) => d.path);

  describe('POST /api/v1/crm/events', () => {
    it('stores an event and answers 201 { id, duplicate: false }', async () => {
      const eventId = randomUUID();
      const res = await post({ eventType: 'cart.item_added', customerRef: 'c-1', eventData: { sku: 'MUG-1', quantity: 2 }, eventId });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      expect(res.body.data).to.deep.equal({ id: res.body.data.id, duplicate: false });
      const { items } = await list();
      expect(items).to.have.length(1);
      expect(items[0]).to.include({ id: res.body.data.id, eventId, eventType: 'cart.item_added', customerRef: 'c-1', bot: false });
      expect(items[0].eventData).to.deep.equal({ sku: 'MUG-1', quantity: 2 });
      expect(Date.parse(items[0].occurredAt)).to.be.closeTo(Date.now(), 60_000);
      expect(items[0].receivedAt).to.equal(items[0].occurredAt);
    });

    it('answers 200 { duplicate: true } for the same eventId and stores nothing new', async () => {
      const eventId = randomUUID();
      const body = { eventType: 'page.viewed', customerRef: 'c-dup', eventId, eventData: { path: '/' } };
      const first = await post(body);
      const again = await post({ ...body, eventData: { path: '/other' } });
      expect(again.status).to.equal(200);
      expect(again.body.data).to.deep.equal({ id: first.body.data.id, duplicate: true });
      const { items, pagination } = await list();
      expect(pagination.total).to.equal(1);
      expect(items[0].eventData).to.deep.equal({ path: '/' });
    });

    it('stores one event when 20 retries of one eventId race', async () => {
      const eventId = randomUUID();
      const results = await Promise.all(Array.from({ length: 20 }, () =>
        t.http.post(EVENTS).set(as(tenant, 'editor')).send({ eventType: 'checkout.started', customerRef: 'c-race', eventId })));
      expect(results.map((r) => r.status).sort()).to.deep.equal([...Array(19).fill(200), 201]);
      expect(new Set(results.map((r) => r.body.data.id)).size).to.equal(1);
      expect((await list()).pagination.total).to.equal(1);
    });

    it('keeps eventIds per tenant: another tenant may use the same one', async () => {
      const eventId = randomUUID();
      const other = await createTenant(t, 'ev');
      expect((await post({ eventType: 'page.viewed', customerRef: 'c', eventId })).status).to.equal(201);
      expect((await post({ eventType: 'page.viewed', customerRef: 'c', eventId }, 'editor', other)).status).to.equal(201);
    });

    it('stores unknown types as they are', async () => {
      const res = await post({ eventType: 'newsletter.subscribed', customerRef: 'c-2', eventData: { list: 'weekly' } });
      expect(res.status).to.equal(201);
      expect((await list()).items[0]).to.include({ eventType: 'newsletter.subscribed' });
    });

    it('takes a back-dated occurredAt within 30 days and normalises it to UTC', async () => {
      const day = new Date(Date.now() - 3 * 86400_000).toISOString().slice(0, 10);
      const res = await post({ eventType: 'page.viewed', customerRef: 'c-3', occurredAt: `${day}T10:00:00+02:00` });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      expect((await list()).items[0].occurredAt).to.equal(`${day}T08:00:00.000Z`);
      const recent = await post({ eventType: 'page.viewed', customerRef: 'c-3', occurredAt: minutesAgo(29 * 24 * 60) });
      expect(recent.status).to.equal(201);
    });

    it('answers 400 naming /occurredAt more than 5 minutes ahead or 30 days back', async () => {
      for (const occurredAt of [new Date(Date.now() + 6 * 60_000).toISOString(), minutesAgo(31 * 24 * 60), 'yesterday']) {
        const res = await post({ eventType: 'page.viewed', customerRef: 'c', occurredAt });
        expect(res.status, occurredAt).to.equal(400);
        expect(res.body.error.code).to.equal('validation_failed');
        expect(paths(res)).to.deep.equal(['/occurredAt']);
      }
      expect((await post({ eventType: 'page.viewed', customerRef: 'c', occurredAt: new Date(Date.now() + 4 * 60_000).toISOString() })).status).to.equal(201);
    });

    it('answers 400 for a customerRef that is an e-mail address, empty or over 128 characters', async () => {
      for (const customerRef of ['ana@example.com', '', 'x'.repeat(129)]) {
        const res = await post({ eventType: 'page.viewed', customerRef });
        expect(res.status).to.equal(400);
        expect(paths(res)).to.deep.equal(['/customerRef']);
      }
      expect((await post({ eventType: 'page.viewed', customerRef: 'x'.repeat(128) })).status).to.equal(201);
    });

    it('answers 400 for eventData over 16 KiB', async () => {
      const big = await post({ eventType: 'page.viewed', customerRef: 'c', eventData: { text: 'x'.repeat(16 * 1024) } });
      expect(big.status).to.equal(400);
      expect(paths(big)).to.deep.equal(['/eventData']);
      const fits = await post({ eventType: 'page.viewed', customerRef: 'c', eventData: { text: 'x'.repeat(16 * 1024 - 20) } });
      expect(fits.status).to.equal(201);
    });

    it('answers 400 for a bad eventType, eventId, unknown key, or known-type data without its fields', async () => {
      const cases: Array<[Record<string, unknown>, string[]]> = [
        [{ eventType: 'Cart.Added', customerRef: 'c' }, ['/eventType']],
        [{ eventType: 'cart', customerRef: 'c' }, ['/eventType']],
        [{ eventType: 'page.viewed', customerRef: 'c', eventId: 'not-a-uuid' }, ['/eventId']],
        [{ eventType: 'page.viewed', customerRef: 'c', ip: '1.2.3.4' }, ['/ip']],
        [{ eventType: 'page.viewed' }, ['/customerRef']],
        [{ eventType: 'cart.item_added', customerRef: 'c', eventData: { sku: 'A' } }, ['/eventData/quantity']],
        [{ eventType: 'cart.item_added', customerRef: 'c', eventData: { sku: 'A', quantity: 0 } }, ['/eventData/quantity']],
        [{ eventType: 'cart.item_removed', customerRef: 'c', eventData: {} }, ['/eventData/sku']],
        [{ eventType: 'product.viewed', customerRef: 'c' }, ['/eventData']], // its data is required: the type's fields are
      ];
      for (const [body, expected] of cases) {
        const res = await post(body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(res.body.error.code).to.equal('validation_failed');
        expect(paths(res), JSON.stringify(body)).to.deep.equal(expected);
      }
      expect((await list()).pagination.total).to.equal(0);
    });

    it('answers 403 forbidden to a viewer', async () => {
      const res = await post({ eventType: 'page.viewed', customerRef: 'c' }, 'viewer');
      expect(res.status).to.equal(403);
    });
  });

  describe('POST /api/v1/public/tenant/:tenantId/events', () => {
    it('stores a known event from a browser without credentials, bot: false', async () => {
      const res = await postPublic({ eventType: 'product.viewed', customerRef: 'anon-7f3', eventData: { sku: 'MUG-1' } });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      expect(res.body.data.duplicate).to.equal(false);
      const [event] = (await list()).items;
      expect(event).to.include({ eventType: 'product.viewed', customerRef: 'anon-7f3', bot: false });
    });

    it('stores an event from a bot User-Agent with bot: true', async () => {
      await postPublic({ eventType: 'page.viewed', customerRef: 'crawler' }, GOOGLEBOT);
      expect((await list()).items[0]).to.include({ customerRef: 'crawler', bot: true });
    });

    it('deduplicates by eventId like the authenticated route', async () => {
      const eventId = randomUUID();
      const first = await postPublic({ eventType: 'page.viewed', customerRef: 'c', eventId });
      const again = await postPublic({ eventType: 'page.viewed', customerRef: 'c', eventId });
      expect([first.status, again.status]).to.deep.equal([201, 200]);
      expect(again.body.data).to.deep.equal({ id: first.body.data.id, duplicate: true });
    });

    it('answers 400 for a type that is not a known one', async () => {
      const res = await postPublic({ eventType: 'order.refunded', customerRef: 'c' });
      expect(res.status).to.equal(400);
      expect(paths(res)).to.deep.equal(['/eventType']);
    });

    it('never stores the client address, not even in the rate-limit counters', async () => {
      await postPublic({ eventType: 'page.viewed', customerRef: 'c', eventData: { path: '/home' } });
      const { knex } = t.app.kernel.db;
      const rows = await knex('crm_events').where({ tenant_id: tenant });
      const counters = await knex('rate_limits').where({ tenant_id: tenant });
      expect(rows).to.have.length(1);
      expect(counters.length).to.be.greaterThan(0);
      expect(JSON.stringify([rows, counters])).not.to.match(/127\.0\.0\.1|::1|::ffff/);
    });

    it('answers 429 rate_limited with Retry-After after 60 events a minute from one address', async () => {
      await withinOneWindow(60_000, 15_000);
      const statuses: number[] = [];
      for (let i = 0; i < 60; i += 5) {
        const batch = await Promise.all(Array.from({ length: 5 }, () =>
          t.http.post(publicEvents(tenant)).set('User-Agent', BROWSER).send({ eventType: 'page.viewed', customerRef: 'c' })));
        statuses.push(...batch.map((r) => r.status));
      }
      expect(statuses.every((s) => s === 201)).to.equal(true);
      const over = await postPublic({ eventType: 'page.viewed', customerRef: 'c' });
      expect(over.status).to.equal(429);
      expect(over.body.error.code).to.equal('rate_limited');
      expect(Number(over.headers['retry-after'])).to.be.within(1, 60);
      // Another tenant's storefront is counted apart.
      const other = await createTenant(t, 'ev');
      expect((await postPublic({ eventType: 'page.viewed', customerRef: 'c' }, BROWSER, other)).status).to.equal(201);
      expect((await list()).pagination.total).to.equal(60);
    });

    it('answers 404 when the tenant has no crm module, and 404 tenant_not_found for an unknown tenant', async () => {
      await t.app.kernel.tenants.setModule(systemContext(null), tenant, 'crm', false);
      const disabled = await postPublic({ eventType: 'page.viewed', customerRef: 'c' });
      expect(disabled.status).to.equal(404);
      expect(disabled.body.error.code).to.equal('not_found');
      const unknown = await postPublic({ eventType: 'page.viewed', customerRef: 'c' }, BROWSER, 'no-such-shop');
      expect(unknown.status).to.equal(404);
      expect(unknown.body.error.code).to.equal('tenant_not_found');
    });
  });

  describe('GET /api/v1/crm/events', () => {
    beforeEach(async () => {
      await post({ eventType: 'page.viewed', customerRef: 'ana', occurredAt: minutesAgo(30) });
      await post({ eventType: 'cart.item_added', customerRef: 'ana', eventData: { sku: 'A', quantity: 1 }, occurredAt: minutesAgo(20) });
      await post({ eventType: 'cart.item_added', customerRef: 'ben', eventData: { sku: 'B', quantity: 3 }, occurredAt: minutesAgo(10) });
      await post({ eventType: 'checkout.started', customerRef: 'ana', occurredAt: minutesAgo(5) });
    });

    it('lists newest occurredAt first with pagination', async () => {
      const { items, pagination } = await list();
      expect(items.map((e) => e.eventType)).to.deep.equal(['checkout.started', 'cart.item_added', 'cart.item_added', 'page.viewed']);
      expect(pagination).to.deep.equal({ limit: 50, offset: 0, total: 4, hasMore: false, nextCursor: null });
    });

    it('filters by customerRef, eventType and the from/to bounds of occurredAt', async () => {
      expect((await list({ customerRef: 'ana' })).items.map((e) => e.eventType)).to.deep.equal(['checkout.started', 'cart.item_added', 'page.viewed']);
      expect((await list({ eventType: 'cart.item_added' })).items.map((e) => e.customerRef)).to.deep.equal(['ben', 'ana']);
      expect((await list({ from: minutesAgo(25), to: minutesAgo(7) })).items.map((e) => e.customerRef)).to.deep.equal(['ben', 'ana']);
      expect((await list({ customerRef: 'ana', eventType: 'cart.item_added' })).items).to.have.length(1);
    });

    it('pages with limit and offset', async () => {
      const first = await list({ limit: 3 });
      expect(first.items).to.have.length(3);
      expect(first.pagination).to.include({ limit: 3, offset: 0, total: 4, hasMore: true });
      const second = await list({ limit: 3, offset: 3 });
      expect(second.items.map((e) => e.eventType)).to.deep.equal(['page.viewed']);
      expect(second.pagination.hasMore).to.equal(false);
      expect((await list({ count: 'false' })).pagination.total).to.equal(null);
    });

    it('answers 400 for a limit outside 1..200 or a bad from', async () => {
      for (const query of [{ limit: 0 }, { limit: 201 }, { from: 'soon' }]) {
        const res = kept(await t.http.get(EVENTS).query(query).set(as(tenant, 'viewer')));
        expect(res.status, JSON.stringify(query)).to.equal(400);
        expect(res.body.error.code).to.equal('validation_failed');
      }
    });

    it('shows a tenant only its own events', async () => {
      const other = await createTenant(t, 'ev');
      expect((await list({}, other)).items).to.deep.equal([]);
      const res = kept(await t.http.get(EVENTS).set(as(other, 'viewer')).set('X-Tenant-Id', tenant));
      expect(res.status).to.equal(403);
    });

    it('answers 403 module_disabled when crm is disabled', async () => {
      await t.app.kernel.tenants.setModule(systemContext(null), tenant, 'crm', false);
      const res = kept(await t.http.get(EVENTS).set(as(tenant, 'viewer')));
      expect(res.status).to.equal(403);
      expect(res.body.error.code).to.equal('module_disabled');
    });
  });

  describe('DELETE /api/v1/crm/customers/:customerRef/events', () => {
    it('erases one customer\'s events and answers { deleted }', async () => {
      await post({ eventType: 'page.viewed', customerRef: 'forget-me' });
      await post({ eventType: 'cart.item_added', customerRef: 'forget-me', eventData: { sku: 'A', quantity: 1 } });
      await post({ eventType: 'page.viewed', customerRef: 'keep-me' });
      const other = await createTenant(t, 'ev');
      await post({ eventType: 'page.viewed', customerRef: 'forget-me' }, 'editor', other);

      const res = kept(await t.http.delete('/api/v1/crm/customers/forget-me/events').set(as(tenant, 'admin')));
      expect(res.status).to.equal(200);
      expect(res.body.data).to.deep.equal({ deleted: 2 });
      expect((await list()).items.map((e) => e.customerRef)).to.deep.equal(['keep-me']);
      expect((await list({}, other)).items).to.have.length(1);
      const again = kept(await t.http.delete('/api/v1/crm/customers/forget-me/events').set(as(tenant, 'admin')));
      expect(again.body.data).to.deep.equal({ deleted: 0 });
    });

    it('lets an erased eventId be stored again', async () => {
      const eventId = randomUUID();
      await post({ eventType: 'page.viewed', customerRef: 'again', eventId });
      await t.http.delete('/api/v1/crm/customers/again/events').set(as(tenant, 'admin')).expect(200);
      expect((await post({ eventType: 'page.viewed', customerRef: 'again', eventId })).status).to.equal(201);
    });

    it('answers 403 forbidden to an editor', async () => {
      const res = kept(await t.http.delete('/api/v1/crm/customers/c/events').set(as(tenant, 'editor')));
      expect(res.status).to.equal(403);
    });
  });
});
