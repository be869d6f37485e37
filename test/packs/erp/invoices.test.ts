import { expect } from 'chai';
import { systemContext } from '../../../core/base/request-context.js';
import { createTenant, sharedTestApp, type TestApp } from '../../helpers/test-app.js';
import { as } from '../../helpers/tokens.js';

const DATA = '/api/v1/data/erp/invoice';
const LIST = '/api/v1/erp/invoices';

type Line = { description: string; quantity: number; unitPriceCents: number; taxRateBasisPoints: number };
const line = (quantity: number, unitPriceCents: number, taxRateBasisPoints: number, description = 'Item'): Line =>
  ({ description, quantity, unitPriceCents, taxRateBasisPoints });

describe('ERP invoices', () => {
  let t: TestApp;
  let tenant: string;
  let counter = 0;

  before(async () => {
    t = await sharedTestApp();
  });

  beforeEach(async () => {
    tenant = await createTenant(t, 'erp');
  });

  const invoice = (extra: Record<string, unknown> = {}) => ({ number: `INV-${++counter}`, customerRef: 'CUST-1', lines: [line(1, 1000, 1900)], ...extra });
  const create = async (body: Record<string, unknown>) => {
    const res = await t.http.post(DATA).set(as(tenant, 'editor')).send(body);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body.data.item as Record<string, any>;
  };
  const patch = (id: string, body: Record<string, unknown>) => t.http.patch(`${DATA}/${id}`).set(as(tenant, 'editor')).send(body);

  describe('POST /api/v1/data/erp/invoice (totals)', () => {
    it('computes subtotal, tax and total in integer cents across 0, 700, 1900 and 2100 basis points', async () => {
      const item = await create(invoice({
        lines: [line(3, 1999, 1900, 'Consulting'), line(2, 450, 700, 'Books'), line(1, 12345, 0, 'Export'), line(7, 333, 2100, 'Licences')],
      }));
      // nets: 5997, 900, 12345, 2331; taxes: 1139.43→1139, 63, 0, 489.51→490
      expect(item).to.include({ subtotalCents: 21573, taxCents: 1692, totalCents: 23265, status: 'draft', currency: 'EUR', version: 1 });
    });

    it('rounds each line\'s tax half up, per line', async () => {
      // 50 × 1900 bp = 9.5 → 10; 150 × 700 bp = 10.5 → 11; 49 × 1900 bp = 9.31 → 9; 1 × 2100 bp = 0.21 → 0
      const item = await create(invoice({ lines: [line(1, 50, 1900), line(1, 150, 700), line(1, 49, 1900), line(1, 1, 2100)] }));
      expect(item).to.include({ subtotalCents: 250, taxCents: 30, totalCents: 280 });
    });

    it('gives zero totals for an invoice without lines', async () => {
      const item = await create(invoice({ lines: [] }));
      expect(item).to.include({ subtotalCents: 0, taxCents: 0, totalCents: 0 });
    });

    it('accepts client-sent totals that agree with the lines', async () => {
      const item = await create(invoice({ lines: [line(2, 1005, 1900)], subtotalCents: 2010, taxCents: 382, totalCents: 2392 }));
      expect(item).to.include({ subtotalCents: 2010, taxCents: 382, totalCents: 2392 });
    });

    it('answers 400 validation_failed naming each client-sent total that disagrees', async () => {
      const res = await t.http.post(DATA).set(as(tenant, 'editor')).send(invoice({ lines: [line(2, 1005, 1900)], subtotalCents: 2010, taxCents: 381, totalCents: 2391 }));
      expect(res.status).to.equal(400);
      expect(res.body.data.code).to.equal('validation_failed');
      expect(res.body.data.errors.map((e: { path: string }) => e.path)).to.deep.equal(['/taxCents', '/totalCents']);
    });

    it('answers 400 validation_failed for a malformed line', async () => {
      const res = await t.http.post(DATA).set(as(tenant, 'editor')).send(invoice({ lines: [{ description: 'x', quantity: 1.5, unitPriceCents: -1 }] }));
      expect(res.status).to.equal(400);
      const paths = res.body.data.errors.map((e: { path: string }) => e.path);
      expect(paths).to.include.members(['/lines/0/quantity', '/lines/0/unitPriceCents', '/lines/0/taxRateBasisPoints']);
    });

    it('answers 409 conflict for an invoice number the tenant has already, but not for another tenant\'s', async () => {
      await create(invoice({ number: 'INV-2026-001' }));
      const res = await t.http.post(DATA).set(as(tenant, 'editor')).send(invoice({ number: 'INV-2026-001' }));
      expect(res.status).to.equal(409);
      expect(res.body.data.code).to.equal('conflict');
      expect(res.body.data.errors.map((e: { path: string }) => e.path)).to.deep.equal(['/number']);

      const other = await createTenant(t, 'erp');
      const theirs = await t.http.post(DATA).set(as(other, 'editor')).send(invoice({ number: 'INV-2026-001' }));
      expect(theirs.status).to.equal(201);
    });

    it('answers 409 conflict to the second of two racing creates with the same number', async () => {
      const [a, b] = await Promise.all([
        t.http.post(DATA).set(as(tenant, 'editor')).send(invoice({ number: 'RACE-1' })),
        t.http.post(DATA).set(as(tenant, 'editor')).send(invoice({ number: 'RACE-1' })),
      ]);
      expect([a.status, b.status].sort()).to.deep.equal([201, 409]);
      const list = await t.http.get(`${LIST}?filter[number]=RACE-1`).set(as(tenant, 'viewer'));
      expect(list.body.data.pagination.total).to.equal(1);
    });

    it('answers 409 conflict for a second invoice of the same deal', async () => {
      const dealId = '0190a5e4-1111-7000-8000-000000000001';
      await create(invoice({ dealId }));
      const res = await t.http.post(DATA).set(as(tenant, 'editor')).send(invoice({ dealId }));
      expect(res.status).to.equal(409);
      expect(res.body.data.errors.map((e: { path: string }) => e.path)).to.deep.equal(['/dealId']);
    });

    it('refuses an empty deal (400 at /dealId): no deal, no field, so invoices without a deal never share its unique slot', async () => {
      const res = await t.http.post(DATA).set(as(tenant, 'editor')).send(invoice({ dealId: '' }));
      expect(res.status).to.equal(400);
      expect(res.body.data.code).to.equal('validation_failed');
      expect(res.body.data.errors.map((e: { path: string }) => e.path)).to.deep.equal(['/dealId']);
      await create(invoice({ number: 'NO-DEAL-1' }));
      await create(invoice({ number: 'NO-DEAL-2' }));
      const list = await t.http.get(`${LIST}?filter[number][in]=NO-DEAL-1,NO-DEAL-2`).set(as(tenant, 'viewer'));
      expect(list.body.data.items.map((i: { dealId?: string }) => i.dealId)).to.deep.equal([undefined, undefined]);
    });

    it('answers 409 conflict when renaming an invoice to a taken number', async () => {
      await create(invoice({ number: 'A-1' }));
      const second = await create(invoice({ number: 'A-2' }));
      const res = await patch(second.id, { number: 'A-1' });
      expect(res.status).to.equal(409);
    });

    it('answers 409 conflict for a new invoice that is already paid or void', async () => {
      for (const status of ['paid', 'void']) {
        const res = await t.http.post(DATA).set(as(tenant, 'editor')).send(invoice({ status }));
        expect(res.status).to.equal(409);
        expect(res.body.data.code).to.equal('conflict');
      }
    });

    it('answers 403 forbidden to a viewer', async () => {
      const res = await t.http.post(DATA).set(as(tenant, 'viewer')).send(invoice());
      expect(res.status).to.equal(403);
    });
  });

  describe('PATCH /api/v1/data/erp/invoice/:id (lines and status)', () => {
    it('recomputes the totals when a draft\'s lines change', async () => {
      const item = await create(invoice({ lines: [line(1, 1000, 1900)] }));
      expect(item.totalCents).to.equal(1190);
      const res = await patch(item.id, { lines: [line(3, 1000, 700)] });
      expect(res.status).to.equal(200);
      expect(res.body.data.item).to.include({ subtotalCents: 3000, taxCents: 210, totalCents: 3210, version: 2 });
    });

    it('answers 400 validation_failed for a patched total that disagrees', async () => {
      const item = await create(invoice());
      const res = await patch(item.id, { totalCents: 1 });
      expect(res.status).to.equal(400);
      expect(res.body.data.errors.map((e: { path: string }) => e.path)).to.deep.equal(['/totalCents']);
    });

    it('moves draft → issued → paid, stamping the issue date', async () => {
      const item = await create(invoice());
      const issued = await patch(item.id, { status: 'issued', dueDate: '2026-12-31' });
      expect(issued.status).to.equal(200);
      expect(issued.body.data.item).to.include({ status: 'issued', issueDate: new Date().toISOString().slice(0, 10), dueDate: '2026-12-31' });
      const paid = await patch(item.id, { status: 'paid' });
      expect(paid.status).to.equal(200);
      expect(paid.body.data.item.status).to.equal('paid');
    });

    it('voids a draft and an issued invoice', async () => {
      const draft = await create(invoice());
      expect((await patch(draft.id, { status: 'void' })).status).to.equal(200);
      const issued = await create(invoice({ status: 'issued', issueDate: '2026-01-15' }));
      const res = await patch(issued.id, { status: 'void' });
      expect(res.status).to.equal(200);
      expect(res.body.data.item).to.include({ status: 'void', issueDate: '2026-01-15' });
    });

    const forbidden: Array<[string[], string]> = [
      [['issued', 'paid'], 'issued'], [['issued', 'paid'], 'draft'], [['issued', 'paid'], 'void'],
      [['void'], 'draft'], [['void'], 'issued'], [['void'], 'paid'],
      [['issued'], 'draft'], [[], 'paid'],
    ];
    for (const [path, to] of forbidden) {
      const from = path.at(-1) ?? 'draft';
      it(`answers 409 conflict for ${from} → ${to}`, async () => {
        const item = await create(invoice());
        for (const status of path) expect((await patch(item.id, { status })).status).to.equal(200);
        const res = await patch(item.id, { status: to });
        expect(res.status).to.equal(409);
        expect(res.body.data.code).to.equal('conflict');
        expect(res.body.data.errors.map((e: { path: string }) => e.path)).to.deep.equal(['/status']);
        const stored = await t.http.get(`${DATA}/${item.id}`).set(as(tenant, 'viewer'));
        expect(stored.body.data.item.status).to.equal(from);
      });
    }

    it('answers 409 conflict for changing the lines of an issued invoice', async () => {
      const item = await create(invoice({ status: 'issued' }));
      const res = await patch(item.id, { lines: [line(1, 1, 0)], customerRef: 'OTHER' });
      expect(res.status).to.equal(409);
      expect(res.body.data.errors.map((e: { path: string }) => e.path)).to.deep.equal(['/customerRef', '/lines']);
    });

    it('answers 404 not_found for another tenant\'s invoice', async () => {
      const item = await create(invoice());
      const other = await createTenant(t, 'erp');
      const res = await t.http.patch(`${DATA}/${item.id}`).set(as(other, 'editor')).send({ status: 'void' });
      expect(res.status).to.equal(404);
      expect(res.body.data.code).to.equal('not_found');
      const stored = await t.http.get(`${DATA}/${item.id}`).set(as(tenant, 'viewer'));
      expect(stored.body.data.item.status).to.equal('draft');
    });

    it('lets an issued invoice take the same lines again, in any key order, with a new due date', async () => {
      const item = await create(invoice({ status: 'issued', lines: [line(2, 500, 700, 'Hours')] }));
      const res = await patch(item.id, { lines: [{ taxRateBasisPoints: 700, unitPriceCents: 500, quantity: 2, description: 'Hours' }], dueDate: '2027-01-31' });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.data.item).to.include({ dueDate: '2027-01-31', totalCents: 1070 });
    });

    it('answers 412 version_mismatch for a stale If-Match', async () => {
      const item = await create(invoice());
      await patch(item.id, { notes: 'first' }).expect(200);
      const res = await t.http.patch(`${DATA}/${item.id}`).set(as(tenant, 'editor')).set('If-Match', '"1"').send({ status: 'issued' });
      expect(res.status).to.equal(412);
      expect(res.body.data.code).to.equal('version_mismatch');
    });
  });

  describe('DELETE /api/v1/data/erp/invoice/:id', () => {
    it('deletes a draft and answers 409 conflict for an issued invoice', async () => {
      const draft = await create(invoice());
      expect((await t.http.delete(`${DATA}/${draft.id}`).set(as(tenant, 'editor'))).status).to.equal(200);
      const issued = await create(invoice({ status: 'issued' }));
      const res = await t.http.delete(`${DATA}/${issued.id}`).set(as(tenant, 'editor'));
      expect(res.status).to.equal(409);
      expect(res.body.data.code).to.equal('conflict');
    });
  });

  describe('GET /api/v1/erp/invoices', () => {
    it('lists with the query language in the BFF envelope', async () => {
      await create(invoice({ number: 'L-1', lines: [line(1, 100, 0)] }));
      await create(invoice({ number: 'L-2', lines: [line(1, 500, 0)], status: 'issued' }));
      await create(invoice({ number: 'L-3', lines: [line(1, 300, 0)], status: 'issued' }));
      const res = await t.http.get(`${LIST}?filter[status]=issued&sort=-totalCents&fields=number,totalCents`).set(as(tenant, 'viewer'));
      expect(res.status).to.equal(200);
      expect(res.body).to.include({ status: 'success', message: null, error: null });
      expect(res.body.data.items.map((i: any) => [i.number, i.totalCents])).to.deep.equal([['L-2', 500], ['L-3', 300]]);
      expect(res.body.data.pagination).to.include({ total: 2, hasMore: false, limit: 50, offset: 0 });

      const cheap = await t.http.get(`${LIST}?filter[totalCents][lt]=400&sort=number`).set(as(tenant, 'viewer'));
      expect(cheap.body.data.items.map((i: any) => i.number)).to.deep.equal(['L-1', 'L-3']);
    });

    it('answers 400 invalid_filter for an unknown operator', async () => {
      const res = await t.http.get(`${LIST}?filter[status][near]=x`).set(as(tenant, 'viewer'));
      expect(res.status).to.equal(400);
      expect(res.body.error.code).to.equal('invalid_filter');
    });

    it('shows a tenant only its own invoices', async () => {
      await create(invoice({ number: 'MINE' }));
      const other = await createTenant(t, 'erp');
      const res = await t.http.get(LIST).set(as(other, 'viewer'));
      expect(res.body.data.items).to.deep.equal([]);
      expect(res.body.data.pagination.total).to.equal(0);
    });

    it('answers 401 unauthenticated without a token', async () => {
      const res = await t.http.get(LIST);
      expect(res.status).to.equal(401);
    });
  });

  describe('module gating', () => {
    it('answers 403 module_disabled on /erp/invoices and /data/erp/invoice when erp is disabled', async () => {
      const item = await create(invoice());
      await t.app.kernel.tenants.setModule(systemContext(null), tenant, 'erp', false);
      const list = await t.http.get(LIST).set(as(tenant, 'viewer'));
      expect(list.status).to.equal(403);
      expect(list.body.error.code).to.equal('module_disabled');
      for (const res of [
        await t.http.post(DATA).set(as(tenant, 'editor')).send(invoice()),
        await t.http.get(`${DATA}/${item.id}`).set(as(tenant, 'viewer')),
        await patch(item.id, { status: 'issued' }),
      ]) {
        expect(res.status).to.equal(403);
        expect(res.body.data.code).to.equal('module_disabled');
      }
      // crm stays usable: the modules are gated one by one.
      await t.http.get('/api/v1/crm/deals').set(as(tenant, 'viewer')).expect(200);
    });
  });
});
