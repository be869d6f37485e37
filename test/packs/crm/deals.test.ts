import { expect } from 'chai';
import { systemContext } from '../../../core/base/request-context.js';
import type { PlatformEvent } from '../../../core/events/event.js';
import { createTenant, sharedTestApp, type TestApp } from '../../helpers/test-app.js';
import { as, superadmin } from '../../helpers/tokens.js';

const DEALS = '/api/v1/crm/deals';

describe('CRM deals', () => {
  let t: TestApp;
  let tenant: string;
  const events: PlatformEvent[] = [];

  before(async () => {
    t = await sharedTestApp();
    t.app.kernel.events.on('crm.deal.*', (event) => { events.push(event); });
  });

  beforeEach(async () => {
    tenant = await createTenant(t, 'crm');
  });

  const createDeal = async (body: Record<string, unknown>) => {
    const res = await t.http.post(DEALS).set(as(tenant, 'editor')).send(body);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body.data as Record<string, any>;
  };
  const eventsFor = (name: string, id: string) => events.filter((e) => e.name === name && e.tenantId === tenant && e.payload.id === id);

  describe('POST /api/v1/crm/deals', () => {
    it('creates a deal with defaults, an ETag and the BFF envelope', async () => {
      const res = await t.http.post(DEALS).set(as(tenant, 'editor')).send({ title: 'Clinic rollout', valueCents: 1250000, contactEmail: 'ana@example.com' });
      expect(res.status).to.equal(201);
      expect(res.body).to.include({ status: 'success', message: null, error: null });
      const deal = res.body.data;
      expect(deal).to.include({ title: 'Clinic rollout', valueCents: 1250000, currency: 'EUR', stage: 'lead', closedAt: null, version: 1 });
      expect(deal.id).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-7/);
      expect(res.headers.etag).to.equal('"1"');
    });

    it('sets closedAt for a deal created as won', async () => {
      const deal = await createDeal({ title: 'Signed at once', stage: 'won' });
      expect(Date.parse(deal.closedAt)).to.be.closeTo(Date.now(), 60_000);
    });

    it('publishes crm.deal.created with the record', async () => {
      const deal = await createDeal({ title: 'Evented' });
      const [event] = eventsFor('crm.deal.created', deal.id);
      expect(event, 'crm.deal.created').to.not.equal(undefined);
      expect(event.payload.record).to.include({ id: deal.id, title: 'Evented', stage: 'lead' });
      expect(event.payload.previous).to.equal(null);
    });

    it('answers 400 validation_failed naming each failing path', async () => {
      const res = await t.http.post(DEALS).set(as(tenant, 'editor')).send({ valueCents: -5, stage: 'maybe', contactEmail: 'nope' });
      expect(res.status).to.equal(400);
      expect(res.body.status).to.equal('error');
      expect(res.body.error.code).to.equal('validation_failed');
      const paths = res.body.error.details.map((d: { path: string }) => d.path);
      expect(paths).to.include.members(['/title', '/valueCents', '/stage', '/contactEmail']);
    });

    it('answers 400 validation_failed for an unknown field or a server-managed one', async () => {
      const unknown = await t.http.post(DEALS).set(as(tenant, 'editor')).send({ title: 'X', colour: 'red' });
      expect(unknown.status).to.equal(400);
      expect(unknown.body.error.details.map((d: { path: string }) => d.path)).to.include('/colour');
      const server = await t.http.post(DEALS).set(as(tenant, 'editor')).send({ title: 'X', version: 3 });
      expect(server.status).to.equal(400);
      expect(server.body.error.details.map((d: { path: string }) => d.path)).to.include('/version');
    });

    it('lets a superadmin create a deal for the tenant named by X-Tenant-Id', async () => {
      const res = await t.http.post(DEALS).set(superadmin(tenant)).send({ title: 'By the platform' });
      expect(res.status).to.equal(201);
      const list = await t.http.get(DEALS).set(as(tenant, 'viewer'));
      expect(list.body.data.items.map((d: any) => d.title)).to.deep.equal(['By the platform']);
    });

    it('answers 404 tenant_not_found for an unknown X-Tenant-Id', async () => {
      const res = await t.http.post(DEALS).set(superadmin('no-such-tenant')).send({ title: 'Nowhere' });
      expect(res.status).to.equal(404);
      expect(res.body.error.code).to.equal('tenant_not_found');
    });

    it('answers 403 forbidden to a viewer', async () => {
      const res = await t.http.post(DEALS).set(as(tenant, 'viewer')).send({ title: 'Not mine to make' });
      expect(res.status).to.equal(403);
      expect(res.body.error.code).to.equal('forbidden');
    });

    it('answers 401 unauthenticated without a token', async () => {
      const res = await t.http.post(DEALS).send({ title: 'Anonymous' });
      expect(res.status).to.equal(401);
      expect(res.body.error.code).to.equal('unauthenticated');
    });
  });

  describe('GET /api/v1/crm/deals', () => {
    it('lists with the query language: filter, sort, fields and a keyset cursor', async () => {
      await createDeal({ title: 'A', valueCents: 100, stage: 'won' });
      await createDeal({ title: 'B', valueCents: 300, stage: 'won' });
      await createDeal({ title: 'C', valueCents: 200, stage: 'won' });
      await createDeal({ title: 'D', valueCents: 900, stage: 'lead' });

      const first = await t.http.get(`${DEALS}?filter[stage]=won&sort=-valueCents&limit=2&fields=title,valueCents`).set(as(tenant, 'viewer'));
      expect(first.status).to.equal(200);
      expect(first.body.status).to.equal('success');
      expect(first.body.data.items.map((d: any) => d.title)).to.deep.equal(['B', 'C']);
      expect(first.body.data.items[0]).to.have.all.keys('id', 'title', 'valueCents');
      expect(first.body.data.pagination).to.include({ limit: 2, total: 3, hasMore: true });

      const next = await t.http.get(`${DEALS}?filter[stage]=won&sort=-valueCents&limit=2&cursor=${encodeURIComponent(first.body.data.pagination.nextCursor)}`).set(as(tenant, 'viewer'));
      expect(next.body.data.items.map((d: any) => d.title)).to.deep.equal(['A']);
      expect(next.body.data.pagination.hasMore).to.equal(false);

      const rich = await t.http.get(`${DEALS}?filter[valueCents][gte]=250&count=false`).set(as(tenant, 'viewer'));
      expect(rich.body.data.items.map((d: any) => d.title).sort()).to.deep.equal(['B', 'D']);
      expect(rich.body.data.pagination.total).to.equal(null);
    });

    it('answers 400 invalid_filter for a field the deal lacks', async () => {
      const res = await t.http.get(`${DEALS}?filter[colour]=red`).set(as(tenant, 'viewer'));
      expect(res.status).to.equal(400);
      expect(res.body.error.code).to.equal('invalid_filter');
    });

    it('answers 400 invalid_cursor for a cursor it did not hand out', async () => {
      const res = await t.http.get(`${DEALS}?cursor=not-a-cursor`).set(as(tenant, 'viewer'));
      expect(res.status).to.equal(400);
      expect(res.body.error.code).to.equal('invalid_cursor');
    });

    it('answers 400 validation_failed for a limit out of range', async () => {
      const res = await t.http.get(`${DEALS}?limit=500`).set(as(tenant, 'viewer'));
      expect(res.status).to.equal(400);
      expect(res.body.error.code).to.equal('validation_failed');
    });

    it('shows a tenant only its own deals', async () => {
      await createDeal({ title: 'Ours' });
      const other = await createTenant(t, 'crm');
      await t.http.post(DEALS).set(as(other, 'editor')).send({ title: 'Theirs' }).expect(201);
      const res = await t.http.get(DEALS).set(as(tenant, 'viewer'));
      expect(res.body.data.items.map((d: any) => d.title)).to.deep.equal(['Ours']);
    });

    it('answers 403 forbidden when X-Tenant-Id names another tenant than the token', async () => {
      const other = await createTenant(t, 'crm');
      const res = await t.http.get(DEALS).set({ ...as(tenant, 'viewer'), 'X-Tenant-Id': other });
      expect(res.status).to.equal(403);
      expect(res.body.error.code).to.equal('forbidden');
    });

    it('answers 400 tenant_required to a superadmin naming no tenant', async () => {
      const res = await t.http.get(DEALS).set(superadmin());
      expect(res.status).to.equal(400);
      expect(res.body.error.code).to.equal('tenant_required');
    });
  });

  describe('PATCH /api/v1/crm/deals/:dealId', () => {
    it('applies a merge patch, bumps the version and answers the new ETag', async () => {
      const deal = await createDeal({ title: 'Patch me', notes: 'old', valueCents: 10 });
      const res = await t.http.patch(`${DEALS}/${deal.id}`).set(as(tenant, 'editor')).set('If-Match', '"1"').send({ valueCents: 20, notes: null });
      expect(res.status).to.equal(200);
      expect(res.body.data).to.include({ title: 'Patch me', valueCents: 20, version: 2 });
      expect(res.body.data).to.not.have.property('notes');
      expect(res.headers.etag).to.equal('"2"');
    });

    it('sets closedAt when the deal is won, keeps it while won and clears it when reopened', async () => {
      const deal = await createDeal({ title: 'Pipeline', stage: 'negotiation' });
      const won = await t.http.patch(`${DEALS}/${deal.id}`).set(as(tenant, 'editor')).send({ stage: 'won' });
      expect(won.body.data.closedAt).to.be.a('string');
      const closedAt = won.body.data.closedAt;

      const edited = await t.http.patch(`${DEALS}/${deal.id}`).set(as(tenant, 'editor')).send({ notes: 'invoice sent', closedAt: '2000-01-01T00:00:00.000Z' });
      expect(edited.body.data.closedAt).to.equal(closedAt);

      const reopened = await t.http.patch(`${DEALS}/${deal.id}`).set(as(tenant, 'editor')).send({ stage: 'proposal' });
      expect(reopened.body.data.closedAt).to.equal(null);

      const lost = await t.http.patch(`${DEALS}/${deal.id}`).set(as(tenant, 'editor')).send({ stage: 'lost' });
      expect(Date.parse(lost.body.data.closedAt)).to.be.at.least(Date.parse(closedAt));
    });

    it('publishes crm.deal.updated with the previous stage on a stage change', async () => {
      const deal = await createDeal({ title: 'Moving', stage: 'proposal' });
      await t.http.patch(`${DEALS}/${deal.id}`).set(as(tenant, 'editor')).send({ stage: 'won' }).expect(200);
      const [event] = eventsFor('crm.deal.updated', deal.id);
      expect(event, 'crm.deal.updated').to.not.equal(undefined);
      expect(event.payload.record).to.include({ stage: 'won', version: 2 });
      expect(event.payload.previous).to.include({ stage: 'proposal', version: 1 });
    });

    it('answers 412 version_mismatch for a stale If-Match', async () => {
      const deal = await createDeal({ title: 'Raced' });
      await t.http.patch(`${DEALS}/${deal.id}`).set(as(tenant, 'editor')).send({ notes: 'first' }).expect(200);
      const res = await t.http.patch(`${DEALS}/${deal.id}`).set(as(tenant, 'editor')).set('If-Match', '"1"').send({ notes: 'second' });
      expect(res.status).to.equal(412);
      expect(res.body.error.code).to.equal('version_mismatch');
    });

    it('answers 400 validation_failed when the merged deal breaks the schema', async () => {
      const deal = await createDeal({ title: 'Keep title' });
      const res = await t.http.patch(`${DEALS}/${deal.id}`).set(as(tenant, 'editor')).send({ title: null, stage: 'closed' });
      expect(res.status).to.equal(400);
      expect(res.body.error.code).to.equal('validation_failed');
      expect(res.body.error.details.map((d: { path: string }) => d.path)).to.include.members(['/title', '/stage']);
    });

    it('answers 404 not_found for an unknown deal and for another tenant\'s deal', async () => {
      const missing = await t.http.patch(`${DEALS}/0190a5e4-0000-7000-8000-000000000000`).set(as(tenant, 'editor')).send({ notes: 'x' });
      expect(missing.status).to.equal(404);
      expect(missing.body.error.code).to.equal('not_found');
      const other = await createTenant(t, 'crm');
      const theirs = await t.http.post(DEALS).set(as(other, 'editor')).send({ title: 'Theirs' });
      const res = await t.http.patch(`${DEALS}/${theirs.body.data.id}`).set(as(tenant, 'editor')).send({ notes: 'mine now' });
      expect(res.status).to.equal(404);
    });

    it('answers 403 forbidden to a viewer', async () => {
      const deal = await createDeal({ title: 'Read only' });
      const res = await t.http.patch(`${DEALS}/${deal.id}`).set(as(tenant, 'viewer')).send({ notes: 'x' });
      expect(res.status).to.equal(403);
    });
  });

  describe('the same records at /api/v1/data/crm/deal', () => {
    it('runs the closedAt hook for /data writes and lists them at /crm/deals', async () => {
      const res = await t.http.post('/api/v1/data/crm/deal').set(as(tenant, 'editor')).send({ title: 'Via data', stage: 'lost' });
      expect(res.status).to.equal(201);
      expect(res.body.data.item.closedAt).to.be.a('string');
      const list = await t.http.get(DEALS).set(as(tenant, 'viewer'));
      expect(list.body.data.items.map((d: any) => d.id)).to.deep.equal([res.body.data.item.id]);
    });

    it('answers 403 reserved_namespace to a tenant registering a schema in crm', async () => {
      const res = await t.http.post('/api/v1/metadata/schemas').set(as(tenant, 'admin'))
        .send({ namespace: 'crm', name: 'lead', schema: { type: 'object', properties: { name: { type: 'string' } } } });
      expect(res.status).to.equal(403);
      expect(res.body.data.code).to.equal('reserved_namespace');
    });
  });

  describe('module gating', () => {
    it('answers 403 module_disabled on /crm/deals and /data/crm/deal when crm is disabled', async () => {
      const deal = await createDeal({ title: 'Before disabling' });
      await t.app.kernel.tenants.setModule(systemContext(null), tenant, 'crm', false);

      for (const res of [
        await t.http.get(DEALS).set(as(tenant, 'viewer')),
        await t.http.post(DEALS).set(as(tenant, 'editor')).send({ title: 'After' }),
        await t.http.patch(`${DEALS}/${deal.id}`).set(as(tenant, 'editor')).send({ notes: 'x' }),
      ]) {
        expect(res.status).to.equal(403);
        expect(res.body.error.code).to.equal('module_disabled');
      }
      const data = await t.http.get('/api/v1/data/crm/deal').set(as(tenant, 'viewer'));
      expect(data.status).to.equal(403);
      expect(data.body.data.code).to.equal('module_disabled');

      const other = await createTenant(t, 'crm');
      await t.http.get(DEALS).set(as(other, 'viewer')).expect(200);

      await t.app.kernel.tenants.setModule(systemContext(null), tenant, 'crm', true);
      await t.http.get(DEALS).set(as(tenant, 'viewer')).expect(200);
    });
  });
});
