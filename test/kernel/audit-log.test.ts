import { expect } from 'chai';
import type { AuditRetention } from '../../core/audit/audit-retention.js';
import { createTenant, sharedTestApp, type TestApp } from '../helpers/test-app.js';
import { as } from '../helpers/tokens.js';

type Json = Record<string, any>;

const noteSchema = {
  namespace: 'au', name: 'note',
  schema: { type: 'object', required: ['title'], properties: { title: { type: 'string' } } },
};

/** The audit log of record writes (CONTRACT.md 16.4): written with each write, read by admins, append-only. */
describe('audit log: GET /api/v1/tenants/:id/audit-log', () => {
  let t: TestApp;
  let tenant: string;
  const NOTES = '/api/v1/data/au/note';
  const editor = () => as(tenant, 'editor', { sub: 'ed-1', email: 'ed@example.com' });
  const log = async (query = ''): Promise<Json> => {
    const res = await t.http.get(`/api/v1/tenants/${tenant}/audit-log${query}`).set(as(tenant, 'admin'));
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body.data;
  };

  before(async () => {
    t = await sharedTestApp();
  });

  beforeEach(async () => {
    tenant = await createTenant(t, 'au');
    await t.http.post('/api/v1/metadata/schemas').set(as(tenant, 'admin')).send(noteSchema).expect(201);
  });

  it('lists record writes newest first with their actor, target and request id, in the BFF envelope', async () => {
    const created = await t.http.post(NOTES).set(editor()).set('X-Request-Id', 'req-create-1').send({ title: 'A' });
    expect(created.status).to.equal(201);
    const id = created.body.data.item.id;
    const target = `au.note/${id}`;
    await t.http.patch(`${NOTES}/${id}`).set(editor()).set('X-Request-Id', 'req-update-1').send({ title: 'B' }).expect(200);
    await t.http.post(`${NOTES}/${id}/revisions/1/restore`).set(editor()).set('X-Request-Id', 'req-restore-1').expect(200);
    await t.http.delete(`${NOTES}/${id}`).set(editor()).set('X-Request-Id', 'req-delete-1').expect(200);

    const res = await t.http.get(`/api/v1/tenants/${tenant}/audit-log`).set(as(tenant, 'admin')).expect(200);
    expect(res.body).to.include({ status: 'success', message: null, error: null });
    const { items, pagination } = res.body.data;
    expect(items.map((e: Json) => [e.action, e.requestId])).to.deep.equal([
      ['record.deleted', 'req-delete-1'], ['record.restored', 'req-restore-1'], ['record.updated', 'req-update-1'], ['record.created', 'req-create-1'],
    ]);
    expect(pagination).to.include({ total: 4, hasMore: false });
    for (const entry of items) {
      expect(entry.target).to.equal(target);
      expect(entry.actor).to.deep.equal({ type: 'user', id: 'ed-1', email: 'ed@example.com' });
      expect(entry.id).to.match(/^[0-9a-f-]{36}$/);
    }
  });

  it('writes entries for bulk writes and filters by actor, action, target, from and to; pages with a cursor', async () => {
    const bulk = await t.http.post(`${NOTES}/bulk`).set(editor()).send({ items: [{ title: 'x' }, { title: 'y' }, { title: 'z' }] });
    expect(bulk.status).to.equal(201);
    const other = await t.http.post(NOTES).set(as(tenant, 'editor', { sub: 'ed-2' })).send({ title: 'w' });
    expect(other.status).to.equal(201);
    expect((await log()).items).to.have.length(4);
    expect((await log('?actor=ed-2')).items.map((e: Json) => e.target)).to.deep.equal([`au.note/${other.body.data.item.id}`]);
    expect((await log('?action=record.created')).pagination.total).to.equal(4);
    expect((await log('?action=record.deleted')).items).to.have.length(0);
    const first = bulk.body.data.items[0].id;
    expect((await log(`?target=au.note/${first}`)).items).to.have.length(1);
    expect((await log(`?from=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`)).items).to.have.length(0);
    expect((await log(`?to=${encodeURIComponent(new Date(Date.now() - 60_000).toISOString())}`)).items).to.have.length(0);
    const page1 = await log('?limit=3');
    expect(page1.pagination.hasMore).to.equal(true);
    const page2 = await log(`?limit=3&cursor=${page1.pagination.nextCursor}`);
    expect(page2.items).to.have.length(1);
    expect(new Set([...page1.items, ...page2.items].map((e: Json) => e.id)).size).to.equal(4);
  });

  it('is for admins of the tenant only, and no route changes or deletes an entry', async () => {
    await t.http.post(NOTES).set(editor()).send({ title: 'A' }).expect(201);
    expect((await t.http.get(`/api/v1/tenants/${tenant}/audit-log`).set(as(tenant, 'editor'))).status).to.equal(403);
    const other = await createTenant(t, 'au-other');
    expect((await t.http.get(`/api/v1/tenants/${tenant}/audit-log`).set(as(other, 'admin'))).status).to.equal(403);
    for (const method of ['post', 'put', 'patch', 'delete'] as const) {
      const res = await t.http[method](`/api/v1/tenants/${tenant}/audit-log`).set(as(tenant, 'admin')).send({});
      expect(res.status, method).to.equal(405);
    }
    expect((await log()).items).to.have.length(1);
  });

  it('retention deletes entries older than AUDIT_RETENTION_DAYS (365)', async () => {
    await t.http.post(NOTES).set(editor()).send({ title: 'A' }).expect(201);
    const retention = t.app.kernel.background.get('audit-retention') as AuditRetention;
    await retention.pruneOnce(new Date(Date.now() + 300 * 24 * 60 * 60 * 1000));
    expect((await log()).items).to.have.length(1);
    await retention.pruneOnce(new Date(Date.now() + 366 * 24 * 60 * 60 * 1000));
    expect((await log()).items).to.have.length(0);
  });
});
