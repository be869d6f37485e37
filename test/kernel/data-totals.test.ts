import { expect } from 'chai';
import { newId } from '../../core/base/ids.js';
import { systemContext } from '../../core/base/request-context.js';
import { createTenant, sharedTestApp, type TestApp } from '../helpers/test-app.js';
import { as } from '../helpers/tokens.js';

const noteSchema = {
  namespace: 'tot',
  name: 'note',
  schema: {
    type: 'object',
    additionalProperties: false,
    properties: { title: { type: 'string' }, kind: { type: 'string' }, email: { type: 'string' }, n: { type: 'integer' } },
  },
  indexes: [['kind']],
};

describe('GET /api/v1/data/:ns/:schema totals (count=true|false|estimated)', () => {
  let t: TestApp;

  before(async () => {
    t = await sharedTestApp();
  });

  async function tenantWithSchema(): Promise<string> {
    const tenant = await createTenant(t, 'tot');
    await t.http.post('/api/v1/metadata/schemas').set(as(tenant, 'admin')).send(noteSchema).expect(201);
    return tenant;
  }

  const create = (tenant: string, body: object) => t.http.post('/api/v1/data/tot/note').set(as(tenant, 'editor')).send(body);
  const pagination = async (tenant: string, query: Record<string, string> = {}) => {
    const res = await t.http.get('/api/v1/data/tot/note').query({ limit: '2', ...query }).set(as(tenant, 'viewer'));
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body.data.pagination;
  };

  it('answers the exact total of the tenant\'s records, kept through 50 parallel creates and deletes', async () => {
    const tenant = await tenantWithSchema();
    const other = await tenantWithSchema();
    await create(other, { title: 'elsewhere', kind: 'a' }).expect(201);
    const created = await Promise.all(Array.from({ length: 50 }, (_, i) => create(tenant, { title: `n${i}`, kind: i % 2 ? 'odd' : 'even', n: i })));
    for (const res of created) expect(res.status, JSON.stringify(res.body)).to.equal(201);
    expect(await pagination(tenant)).to.include({ total: 50, totalEstimated: false, hasMore: true });
    const doomed = created.slice(0, 20).map((r) => r.body.data.item.id as string);
    const deleted = await Promise.all(doomed.map((id) => t.http.delete(`/api/v1/data/tot/note/${id}`).set(as(tenant, 'editor'))));
    for (const res of deleted) expect(res.status).to.equal(200);
    // A delete that finds nothing changes nothing.
    await t.http.delete(`/api/v1/data/tot/note/${doomed[0]}`).set(as(tenant, 'editor')).expect(404);
    expect(await pagination(tenant)).to.include({ total: 30 });
    expect(await pagination(other)).to.include({ total: 1 });
  });

  it('counts bulk creates and imports (12.3) like single creates', async () => {
    const tenant = await tenantWithSchema();
    const items = Array.from({ length: 7 }, (_, i) => ({ title: `b${i}` }));
    await t.http.post('/api/v1/data/tot/note/bulk').set(as(tenant, 'editor')).send({ items }).expect(201);
    expect(await pagination(tenant)).to.include({ total: 7 });
  });

  it('keeps the total right when a create fails and rolls back', async () => {
    const tenant = await tenantWithSchema();
    await create(tenant, { title: 'ok' }).expect(201);
    await create(tenant, { title: 5 }).expect(400);
    expect(await pagination(tenant)).to.include({ total: 1 });
  });

  it('stays exact after many writes have been folded into one counter', async () => {
    const tenant = await tenantWithSchema();
    for (let round = 0; round < 3; round++) {
      const res = await Promise.all(Array.from({ length: 50 }, (_, i) => create(tenant, { title: `r${round}-${i}` })));
      for (const r of res) expect(r.status).to.equal(201);
      expect(await pagination(tenant)).to.include({ total: 50 * (round + 1) });
    }
    // The fold runs after the read that noticed the counter rows; later reads agree.
    for (let i = 0; i < 5; i++) expect(await pagination(tenant)).to.include({ total: 150 });
  });

  it('counts filtered lists, on declared and undeclared fields', async () => {
    const tenant = await tenantWithSchema();
    await Promise.all(Array.from({ length: 12 }, (_, i) => create(tenant, { title: `f${i}`, kind: i < 5 ? 'x' : 'y', email: `u${i % 3}@example.com` }).expect(201)));
    expect(await pagination(tenant, { 'filter[kind]': 'x' })).to.include({ total: 5, totalEstimated: false });
    expect(await pagination(tenant, { 'filter[email]': 'u1@example.com' })).to.include({ total: 4 });
    expect(await pagination(tenant, { 'filter[email]': 'u1@example.com', 'filter[kind]': 'y' })).to.include({ total: 2 });
  });

  it('leaves the total null with count=false', async () => {
    const tenant = await tenantWithSchema();
    await create(tenant, { title: 'a' }).expect(201);
    expect(await pagination(tenant, { count: 'false' })).to.include({ total: null, totalEstimated: false });
  });

  it('answers an exact total with count=estimated below 10,000 records', async () => {
    const tenant = await tenantWithSchema();
    await Promise.all(Array.from({ length: 3 }, (_, i) => create(tenant, { title: `e${i}`, kind: 'k' }).expect(201)));
    expect(await pagination(tenant, { count: 'estimated' })).to.include({ total: 3, totalEstimated: false });
    expect(await pagination(tenant, { count: 'estimated', 'filter[kind]': 'k' })).to.include({ total: 3, totalEstimated: false });
  });

  it('answers the planner\'s estimate with count=estimated above 10,000 records on PostgreSQL, the exact total on SQLite', async function () {
    this.timeout(60_000);
    const tenant = await tenantWithSchema();
    const kernel = t.app.kernel;
    const rc = systemContext(tenant);
    const schema = await kernel.schemas.resolve(rc, 'tot', 'note');
    const at = new Date().toISOString();
    const records = Array.from({ length: 12_000 }, (_, i) => ({ id: newId(), title: `b${i}`, kind: 'bulk', createdAt: at, updatedAt: at, version: 1 }));
    await kernel.db.transaction(rc, (trx) => kernel.records.repository.bulkInsert(trx, schema, records));
    await kernel.records.repository.analyze(schema);
    const estimated = await pagination(tenant, { count: 'estimated' });
    // Filtered by the declared index of kind: the estimate of that filter alone, not ten times too low.
    const filtered = await pagination(tenant, { count: 'estimated', 'filter[kind]': 'bulk' });
    const exact = await pagination(tenant);
    expect(exact).to.include({ total: 12_000, totalEstimated: false });
    expect(await pagination(tenant, { 'filter[kind]': 'bulk' })).to.include({ total: 12_000, totalEstimated: false });
    if (t.engine === 'postgres') {
      for (const answer of [estimated, filtered]) {
        expect(answer.totalEstimated).to.equal(true);
        expect(answer.total).to.be.within(9_000, 15_000);
      }
    } else {
      expect(estimated).to.include({ total: 12_000, totalEstimated: false });
      expect(filtered).to.include({ total: 12_000, totalEstimated: false });
    }
  });

  it('answers 400 invalid_filter for another count value', async () => {
    const tenant = await tenantWithSchema();
    const res = await t.http.get('/api/v1/data/tot/note').query({ count: 'maybe' }).set(as(tenant, 'viewer'));
    expect(res.status).to.equal(400);
    expect(res.body.data.code).to.equal('invalid_filter');
  });
});
