import { expect } from 'chai';
import { systemContext } from '../../core/base/request-context.js';
import { createTenant, sharedTestApp, startTestApp, type TestApp } from '../helpers/test-app.js';
import { as } from '../helpers/tokens.js';

describe('connectors API', () => {
  let t: TestApp;
  let tenant: string;

  before(async () => {
    t = await sharedTestApp();
  });

  beforeEach(async () => {
    tenant = await createTenant(t, 'conn');
  });

  describe('POST /api/v1/connectors', () => {
    it('creates a connector and never returns its secret', async () => {
      const res = await t.http.post('/api/v1/connectors').set(as(tenant, 'admin')).send({
        url: 'http://127.0.0.1:9/hook', events: ['erp.*', 'tenant.member.invited'], product: 'shop',
        description: 'ERP sync', secret: 'my-own-secret-0123456789',
      });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      const c = res.body.data;
      expect(c).to.include({ url: 'http://127.0.0.1:9/hook', product: 'shop', active: true, description: 'ERP sync', hasSecret: true });
      expect(c.events).to.deep.equal(['erp.*', 'tenant.member.invited']);
      expect(JSON.stringify(res.body)).not.to.contain('my-own-secret');
      const read = await t.http.get(`/api/v1/connectors/${c.id}`).set(as(tenant, 'admin'));
      expect(read.status).to.equal(200);
      expect(read.body.data).to.deep.equal(c);
      expect(JSON.stringify(read.body)).not.to.contain('my-own-secret');
    });

    it('answers 400 validation_failed naming each failing path', async () => {
      const res = await t.http.post('/api/v1/connectors').set(as(tenant, 'admin')).send({ url: 'ftp://x', events: ['Bad Name', 'ok.event'], active: 'yes' });
      expect(res.status).to.equal(400);
      expect(res.body.error.code).to.equal('validation_failed');
      const paths = res.body.error.details.map((d: { path: string }) => d.path);
      expect(paths).to.include.members(['/url', '/events/0', '/active']);
    });

    it('answers 403 forbidden for an editor (connectors need the admin role)', async () => {
      const res = await t.http.post('/api/v1/connectors').set(as(tenant, 'editor')).send({ url: 'http://127.0.0.1:9/', events: ['a.b'] });
      expect(res.status).to.equal(403);
      expect(res.body.error.code).to.equal('forbidden');
    });
  });

  describe('GET/PATCH/DELETE /api/v1/connectors/:id', () => {
    it('lists, updates and deletes a connector of the tenant only', async () => {
      const created = await t.http.post('/api/v1/connectors').set(as(tenant, 'admin')).send({ url: 'http://127.0.0.1:9/a', events: ['crm.deal.*'] });
      const id = created.body.data.id;
      const list = await t.http.get('/api/v1/connectors').set(as(tenant, 'admin'));
      expect(list.status).to.equal(200);
      expect(list.body.data.items.map((c: { id: string }) => c.id)).to.deep.equal([id]);
      expect(list.body.data.pagination).to.include({ total: 1, hasMore: false });

      const other = await createTenant(t, 'conn');
      const foreign = await t.http.get(`/api/v1/connectors/${id}`).set(as(other, 'admin'));
      expect(foreign.status).to.equal(404);
      expect((await t.http.get('/api/v1/connectors').set(as(other, 'admin'))).body.data.items).to.deep.equal([]);

      const patched = await t.http.patch(`/api/v1/connectors/${id}`).set(as(tenant, 'admin')).send({ active: false, events: ['crm.*'], secret: 'another-secret-0123456789' });
      expect(patched.status).to.equal(200);
      expect(patched.body.data).to.include({ active: false, hasSecret: true });
      expect(patched.body.data.events).to.deep.equal(['crm.*']);

      const cleared = await t.http.patch(`/api/v1/connectors/${id}`).set(as(tenant, 'admin')).send({ secret: null });
      expect(cleared.body.data.hasSecret).to.equal(false);

      const deleted = await t.http.delete(`/api/v1/connectors/${id}`).set(as(tenant, 'admin'));
      expect(deleted.status).to.equal(200);
      expect((await t.http.get(`/api/v1/connectors/${id}`).set(as(tenant, 'admin'))).status).to.equal(404);
    });
  });

  describe('POST /api/v1/events/publish', () => {
    it('answers 202 with the number of deliveries queued for matching active connectors', async () => {
      const make = (body: Record<string, unknown>) => t.http.post('/api/v1/connectors').set(as(tenant, 'admin')).send({ url: 'http://127.0.0.1:9/', ...body });
      await make({ events: ['erp.*'] });
      await make({ events: ['erp.shipment.created', 'erp.shipment.created'] });
      await make({ events: ['crm.*'] });
      await make({ events: ['erp.*'], product: 'other' });
      await make({ events: ['erp.*'], product: 'shop' });
      await make({ events: ['erp.*'], active: false });
      const res = await t.http.post('/api/v1/events/publish').set(as(tenant, 'editor')).send({ event: 'erp.shipment.created', payload: { n: 1 }, product: 'shop' });
      expect(res.status).to.equal(202);
      expect(res.body.data).to.include({ event: 'erp.shipment.created', product: 'shop', deliveries: 3 });
      expect(res.body.data.id).to.be.a('string');
    });

    it('answers 400 validation_failed for a bad name and a non-object payload', async () => {
      const res = await t.http.post('/api/v1/events/publish').set(as(tenant, 'editor')).send({ event: 'Order Created', payload: [1] });
      expect(res.status).to.equal(400);
      const paths = res.body.error.details.map((d: { path: string }) => d.path);
      expect(paths).to.include.members(['/event', '/payload']);
    });

    it('answers 403 forbidden for names the platform raises itself, and takes other names', async () => {
      const reserved = ['tenant.member.invited', 'tenant.anything_new', 'platform.settings.updated', 'cms.form.submitted', 'crm.deal.updated', 'crm.deal.created', 'erp.invoice.deleted', 'erp.order.created', 'erp.inventory.updated'];
      for (const event of reserved) {
        const res = await t.http.post('/api/v1/events/publish').set(as(tenant, 'editor'))
          .send({ event, payload: { record: { id: '00000000-0000-7000-8000-000000000000', stage: 'won' } } });
        expect(res.status, event).to.equal(403);
        expect(res.body.error.code).to.equal('forbidden');
        expect(res.body.message).to.contain(event);
      }
      for (const event of ['erp.shipment.created', 'crm.deal.won_externally', 'shop.deal.updated']) {
        const res = await t.http.post('/api/v1/events/publish').set(as(tenant, 'editor')).send({ event, payload: {} });
        expect(res.status, event).to.equal(202);
      }
    });

    it('hands published events to connectors only, never to in-process handlers', async () => {
      const seen: string[] = [];
      t.app.kernel.events.on('shop.*', (event) => { if (event.tenantId === tenant) seen.push(event.payload.from as string); });
      await t.http.post('/api/v1/connectors').set(as(tenant, 'admin')).send({ url: 'http://127.0.0.1:9/', events: ['shop.*'] });
      const res = await t.http.post('/api/v1/events/publish').set(as(tenant, 'editor')).send({ event: 'shop.order.created', payload: { from: 'api' } });
      expect(res.status).to.equal(202);
      expect(res.body.data.deliveries).to.equal(1);
      // The same name raised by the platform reaches in-process handlers (the handler is live).
      await t.app.kernel.events.publish(systemContext(tenant), { name: 'shop.order.created', payload: { from: 'platform' } });
      await new Promise((r) => setTimeout(r, 200));
      expect(seen).to.deep.equal(['platform']);
    });

    it('answers 403 for a viewer', async () => {
      const res = await t.http.post('/api/v1/events/publish').set(as(tenant, 'viewer')).send({ event: 'a.b', payload: {} });
      expect(res.status).to.equal(403);
    });
  });
});

describe('connectors API with ALLOW_PRIVATE_NETWORK_FETCH=false', () => {
  let t: TestApp;
  let tenant: string;

  before(async () => {
    t = await startTestApp({ env: { ALLOW_PRIVATE_NETWORK_FETCH: 'false' } });
    tenant = await createTenant(t, 'ssrf');
  });

  after(async () => {
    await t.close();
  });

  for (const url of ['http://127.0.0.1:8080/', 'http://2130706433/', 'http://0x7f000001/', 'http://[::1]/', 'http://[::ffff:127.0.0.1]/', 'http://169.254.169.254/', 'http://10.1.2.3/', 'http://localhost/', 'http://metadata.google.internal/']) {
    it(`POST /api/v1/connectors answers 400 url_not_allowed for ${url}`, async () => {
      const res = await t.http.post('/api/v1/connectors').set(as(tenant, 'admin')).send({ url, events: ['a.b'] });
      expect(res.status).to.equal(400);
      expect(res.body.error.code).to.equal('url_not_allowed');
    });
  }

  it('PATCH /api/v1/connectors/:id answers 400 url_not_allowed for a private address', async () => {
    // Created while allowed by a superadmin seed is not possible here; create with a public IP literal.
    const created = await t.http.post('/api/v1/connectors').set(as(tenant, 'admin')).send({ url: 'http://93.184.215.14/hook', events: ['a.b'] });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const res = await t.http.patch(`/api/v1/connectors/${created.body.data.id}`).set(as(tenant, 'admin')).send({ url: 'http://192.168.0.1/' });
    expect(res.status).to.equal(400);
    expect(res.body.error.code).to.equal('url_not_allowed');
  });
});
