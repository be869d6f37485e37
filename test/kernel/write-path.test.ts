import { expect } from 'chai';
import pg from 'pg';
import { FEED_APPLICATION } from '../../core/db/change-feed.js';
import { systemContext } from '../../core/base/request-context.js';
import { ENGINE } from '../helpers/engine.js';
import { startReceiver, type HttpReceiver } from '../helpers/http-receiver.js';
import { createTenant, startTestApp, type TestApp } from '../helpers/test-app.js';
import { as, superadmin } from '../helpers/tokens.js';
import { waitUntil } from '../helpers/wait.js';

/**
 * The write path under concurrency: transactions made of queued writes commit in groups (SQLite: one
 * transaction with a savepoint each; PostgreSQL: one statement, retried member by member on failure),
 * and the per-request tenant lookup is served from memory while the change feed keeps it right.
 */

const skuSchema = {
  namespace: 'wp',
  name: 'item',
  schema: { type: 'object', required: ['sku'], properties: { sku: { type: 'string' }, n: { type: 'integer' } } },
  unique: [['sku']],
};

describe('the write path: group commit of concurrent writes', () => {
  let t: TestApp;
  let tenant: string;
  let receiver: HttpReceiver;

  before(async () => {
    t = await startTestApp();
  });
  after(() => t?.close());

  beforeEach(async () => {
    tenant = await createTenant(t, 'wp');
    receiver = await startReceiver();
    await t.http.post('/api/v1/metadata/schemas').set(as(tenant, 'admin')).send(skuSchema).expect(201);
    await t.http.post('/api/v1/connectors').set(as(tenant, 'admin')).send({ url: `${receiver.url}/hook`, events: ['wp.*'] }).expect(201);
  });
  afterEach(() => receiver.stop());

  it('commits 40 concurrent creates; the two that share a unique value get one 201 and one 409, and only written records raise events', async () => {
    const skus = Array.from({ length: 40 }, (_, i) => (i === 7 || i === 23 ? 'same' : `sku-${i}`));
    const results = await Promise.all(skus.map((sku, n) => t.http.post('/api/v1/data/wp/item').set(as(tenant, 'editor')).send({ sku, n })));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).to.have.length(39);
    expect(statuses.filter((s) => s === 409)).to.have.length(1);
    const refused = results.find((r) => r.status === 409)!;
    expect(refused.body.status).to.equal('fail');
    expect(refused.body.data.code).to.equal('conflict');
    expect(refused.body.data.message).to.not.match(/SQLITE|duplicate key|rec_\d+|constraint|w\d+ AS/i);

    const list = await t.http.get('/api/v1/data/wp/item?limit=100').set(as(tenant, 'viewer')).expect(200);
    expect(list.body.data.pagination.total).to.equal(39);
    const stored = new Set(list.body.data.items.map((i: { id: string }) => i.id));
    const created = results.filter((r) => r.status === 201).map((r) => r.body.data.item.id as string);
    expect(created.every((id) => stored.has(id))).to.equal(true);

    // One delivery per written record, none for the refused one.
    await receiver.waitFor(39);
    await new Promise((r) => setTimeout(r, 300));
    const delivered = receiver.requests.map((r) => JSON.parse(r.body).payload.id as string);
    expect(delivered).to.have.length(39);
    expect(new Set(delivered)).to.deep.equal(new Set(created));
  });

  it('queues one delivery per subscribing connector, with its own UUIDv7 id, and none for others', async () => {
    const other = await startReceiver();
    try {
      await t.http.post('/api/v1/connectors').set(as(tenant, 'admin')).send({ url: `${other.url}/all`, events: ['*'] }).expect(201);
      const off = await t.http.post('/api/v1/connectors').set(as(tenant, 'admin')).send({ url: `${other.url}/crm`, events: ['crm.*', 'wp.item.deleted'] }).expect(201);
      const product = await t.http.post('/api/v1/connectors').set(as(tenant, 'admin')).send({ url: `${other.url}/shop`, events: ['wp.item.created'], product: 'shop' }).expect(201);
      await t.http.post('/api/v1/data/wp/item').set(as(tenant, 'editor')).send({ sku: 'a' }).expect(201);
      await receiver.waitFor(1);
      await other.waitFor(1);
      await new Promise((r) => setTimeout(r, 300));
      expect(other.requests.map((r) => r.path)).to.deep.equal(['/all']);
      for (const id of [off.body.data.id, product.body.data.id]) {
        const log = await t.http.get(`/api/v1/connectors/${id}/deliveries`).set(as(tenant, 'admin')).expect(200);
        expect(log.body.data.items).to.have.length(0);
      }
      const hook = receiver.requests[0];
      expect(String(hook.headers['webhook-id'])).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(hook.headers['webhook-id']).to.not.equal(other.requests[0].headers['webhook-id']);
    } finally {
      await other.stop();
    }
  });

  it('tells each of 30 concurrent publishes its own delivery count, whatever group it commits in', async () => {
    await t.http.post('/api/v1/connectors').set(as(tenant, 'admin')).send({ url: `${receiver.url}/orders`, events: ['shop.order.*'] }).expect(201);
    await t.http.post('/api/v1/connectors').set(as(tenant, 'admin')).send({ url: `${receiver.url}/paid`, events: ['shop.order.paid'] }).expect(201);
    const names = Array.from({ length: 30 }, (_, i) => ['shop.order.paid', 'shop.order.created', 'shop.cart.created'][i % 3]);
    const results = await Promise.all(names.map((event, n) => t.http.post('/api/v1/events/publish').set(as(tenant, 'admin')).send({ event, payload: { n } })));
    expect(results.map((r) => r.status).every((s) => s === 202)).to.equal(true);
    expect(results.map((r) => r.body.data.deliveries)).to.deep.equal(names.map((e) => (e === 'shop.order.paid' ? 2 : e === 'shop.order.created' ? 1 : 0)));
    await receiver.waitFor(30);
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.requests.filter((r) => r.path === '/paid')).to.have.length(10);
    expect(receiver.requests.filter((r) => r.path === '/orders')).to.have.length(20);
  });

  it('POST /events/publish still answers with the number of deliveries queued', async () => {
    await t.http.post('/api/v1/connectors').set(as(tenant, 'admin')).send({ url: `${receiver.url}/second`, events: ['wp.thing.happened'] }).expect(201);
    const res = await t.http.post('/api/v1/events/publish').set(as(tenant, 'admin')).send({ event: 'wp.thing.happened', payload: { x: 1 } });
    expect(res.status).to.equal(202);
    expect(res.body.data.deliveries).to.equal(2);
    const none = await t.http.post('/api/v1/events/publish').set(as(tenant, 'admin')).send({ event: 'other.thing.happened', payload: {} });
    expect(none.body.data.deliveries).to.equal(0);
  });
  // A row lock held by another connection (PostgreSQL; a SQLite writer locks the whole file).
  if (ENGINE === 'postgres') {
    it("keeps other tenants' writes going while one create waits on a row lock", async () => {
      const other = await createTenant(t, 'wpo');
      await t.http.post('/api/v1/metadata/schemas').set(as(other, 'admin')).send(skuSchema).expect(201);
      const schema = await t.app.kernel.schemas.resolve(systemContext(tenant), 'wp', 'item');
      const blocker = new pg.Client({ connectionString: t.database.url });
      await blocker.connect();
      try {
        // An uncommitted row with the same unique value: the create below waits for this transaction.
        await blocker.query('BEGIN');
        const at = new Date().toISOString();
        await blocker.query(`INSERT INTO ${schema.tableName} (tenant_id, id, data, version, created_at, updated_at) VALUES ($1, $2, $3, 1, $4, $4)`,
          [tenant, '00000000-0000-7000-8000-000000000001', JSON.stringify({ sku: 'held' }), at]);
        const waiting = t.http.post('/api/v1/data/wp/item').set(as(tenant, 'editor')).send({ sku: 'held' }).then((r) => r);
        await new Promise((r) => setTimeout(r, 100));
        const started = Date.now();
        const others = await Promise.all(Array.from({ length: 5 }, (_, n) =>
          t.http.post('/api/v1/data/wp/item').set(as(other, 'editor')).send({ sku: `free-${n}` })));
        expect(others.map((r) => r.status)).to.deep.equal([201, 201, 201, 201, 201]);
        expect(Date.now() - started).to.be.below(1000);
        await blocker.query('ROLLBACK');
        const done = await waiting;
        expect(done.status).to.equal(201);
        expect(done.body.data.item.sku).to.equal('held');
      } finally {
        await blocker.end();
      }
    });
  }
});

describe('the write path: tenant lookups kept in memory', () => {
  let a: TestApp;
  let b: TestApp;
  let tenant: string;

  before(async () => {
    a = await startTestApp();
    // A second process on the same database.
    b = await startTestApp({ database: a.database });
  });
  after(async () => {
    await b?.close();
    await a?.close();
  });

  beforeEach(async () => {
    tenant = await createTenant(a, 'wpc');
    await a.http.post('/api/v1/metadata/schemas').set(as(tenant, 'admin')).send(skuSchema).expect(201);
  });

  const list = (t: TestApp) => t.http.get('/api/v1/data/wp/item?count=false').set(as(tenant, 'viewer'));
  const disable = (t: TestApp, isEnabled: boolean) =>
    t.http.patch(`/api/v1/tenants/${tenant}/licensed-modules`).set(superadmin()).send({ appCode: 'crm', isEnabled }).expect(200);

  it('refuses a disabled module at once in the process that disabled it, and within moments in another', async () => {
    // Both processes have answered for the tenant, so both know it.
    await a.http.get('/api/v1/data/crm/deal?count=false').set(as(tenant, 'viewer')).expect(200);
    await b.http.get('/api/v1/data/crm/deal?count=false').set(as(tenant, 'viewer')).expect(200);
    await disable(a, false);
    const here = await a.http.get('/api/v1/data/crm/deal?count=false').set(as(tenant, 'viewer'));
    expect(here.status).to.equal(403);
    expect(here.body.data.code).to.equal('module_disabled');
    await waitUntil('the other process refuses', async () => (await b.http.get('/api/v1/data/crm/deal?count=false').set(as(tenant, 'viewer'))).status === 403, 2000);
    await disable(b, true);
    await waitUntil('the first process serves again', async () => (await a.http.get('/api/v1/data/crm/deal?count=false').set(as(tenant, 'viewer'))).status === 200, 2000);
  });

  it('refuses members of a suspended tenant in both processes, and serves them again once it is active', async () => {
    await list(a).expect(200);
    await list(b).expect(200);
    await a.http.patch(`/api/v1/admin/tenants/${tenant}`).set(superadmin()).send({ status: 'suspended' }).expect(200);
    expect((await list(a)).status).to.equal(403);
    await waitUntil('the other process refuses', async () => (await list(b)).status === 403, 2000);
    await b.http.patch(`/api/v1/admin/tenants/${tenant}`).set(superadmin()).send({ status: 'active' }).expect(200);
    expect((await list(b)).status).to.equal(200);
    await waitUntil('the first process serves again', async () => (await list(a)).status === 200, 2000);
  });

  // The LISTEN connection exists on PostgreSQL only (SQLite processes see each other's commits in data_version).
  if (ENGINE === 'postgres') {
    it('stays right while the change feed is down: the database answers until the feed listens again', async () => {
      await list(a).expect(200);
      await list(b).expect(200);
      const admin = new pg.Client({ connectionString: a.database.url });
      await admin.connect();
      try {
        // Cut both processes' LISTEN connections, then suspend the tenant through the first.
        const cut = await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()', [FEED_APPLICATION]);
        expect(cut.rowCount).to.equal(2);
        await new Promise((r) => setTimeout(r, 100));
        await a.http.patch(`/api/v1/admin/tenants/${tenant}`).set(superadmin()).send({ status: 'suspended' }).expect(200);
        // The second process's feed is down or has just come back; either way it must not serve the old answer.
        expect((await list(b)).status).to.equal(403);
        await waitUntil('both feeds listen again', async () => {
          const r = await admin.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()', [FEED_APPLICATION]);
          return r.rows[0].n === 2;
        });
        await b.http.patch(`/api/v1/admin/tenants/${tenant}`).set(superadmin()).send({ status: 'active' }).expect(200);
        await waitUntil('the first process serves again', async () => (await list(a)).status === 200, 2000);
      } finally {
        await admin.end();
      }
    });
  }
});

describe('the read path: list items spliced from the stored JSON text', () => {
  let t: TestApp;
  let tenant: string;

  before(async () => {
    t = await startTestApp();
    tenant = await createTenant(t, 'wpr');
    await t.http.post('/api/v1/metadata/schemas').set(as(tenant, 'admin')).send({
      namespace: 'wp', name: 'doc', schema: { type: 'object', properties: { title: { type: 'string' }, n: { type: 'number' } } },
    }).expect(201);
  });
  after(() => t?.close());

  it('lists exactly the records that GET by id returns, whatever their documents hold', async () => {
    const documents = [
      { title: 'quotes " and \\ backslashes', n: 1.5, nested: { deep: [1, { x: null }], empty: {} } },
      { title: 'ünïcödé ✓ 日本語 \u2028 line separator', tags: ['a', 'b'], flag: false },
      { title: 'control \u0001 chars \n\t', n: -0.25 },
      {},
    ];
    const created: string[] = [];
    for (const doc of documents) {
      const res = await t.http.post('/api/v1/data/wp/doc').set(as(tenant, 'editor')).send(doc);
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      created.push(res.body.data.item.id);
    }
    const list = await t.http.get('/api/v1/data/wp/doc?sort=createdAt').set(as(tenant, 'viewer')).expect(200);
    expect(list.headers['content-type']).to.equal('application/json; charset=utf-8');
    expect(list.body.status).to.equal('success');
    expect(list.body.data.pagination).to.deep.equal({ limit: 50, offset: 0, total: 4, totalEstimated: false, hasMore: false, nextCursor: null });
    for (const [i, id] of created.entries()) {
      const one = await t.http.get(`/api/v1/data/wp/doc/${id}`).set(as(tenant, 'viewer')).expect(200);
      expect(list.body.data.items[i]).to.deep.equal(one.body.data.item);
      expect(Object.keys(list.body.data.items[i])).to.deep.equal(Object.keys(one.body.data.item));
    }
    const projected = await t.http.get('/api/v1/data/wp/doc?sort=createdAt&fields=title&limit=2').set(as(tenant, 'viewer')).expect(200);
    expect(projected.body.data.items).to.deep.equal([{ id: created[0], title: documents[0].title }, { id: created[1], title: documents[1].title }]);
    expect(projected.body.data.pagination.hasMore).to.equal(true);
    const next = await t.http.get(`/api/v1/data/wp/doc?sort=createdAt&fields=title&limit=2&cursor=${projected.body.data.pagination.nextCursor}`).set(as(tenant, 'viewer')).expect(200);
    expect(next.body.data.items.map((i: { id: string }) => i.id)).to.deep.equal(created.slice(2));
  });
});
