import { expect } from 'chai';
import type { PlatformEvent } from '../../../core/events/event.js';
import { createTenant, sharedTestApp, type TestApp } from '../../helpers/test-app.js';
import { as } from '../../helpers/tokens.js';

const TICKETS = '/api/v1/crm/support-tickets';
const base = { type: 'complaint', subject: 'Late delivery', description: 'The order arrived two weeks late.', customerRef: 'cust-1' };
type Status = 'new' | 'open' | 'pending_customer' | 'resolved' | 'closed';

/** The calendar date today in `timeZone`, as YYYY-MM-DD, and its weekday (0 Sunday). */
function todayIn(timeZone: string): { date: string; weekday: number } {
  const date = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date());
  return { date, weekday: new Date(`${date}T12:00:00Z`).getUTCDay() };
}

/**
 * The 15th business day after `today`: from a weekday that is three weeks on (15 weekdays, 3 weekends); from a
 * Saturday the Friday 20 days on; from a Sunday the Friday 19 days on.
 */
function fifteenthBusinessDay(today: { date: string; weekday: number }): string {
  const days = today.weekday === 6 ? 20 : today.weekday === 0 ? 19 : 21;
  return new Date(Date.parse(`${today.date}T00:00:00Z`) + days * 86400_000).toISOString().slice(0, 10);
}

describe('CRM support tickets (PQRS)', () => {
  let t: TestApp;
  let tenant: string;
  const events: PlatformEvent[] = [];

  before(async () => {
    t = await sharedTestApp();
    t.app.kernel.events.on('crm.ticket.*', (event) => { events.push(event); });
  });

  beforeEach(async () => {
    tenant = await createTenant(t, 'pqrs');
  });

  const open = async (body: Record<string, unknown> = {}, on = tenant) => {
    const res = await t.http.post(TICKETS).set(as(on, 'editor', { sub: 'agent-ana' })).send({ ...base, ...body });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body.data as Record<string, any>;
  };
  const patch = (id: string, body: Record<string, unknown>, sub = 'agent-ben') =>
    t.http.patch(`${TICKETS}/${id}`).set(as(tenant, 'editor', { sub })).send(body);
  const moveTo = async (id: string, path: Status[]) => {
    for (const status of path) expect((await patch(id, { status })).status, `to ${status}`).to.equal(200);
  };
  const paths = (res: { body: any }) => res.body.error.details.map((d: { path: string }) => d.path);

  describe('POST /api/v1/crm/support-tickets', () => {
    it('opens a ticket: number, status new, defaults, SLA date, first history entry and an ETag', async () => {
      const res = await t.http.post(TICKETS).set(as(tenant, 'editor', { sub: 'agent-ana' })).send(base);
      expect(res.status).to.equal(201);
      expect(res.headers.etag).to.equal('"1"');
      const ticket = res.body.data;
      expect(ticket).to.include({
        number: `PQRS-${todayIn('UTC').date.slice(0, 4)}-000001`, type: 'complaint', status: 'new', subject: base.subject,
        description: base.description, customerRef: 'cust-1', contactEmail: null, dealId: null, priority: 'normal', version: 1,
      });
      expect(ticket).to.have.keys('id', 'number', 'type', 'status', 'subject', 'description', 'customerRef', 'contactEmail', 'dealId',
        'priority', 'assigneeId', 'slaDueAt', 'history', 'createdAt', 'updatedAt', 'version');
      expect(ticket.history).to.deep.equal([{ at: ticket.history[0].at, by: 'agent-ana', from: null, to: 'new' }]);
      expect(Date.parse(ticket.history[0].at)).to.be.closeTo(Date.parse(ticket.createdAt), 5_000);
    });

    it('numbers tickets per tenant consecutively from 000001', async () => {
      const numbers = [];
      for (let i = 0; i < 3; i++) numbers.push((await open()).number.slice(-6));
      expect(numbers).to.deep.equal(['000001', '000002', '000003']);
      const other = await createTenant(t, 'pqrs');
      expect((await open({}, other)).number.slice(-6)).to.equal('000001');
    });

    it('gives 20 concurrent creations the numbers 1 to 20, without gaps or duplicates', async () => {
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) =>
        t.http.post(TICKETS).set(as(tenant, 'editor')).send({ ...base, subject: `Race ${i}` })));
      expect(results.map((r) => r.status)).to.deep.equal(Array(20).fill(201));
      const numbers = results.map((r) => Number(r.body.data.number.slice(-6))).sort((a, b) => a - b);
      expect(numbers).to.deep.equal(Array.from({ length: 20 }, (_, i) => i + 1));
      // A rejected creation takes no number.
      await t.http.post(TICKETS).set(as(tenant, 'editor')).send({ ...base, dealId: '0190a5e4-0000-7000-8000-000000000000' }).expect(400);
      expect((await open()).number.slice(-6)).to.equal('000021');
    });

    it('sets slaDueAt to 23:59:59 UTC of the 15th business day after today, weekends not counted (default timezone UTC)', async () => {
      const ticket = await open();
      expect(ticket.slaDueAt).to.equal(`${fifteenthBusinessDay(todayIn('UTC'))}T23:59:59.000Z`);
    });

    it('counts the business days and the year in the site-config timezone', async () => {
      for (const [timeZone, utcTime, dayShift] of [['America/Bogota', '04:59:59', 1], ['Asia/Tokyo', '14:59:59', 0]] as const) {
        const tz = await createTenant(t, 'pqrs');
        const config = await t.http.patch(`/api/v1/tenants/${tz}/site-config`).set(as(tz, 'admin')).send({ timezone: timeZone });
        expect(config.status, JSON.stringify(config.body)).to.equal(200);
        const ticket = await open({}, tz);
        const today = todayIn(timeZone);
        const localDue = fifteenthBusinessDay(today);
        const utcDue = new Date(Date.parse(`${localDue}T00:00:00Z`) + dayShift * 86400_000).toISOString().slice(0, 10);
        expect(ticket.slaDueAt, timeZone).to.equal(`${utcDue}T${utcTime}.000Z`);
        expect(ticket.number, timeZone).to.equal(`PQRS-${today.date.slice(0, 4)}-000001`);
      }
    });

    it('keeps priority, contactEmail and a deal of the tenant, and lists the ticket on GET /crm/deals/:dealId', async () => {
      const deal = (await t.http.post('/api/v1/crm/deals').set(as(tenant, 'editor')).send({ title: 'Clinic rollout' })).body.data;
      const first = await open({ dealId: deal.id, priority: 'urgent', contactEmail: 'ana@example.com' });
      expect(first).to.include({ dealId: deal.id, priority: 'urgent', contactEmail: 'ana@example.com' });
      const second = await open({ dealId: deal.id, type: 'petition' });
      await open();
      await patch(second.id, { status: 'open' }).expect(200);

      const res = await t.http.get(`/api/v1/crm/deals/${deal.id}`).set(as(tenant, 'viewer'));
      expect(res.status).to.equal(200);
      expect(res.headers.etag).to.equal('"1"');
      expect(res.body.data).to.include({ id: deal.id, title: 'Clinic rollout' });
      expect(res.body.data.tickets).to.deep.equal([
        { id: first.id, number: first.number, status: 'new' },
        { id: second.id, number: second.number, status: 'open' },
      ]);
      const none = (await t.http.post('/api/v1/crm/deals').set(as(tenant, 'editor')).send({ title: 'Quiet' })).body.data;
      expect((await t.http.get(`/api/v1/crm/deals/${none.id}`).set(as(tenant, 'viewer'))).body.data.tickets).to.deep.equal([]);
    });

    it('answers 400 naming /dealId for a deal of another tenant, an unknown one or a malformed id', async () => {
      const other = await createTenant(t, 'pqrs');
      const theirs = (await t.http.post('/api/v1/crm/deals').set(as(other, 'editor')).send({ title: 'Theirs' })).body.data;
      for (const dealId of [theirs.id, '0190a5e4-0000-7000-8000-000000000000', 'deal-7']) {
        const res = await t.http.post(TICKETS).set(as(tenant, 'editor')).send({ ...base, dealId });
        expect(res.status, dealId).to.equal(400);
        expect(res.body.error.code).to.equal('validation_failed');
        expect(paths(res)).to.deep.equal(['/dealId']);
      }
    });

    it('answers 400 naming each bad field', async () => {
      const res = await t.http.post(TICKETS).set(as(tenant, 'editor'))
        .send({ type: 'question', subject: '', priority: 'asap', contactEmail: 'nope', number: 'PQRS-2020-000001' });
      expect(res.status).to.equal(400);
      expect(paths(res)).to.include.members(['/type', '/subject', '/description', '/customerRef', '/priority', '/contactEmail', '/number']);
    });

    it('replays a creation retried with the same Idempotency-Key: one ticket, one number', async () => {
      const first = await t.http.post(TICKETS).set(as(tenant, 'editor')).set('Idempotency-Key', 'ticket-1').send(base);
      const again = await t.http.post(TICKETS).set(as(tenant, 'editor')).set('Idempotency-Key', 'ticket-1').send(base);
      expect([first.status, again.status]).to.deep.equal([201, 201]);
      expect(again.headers['idempotent-replayed']).to.equal('true');
      expect(again.body.data.number).to.equal(first.body.data.number);
      expect((await open()).number.slice(-6)).to.equal('000002');
    });

    it('answers 403 forbidden to a viewer', async () => {
      const res = await t.http.post(TICKETS).set(as(tenant, 'viewer')).send(base);
      expect(res.status).to.equal(403);
    });

    it('publishes crm.ticket.created with the record', async () => {
      const ticket = await open();
      const created = events.find((e) => e.name === 'crm.ticket.created' && e.payload.id === ticket.id);
      expect(created?.tenantId).to.equal(tenant);
      expect((created?.payload.record as any).number).to.equal(ticket.number);
    });
  });

  describe('PATCH /api/v1/crm/support-tickets/:id', () => {
    const allowed: Array<[Status[], Status]> = [
      [[], 'open'], [[], 'resolved'],
      [['open'], 'pending_customer'], [['open'], 'resolved'],
      [['open', 'pending_customer'], 'open'], [['open', 'pending_customer'], 'resolved'],
      [['resolved'], 'closed'], [['resolved'], 'open'],
    ];
    for (const [path, to] of allowed) {
      const from = path.length ? path[path.length - 1] : 'new';
      it(`moves ${from} → ${to} and keeps it in history`, async () => {
        const ticket = await open();
        await moveTo(ticket.id, path);
        const res = await patch(ticket.id, { status: to }, 'agent-carla');
        expect(res.status, JSON.stringify(res.body)).to.equal(200);
        expect(res.body.data.status).to.equal(to);
        const history = res.body.data.history;
        expect(history.map((h: any) => [h.from, h.to])).to.deep.equal(
          [[null, 'new'], ...[...path, to].map((s, i) => [i === 0 ? 'new' : path[i - 1], s])]);
        expect(history[history.length - 1].by).to.equal('agent-carla');
      });
    }

    const refused: Record<Status, Status[]> = {
      new: ['new', 'pending_customer', 'closed'],
      open: ['new', 'open', 'closed'],
      pending_customer: ['new', 'pending_customer', 'closed'],
      resolved: ['new', 'pending_customer', 'resolved'],
      closed: ['new', 'open', 'pending_customer', 'resolved', 'closed'],
    };
    const pathTo: Record<Status, Status[]> = {
      new: [], open: ['open'], pending_customer: ['open', 'pending_customer'], resolved: ['resolved'], closed: ['resolved', 'closed'],
    };
    for (const [from, targets] of Object.entries(refused) as Array<[Status, Status[]]>) {
      it(`answers 409 invalid_transition from ${from} to ${targets.join(', ')} and changes nothing`, async () => {
        const ticket = await open();
        await moveTo(ticket.id, pathTo[from]);
        for (const to of targets) {
          const res = await patch(ticket.id, { status: to, priority: 'high' });
          expect(res.status, `${from} → ${to}`).to.equal(409);
          expect(res.body.error.code).to.equal('invalid_transition');
        }
        const after = (await t.http.get(`${TICKETS}/${ticket.id}`).set(as(tenant, 'viewer'))).body.data;
        expect(after).to.include({ status: from, priority: 'normal', version: 1 + pathTo[from].length });
        expect(after.history).to.have.length(1 + pathTo[from].length);
      });
    }

    it('changes priority and assignee without a history entry', async () => {
      const ticket = await open();
      const res = await patch(ticket.id, { priority: 'high', assigneeId: 'agent-dora' });
      expect(res.status).to.equal(200);
      expect(res.body.data).to.include({ status: 'new', priority: 'high', assigneeId: 'agent-dora', version: 2 });
      expect(res.body.data.history).to.have.length(1);
      expect((await patch(ticket.id, { assigneeId: null })).body.data.assigneeId).to.equal(null);
      const updated = events.filter((e) => e.name === 'crm.ticket.updated' && e.payload.id === ticket.id);
      expect(updated).to.have.length(2);
    });

    it('lets one of 20 concurrent new → open changes win; the others answer 409 invalid_transition', async () => {
      const ticket = await open();
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => patch(ticket.id, { status: 'open' }, `agent-${i}`)));
      expect(results.map((r) => r.status).sort()).to.deep.equal([200, ...Array(19).fill(409)]);
      const after = (await t.http.get(`${TICKETS}/${ticket.id}`).set(as(tenant, 'viewer'))).body.data;
      expect(after.history.map((h: any) => h.to)).to.deep.equal(['new', 'open']);
    });

    it('answers 412 version_mismatch for a stale If-Match', async () => {
      const ticket = await open();
      await patch(ticket.id, { priority: 'low' }).expect(200);
      const res = await t.http.patch(`${TICKETS}/${ticket.id}`).set(as(tenant, 'editor')).set('If-Match', '"1"').send({ status: 'open' });
      expect(res.status).to.equal(412);
      expect(res.body.error.code).to.equal('version_mismatch');
    });

    it('answers 400 for an empty body, an unknown field, a bad status or a field the server owns', async () => {
      const ticket = await open();
      for (const body of [{}, { subject: 'New subject' }, { status: 'done' }, { history: [] }]) {
        const res = await patch(ticket.id, body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(res.body.error.code).to.equal('validation_failed');
      }
    });

    it('answers 404 for another tenant\'s ticket and 403 to a viewer', async () => {
      const other = await createTenant(t, 'pqrs');
      const theirs = await open({}, other);
      expect((await patch(theirs.id, { status: 'open' })).status).to.equal(404);
      expect((await t.http.get(`${TICKETS}/${theirs.id}`).set(as(tenant, 'viewer'))).status).to.equal(404);
      const mine = await open();
      expect((await t.http.patch(`${TICKETS}/${mine.id}`).set(as(tenant, 'viewer')).send({ status: 'open' })).status).to.equal(403);
    });
  });

  describe('GET /api/v1/crm/support-tickets', () => {
    it('lists newest first, filtered by status, type, dealId and customerRef, with paging', async () => {
      const deal = (await t.http.post('/api/v1/crm/deals').set(as(tenant, 'editor')).send({ title: 'D' })).body.data;
      const a = await open({ type: 'petition', customerRef: 'ana' });
      const b = await open({ type: 'claim', customerRef: 'ben', dealId: deal.id });
      const c = await open({ type: 'claim', customerRef: 'ana' });
      await patch(b.id, { status: 'open' }).expect(200);
      const list = async (query: Record<string, string | number>) => {
        const res = await t.http.get(TICKETS).query(query).set(as(tenant, 'viewer'));
        expect(res.status, JSON.stringify(res.body)).to.equal(200);
        return res.body.data;
      };
      expect((await list({})).items.map((x: any) => x.id)).to.deep.equal([c.id, b.id, a.id]);
      expect((await list({ status: 'open' })).items.map((x: any) => x.id)).to.deep.equal([b.id]);
      expect((await list({ type: 'claim' })).items.map((x: any) => x.id)).to.deep.equal([c.id, b.id]);
      expect((await list({ dealId: deal.id })).items.map((x: any) => x.id)).to.deep.equal([b.id]);
      expect((await list({ customerRef: 'ana', type: 'petition' })).items.map((x: any) => x.id)).to.deep.equal([a.id]);
      const page = await list({ limit: 2, offset: 1 });
      expect(page.items.map((x: any) => x.id)).to.deep.equal([b.id, a.id]);
      expect(page.pagination).to.include({ limit: 2, offset: 1, total: 3, hasMore: false });
      const bad = await t.http.get(TICKETS).query({ status: 'done' }).set(as(tenant, 'viewer'));
      expect(bad.status).to.equal(400);
    });

    it('shows a tenant only its own tickets', async () => {
      await open();
      const other = await createTenant(t, 'pqrs');
      const res = await t.http.get(TICKETS).set(as(other, 'viewer'));
      expect(res.body.data.items).to.deep.equal([]);
    });
  });

  describe('the same records at /api/v1/data/crm/ticket', () => {
    it('reads tickets, but answers 403 forbidden to every write', async () => {
      const ticket = await open();
      const read = await t.http.get(`/api/v1/data/crm/ticket/${ticket.id}`).set(as(tenant, 'viewer'));
      expect(read.status).to.equal(200);
      expect(read.body.data.item.number).to.equal(ticket.number);

      const writes = [
        await t.http.post('/api/v1/data/crm/ticket').set(as(tenant, 'admin')).send(base),
        await t.http.post('/api/v1/data/crm/ticket').set(as(tenant, 'admin')).send({ ...ticket, id: undefined, createdAt: undefined, updatedAt: undefined, version: undefined }),
        await t.http.patch(`/api/v1/data/crm/ticket/${ticket.id}`).set(as(tenant, 'admin')).send({ status: 'closed' }),
        await t.http.delete(`/api/v1/data/crm/ticket/${ticket.id}`).set(as(tenant, 'admin')),
        await t.http.post('/api/v1/data/crm/ticket/bulk').set(as(tenant, 'admin')).send({ items: [base] }),
      ];
      for (const res of writes) {
        expect(res.status).to.equal(403);
        expect(res.body.data.code).to.equal('forbidden');
      }
      const after = (await t.http.get(`${TICKETS}/${ticket.id}`).set(as(tenant, 'viewer'))).body.data;
      expect(after).to.include({ status: 'new', version: 1 });
    });
  });
});
