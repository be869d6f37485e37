import { expect } from 'chai';
import { packs } from '../../config/packs.js';
import { definePack } from '../../core/kernel/define-pack.js';
import { createTenant, startTestApp, type TestApp } from '../helpers/test-app.js';
import { as, superadmin } from '../helpers/tokens.js';

/** A pack whose idempotent routes fail once with a 5xx, or take as long as the test says. */
let failuresLeft = 0;
let runs = 0;
const gate: { open: () => void; promise: Promise<void> } = { open: () => {}, promise: Promise.resolve() };
const probe = definePack({
  name: 'idem-probe',
  routes(router) {
    router.post('/idem-probe/flaky', { summary: 'Fails once with a 500', tags: ['probe'], auth: 'tenant', status: 201, idempotent: true, body: { type: 'object' } }, () => {
      runs += 1;
      if (failuresLeft > 0) {
        failuresLeft -= 1;
        throw new Error('flaky');
      }
      return { run: runs };
    });
    router.post('/idem-probe/slow', { summary: 'Waits for the test', tags: ['probe'], auth: 'tenant', status: 201, idempotent: true, body: { type: 'object' } }, async () => {
      runs += 1;
      await gate.promise;
      return { run: runs };
    });
  },
});

describe('Idempotency-Key (kernel)', function () {
  this.timeout(30_000);
  let t: TestApp;
  let tenant: string;

  before(async () => {
    t = await startTestApp({ packs: [...packs, probe] });
  });

  after(async () => {
    await t.close();
  });

  beforeEach(async () => {
    tenant = await createTenant(t, 'idem');
  });

  const key = () => `k-${Math.random().toString(36).slice(2)}`;

  describe('POST /api/v1/erp/orders', () => {
    const product = async () => {
      const res = await t.http.post('/api/v1/erp/products').set(as(tenant, 'editor')).send({ sku: `S-${key()}`, name: 'x', priceCents: 1999, physicalStock: 5 });
      return res.body.data;
    };
    const order = (productId: number, k: string, quantity = 1) => t.http.post('/api/v1/erp/orders').set(as(tenant, 'editor')).set('Idempotency-Key', k)
      .send({ clientId: 1, paymentMethod: 'bank_transfer', items: [{ productId, quantity, unitPrice: 1999 }] });

    it('replays the first answer for the same key and body, creating one order, and answers 422 for another body', async () => {
      const p = await product();
      const k = key();
      const first = await order(p.number, k);
      expect(first.status).to.equal(201);
      expect(first.headers['idempotent-replayed']).to.equal(undefined);
      const second = await t.http.post('/api/v1/erp/orders').set(as(tenant, 'editor')).set('Idempotency-Key', k)
        .send({ items: [{ unitPrice: 1999, quantity: 1, productId: p.number }], paymentMethod: 'bank_transfer', clientId: 1 });
      expect(second.status).to.equal(201);
      expect(second.headers['idempotent-replayed']).to.equal('true');
      expect(second.body).to.deep.equal(first.body);
      const reused = await order(p.number, k, 2);
      expect(reused.status).to.equal(422);
      expect(reused.body.error.code).to.equal('idempotency_key_reused');
      const stock = (await t.http.get(`/api/v1/erp/products/${p.id}`).set(as(tenant, 'viewer'))).body.data.physicalStock;
      expect(stock).to.equal(4);
      expect((await t.http.get('/api/v1/erp/orders').set(as(tenant, 'viewer'))).body.data.pagination.total).to.equal(1);
    });

    it('creates one order for 10 concurrent requests with one key (the others replay it or answer 409 conflict)', async () => {
      const p = await product();
      const k = key();
      const results = await Promise.all(Array.from({ length: 10 }, () => order(p.number, k)));
      for (const r of results) expect(r.status, JSON.stringify(r.body)).to.be.oneOf([201, 409]);
      const created = results.filter((r) => r.status === 201);
      expect(new Set(created.map((r) => r.body.data.id)).size).to.equal(1);
      for (const r of results.filter((x) => x.status === 409)) expect(r.body.error.code).to.equal('conflict');
      expect((await t.http.get('/api/v1/erp/orders').set(as(tenant, 'viewer'))).body.data.pagination.total).to.equal(1);
    });

    it('replays a 4xx answer too, and scopes keys by tenant and path', async () => {
      const p = await product();
      const k = key();
      const refused = await order(p.number, k, 50);
      expect(refused.status).to.equal(409);
      expect(refused.body.error.code).to.equal('insufficient_stock');
      await t.http.post(`/api/v1/erp/products/${p.id}/stock-adjustments`).set(as(tenant, 'admin')).send({ delta: 100, reason: 'restock' }).expect(201);
      const again = await order(p.number, k, 50);
      expect(again.status).to.equal(409);
      expect(again.headers['idempotent-replayed']).to.equal('true');
      const other = await createTenant(t, 'idem');
      const q = (await t.http.post('/api/v1/erp/products').set(as(other, 'editor')).send({ sku: 'Q', name: 'x', priceCents: 1999, physicalStock: 5 })).body.data;
      const elsewhere = await t.http.post('/api/v1/erp/orders').set(as(other, 'editor')).set('Idempotency-Key', k)
        .send({ clientId: 1, paymentMethod: 'bank_transfer', items: [{ productId: q.number, quantity: 1, unitPrice: 1999 }] });
      expect(elsewhere.status).to.equal(201);
      expect(elsewhere.headers['idempotent-replayed']).to.equal(undefined);
    });

    it('scopes keys by caller: two callers of one tenant with the same key and body get answers of their own (#34)', async () => {
      const p = await product();
      const k = key();
      const send = (sub: string) => t.http.post('/api/v1/erp/orders').set(as(tenant, 'editor', { sub })).set('Idempotency-Key', k)
        .send({ clientId: 1, paymentMethod: 'bank_transfer', items: [{ productId: p.number, quantity: 1, unitPrice: 1999 }] });
      const alice = await send('alice');
      const bob = await send('bob');
      expect([alice.status, bob.status]).to.deep.equal([201, 201]);
      expect(bob.headers['idempotent-replayed']).to.equal(undefined);
      expect(bob.body.data.id).to.not.equal(alice.body.data.id);
      // Each caller's own retry still replays its own answer; a superadmin (the test key) acting for the tenant is another caller.
      const again = await send('bob');
      expect(again.headers['idempotent-replayed']).to.equal('true');
      expect(again.body.data.id).to.equal(bob.body.data.id);
      const admin = await t.http.post('/api/v1/data/crm/deal').set(superadmin(tenant)).set('Idempotency-Key', k).send({ title: 'x' });
      const mine = await t.http.post('/api/v1/data/crm/deal').set(as(tenant, 'editor', { sub: 'alice' })).set('Idempotency-Key', k).send({ title: 'x' });
      expect([admin.status, mine.status]).to.deep.equal([201, 201]);
      expect(mine.body.data.item.id).to.not.equal(admin.body.data.item.id);
      expect((await t.http.get('/api/v1/erp/orders').set(as(tenant, 'viewer'))).body.data.pagination.total).to.equal(2);
    });

    it('counts the query string as part of the request: another ?locale= with the same key and body answers 422, the same query replays (#33)', async () => {
      await t.http.patch(`/api/v1/tenants/${tenant}/site-config`).set(as(tenant, 'admin')).send({ defaultLocale: 'en', locales: ['en', 'de'] }).expect(200);
      const k = key();
      const body = { sku: `L-${key()}`, name: 'Tasse', priceCents: 500 };
      const post = (query: string) => t.http.post(`/api/v1/erp/products?${query}`).set(as(tenant, 'editor')).set('Idempotency-Key', k).send(body);
      const first = await post('locale=de');
      expect(first.status, first.text).to.equal(201);
      const again = await post('locale=de');
      expect([again.status, again.headers['idempotent-replayed']]).to.deep.equal([201, 'true']);
      const other = await post('locale=en');
      expect([other.status, other.body.error.code]).to.deep.equal([422, 'idempotency_key_reused']);
      const unknown = await post('locale=xx');
      expect([unknown.status, unknown.body.error.code]).to.deep.equal([422, 'idempotency_key_reused']);
      // A fresh key with the unknown locale gets the request's own answer.
      const fresh = await t.http.post('/api/v1/erp/products?locale=xx').set(as(tenant, 'editor')).set('Idempotency-Key', key()).send(body);
      expect([fresh.status, fresh.body.error.details[0].path]).to.deep.equal([400, '/locale']);
    });

    it('answers 400 for a key over 255 characters', async () => {
      const p = await product();
      const res = await order(p.number, 'k'.repeat(256));
      expect(res.status).to.equal(400);
      expect((await order(p.number, 'k'.repeat(255))).status).to.equal(201);
    });
  });

  describe('the mechanism', () => {
    it('keeps no 5xx: a retry with the same key runs again', async () => {
      failuresLeft = 1;
      const k = key();
      const send = () => t.http.post('/api/v1/idem-probe/flaky').set(as(tenant, 'editor')).set('Idempotency-Key', k).send({ a: 1 });
      expect((await send()).status).to.equal(500);
      const ok = await send();
      expect(ok.status).to.equal(201);
      expect(ok.headers['idempotent-replayed']).to.equal(undefined);
      const replay = await send();
      expect(replay.headers['idempotent-replayed']).to.equal('true');
      expect(replay.body).to.deep.equal(ok.body);
    });

    it('answers 409 conflict while the first request with the key is still running', async () => {
      let open!: () => void;
      gate.promise = new Promise<void>((resolve) => { open = resolve; });
      const k = key();
      const send = (body: object) => t.http.post('/api/v1/idem-probe/slow').set(as(tenant, 'editor')).set('Idempotency-Key', k).send(body);
      const first = send({ a: 1 }).then((r) => r);
      const started = runs;
      while (runs === started) await new Promise((r) => setTimeout(r, 10));
      const during = await send({ a: 1 });
      expect(during.status).to.equal(409);
      expect(during.body.error.code).to.equal('conflict');
      const otherBody = await send({ a: 2 });
      expect(otherBody.status).to.equal(422);
      open();
      expect((await first).status).to.equal(201);
      expect((await send({ a: 1 })).headers['idempotent-replayed']).to.equal('true');
    });
  });

  describe('every create POST honours it', () => {
    const replays = async (path: string, headers: Record<string, string>, body: object | Buffer, contentType?: string) => {
      const k = key();
      const send = () => {
        const req = t.http.post(path).set(headers).set('Idempotency-Key', k);
        if (contentType) req.set('Content-Type', contentType);
        return req.send(body as object);
      };
      const first = await send();
      expect(first.status, `${path} ${JSON.stringify(first.body)}`).to.be.within(200, 299);
      const second = await send();
      expect(second.status, path).to.equal(first.status);
      expect(second.headers['idempotent-replayed'], path).to.equal('true');
      expect(second.body, path).to.deep.equal(first.body);
      return first;
    };

    it('records (/data), content and pages, deals, products', async () => {
      await replays('/api/v1/data/crm/deal', as(tenant, 'editor'), { title: 'Data deal' });
      await replays(`/api/v1/tenant/${tenant}/content/page`, as(tenant, 'editor'), { title: 'About us' });
      await replays('/api/v1/crm/deals', as(tenant, 'editor'), { title: 'Deal' });
      await replays('/api/v1/erp/products', as(tenant, 'editor'), { sku: 'IDEM', name: 'x', priceCents: 1 });
      const deals = await t.http.get('/api/v1/crm/deals').set(as(tenant, 'viewer'));
      expect(deals.body.data.pagination.total).to.equal(2);
    });

    it('connectors, invitations and published events', async () => {
      await replays('/api/v1/connectors', as(tenant, 'admin'), { url: 'https://example.com/hook', events: ['erp.*'] });
      await replays(`/api/v1/tenants/${tenant}/invitations`, as(tenant, 'admin'), { email: 'new@example.com', role: 'editor' });
      await replays('/api/v1/events/publish', as(tenant, 'editor'), { event: 'shop.thing.happened', payload: { n: 1 } });
      expect((await t.http.get('/api/v1/connectors').set(as(tenant, 'admin'))).body.data.items).to.have.length(1);
    });

    it('storage objects (the raw body identified by its headers and length)', async () => {
      const headers = { ...as(tenant, 'editor'), 'X-Platform-Product': 'shop', 'X-Platform-Collection': 'img', 'X-Platform-Filename': 'a.txt' };
      await replays('/api/v1/storage/objects', headers, Buffer.from('hello'), 'text/plain');
    });

    it('tenants and provisioning (scoped to the calling superadmin)', async () => {
      const id = `idem-${Math.random().toString(36).slice(2, 8)}`;
      await replays('/api/v1/admin/tenants', superadmin(), { id, name: 'Idem tenant' });
      await replays('/api/v1/admin/tenants/provision', superadmin(), { tenant: { name: `Idem ${id}` } });
    });
  });
});

