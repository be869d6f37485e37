import { expect } from 'chai';
import { packs as defaultPacks } from '../../config/packs.js';
import type { PlatformEvent } from '../../core/events/event.js';
import { ValidationFailed } from '../../core/base/errors.js';
import { definePack } from '../../core/kernel/define-pack.js';
import { startReceiver } from '../helpers/http-receiver.js';
import { createTenant, startTestApp, type TestApp } from '../helpers/test-app.js';
import { as } from '../helpers/tokens.js';

const received: PlatformEvent[] = [];

/** Hooks and event handlers on `bk.item`, to see that bulk writes run them as single writes do. */
const bulkWatcher = definePack({
  name: 'bulk-watcher',
  namespaces: [{ name: 'bk', open: true }],
  hooks: {
    'bk.item.create': (payload) => {
      if (payload.data.title === 'veto') throw ValidationFailed('Vetoed by the hook', [{ path: '/title', message: 'is vetoed' }]);
      if (payload.data.title === 'shout') return { ...payload.data, title: 'SHOUT' };
    },
    'bk.item.update': (payload) => {
      if (payload.data.title === 'veto') throw ValidationFailed('Vetoed by the hook', [{ path: '/title', message: 'is vetoed' }]);
    },
  },
  on: { 'bk.*': (event) => { received.push(event); } },
});

const itemSchema = {
  namespace: 'bk',
  name: 'item',
  schema: {
    type: 'object',
    required: ['title'],
    properties: { title: { type: 'string', minLength: 1 }, sku: { type: 'string' }, n: { type: 'integer' }, tags: { type: 'array' } },
  },
  unique: [['sku']],
};

async function eventually(check: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
}

describe('bulk writes: POST /api/v1/data/:ns/:schema/bulk', () => {
  let t: TestApp;
  let tenant: string;
  const path = '/api/v1/data/bk/item';

  before(async () => {
    t = await startTestApp({ packs: [...defaultPacks, bulkWatcher] });
  });
  after(() => t?.close());
  beforeEach(async () => {
    tenant = await createTenant(t, 'bk');
    await t.http.post('/api/v1/metadata/schemas').set(as(tenant, 'admin')).send(itemSchema).expect(201);
  });

  const total = async () => (await t.http.get(`${path}?limit=1`).set(as(tenant, 'viewer')).expect(200)).body.data.pagination.total as number;

  it('creates 1000 records at once, with their events', async () => {
    received.length = 0;
    const items = Array.from({ length: 1000 }, (_, i) => ({ title: i === 7 ? 'shout' : `item ${i}`, sku: `sku-${i}`, n: i }));
    const res = await t.http.post(`${path}/bulk`).set(as(tenant, 'editor')).send({ items }).expect(201);
    expect(res.body.status).to.equal('success');
    expect(res.body.data.items).to.have.length(1000);
    expect(res.body.data.items[3]).to.include({ title: 'item 3', sku: 'sku-3', n: 3, version: 1 });
    expect(res.body.data.items[7].title).to.equal('SHOUT');
    expect(new Set(res.body.data.items.map((i: { id: string }) => i.id)).size).to.equal(1000);
    expect(await total()).to.equal(1000);
    const one = await t.http.get(`${path}/${res.body.data.items[999].id}`).set(as(tenant, 'viewer')).expect(200);
    expect(one.body.data.item).to.include({ title: 'item 999', n: 999 });
    await eventually(() => received.filter((e) => e.tenantId === tenant).length >= 1000);
    const mine = received.filter((e) => e.tenantId === tenant);
    expect(mine).to.have.length(1000);
    expect(mine.every((e) => e.name === 'bk.item.created')).to.equal(true);
  });

  it('writes nothing when one item fails its schema, and names /items/<i>/<path>', async () => {
    const items = Array.from({ length: 600 }, (_, i) => ({ title: `item ${i}`, n: i }));
    items[500] = { title: '', n: 1 };
    (items[42] as Record<string, unknown>).n = 'x';
    const res = await t.http.post(`${path}/bulk`).set(as(tenant, 'editor')).send({ items }).expect(400);
    expect(res.body.status).to.equal('fail');
    expect(res.body.data.code).to.equal('validation_failed');
    const paths = res.body.data.errors.map((e: { path: string }) => e.path);
    expect(paths).to.include('/items/500/title');
    expect(paths).to.include('/items/42/n');
    expect(await total()).to.equal(0);
  });

  it('writes nothing when a hook refuses one item, or a server-managed field is set', async () => {
    const vetoed = await t.http.post(`${path}/bulk`).set(as(tenant, 'editor'))
      .send({ items: [{ title: 'a' }, { title: 'veto' }, { title: 'c' }] }).expect(400);
    expect(vetoed.body.data.errors).to.deep.include({ path: '/items/1/title', message: 'is vetoed' });
    const managed = await t.http.post(`${path}/bulk`).set(as(tenant, 'editor'))
      .send({ items: [{ title: 'a' }, { title: 'b', id: 'x' }] }).expect(400);
    expect(managed.body.data.errors[0].path).to.equal('/items/1/id');
    expect(await total()).to.equal(0);
  });

  it('refuses an empty or oversized list, a viewer, and a unique value taken (409, nothing written)', async () => {
    await t.http.post(`${path}/bulk`).set(as(tenant, 'editor')).send({ items: [] }).expect(400);
    await t.http.post(`${path}/bulk`).set(as(tenant, 'editor')).send({ items: Array.from({ length: 1001 }, (_, i) => ({ title: `${i}` })) }).expect(400);
    await t.http.post(`${path}/bulk`).set(as(tenant, 'viewer')).send({ items: [{ title: 'a' }] }).expect(403);
    await t.http.post(`${path}/bulk`).set(as(tenant, 'editor')).send({ items: [{ title: 'a' }] }).expect(201);
    await t.http.post('/api/v1/data/bk/nope/bulk').set(as(tenant, 'editor')).send({ items: [{ title: 'a' }] }).expect(404);
    await t.http.post(path).set(as(tenant, 'editor')).send({ title: 'taken', sku: 'dup' }).expect(201);
    const res = await t.http.post(`${path}/bulk`).set(as(tenant, 'editor')).send({ items: [{ title: 'b', sku: 'new' }, { title: 'c', sku: 'dup' }] }).expect(409);
    expect(res.body.data.code).to.equal('conflict');
    expect(await total()).to.equal(2);
  });

  it('upserts on a unique field: stored values update (merge patch), new ones are created', async () => {
    received.length = 0;
    const first = await t.http.post(`${path}/bulk`).set(as(tenant, 'editor'))
      .send({ items: [{ title: 'one', sku: 'a', n: 1, tags: ['x'] }, { title: 'two', sku: 'b', n: 2 }] }).expect(201);
    const res = await t.http.post(`${path}/bulk?upsert=sku`).set(as(tenant, 'editor'))
      .send({ items: [{ sku: 'b', n: 20 }, { title: 'three', sku: 'c' }, { sku: 'a', tags: null }] }).expect(200);
    expect(res.body.data).to.include({ created: 1, updated: 2 });
    const [b, c, a] = res.body.data.items;
    expect(b).to.include({ id: first.body.data.items[1].id, title: 'two', n: 20, version: 2 });
    expect(c).to.include({ title: 'three', sku: 'c', version: 1 });
    expect(a).to.include({ id: first.body.data.items[0].id, title: 'one', version: 2 });
    expect(a).to.not.have.property('tags');
    expect(await total()).to.equal(3);
    await eventually(() => received.filter((e) => e.tenantId === tenant).length >= 5);
    const names = received.filter((e) => e.tenantId === tenant).map((e) => e.name).sort();
    expect(names).to.deep.equal(['bk.item.created', 'bk.item.created', 'bk.item.created', 'bk.item.updated', 'bk.item.updated']);
  });

  it('refuses an upsert on a field that is not unique, an item without the key, a key twice, and a merged record that fails', async () => {
    await t.http.post(`${path}/bulk`).set(as(tenant, 'editor')).send({ items: [{ title: 'one', sku: 'a' }] }).expect(201);
    const notUnique = await t.http.post(`${path}/bulk?upsert=title`).set(as(tenant, 'editor')).send({ items: [{ title: 'x' }] }).expect(400);
    expect(notUnique.body.data.errors[0].path).to.equal('query/upsert');
    const noKey = await t.http.post(`${path}/bulk?upsert=sku`).set(as(tenant, 'editor')).send({ items: [{ title: 'x' }] }).expect(400);
    expect(noKey.body.data.errors[0].path).to.equal('/items/0/sku');
    const twice = await t.http.post(`${path}/bulk?upsert=sku`).set(as(tenant, 'editor'))
      .send({ items: [{ title: 'x', sku: 'z' }, { title: 'y', sku: 'z' }] }).expect(400);
    expect(twice.body.data.errors[0].path).to.equal('/items/1/sku');
    const merged = await t.http.post(`${path}/bulk?upsert=sku`).set(as(tenant, 'editor'))
      .send({ items: [{ title: 'new', sku: 'n' }, { sku: 'a', title: '' }, { sku: 'q' }] }).expect(400);
    const paths = merged.body.data.errors.map((e: { path: string }) => e.path);
    expect(paths).to.include('/items/1/title');
    expect(paths.some((p: string) => p.startsWith('/items/2'))).to.equal(true);
    expect(await total()).to.equal(1);
  });

  it('queues a webhook delivery per item for each connector that subscribes, as single writes do', async () => {
    const receiver = await startReceiver();
    try {
      const connector = async (events: string[]) => (await t.http.post('/api/v1/connectors').set(as(tenant, 'admin'))
        .send({ url: `${receiver.url}/hook`, events }).expect(201)).body.data.id as string;
      const created = await connector(['bk.item.created']);
      const all = await connector(['bk.*']);
      const none = await connector(['other.*']);
      await t.http.post(`${path}/bulk`).set(as(tenant, 'editor')).send({ items: Array.from({ length: 30 }, (_, i) => ({ title: `t${i}`, sku: `s${i}` })) }).expect(201);
      await t.http.post(`${path}/bulk?upsert=sku`).set(as(tenant, 'editor')).send({ items: [{ sku: 's1', n: 1 }, { title: 'new', sku: 'x' }] }).expect(200);
      const count = async (id: string) => (await t.http.get(`/api/v1/connectors/${id}/deliveries?limit=1`).set(as(tenant, 'admin')).expect(200)).body.data.pagination.total;
      expect(await count(created)).to.equal(31);
      expect(await count(all)).to.equal(32);
      expect(await count(none)).to.equal(0);
      await eventually(() => receiver.requests.length >= 63, 10_000);
      const events = receiver.requests.map((r) => JSON.parse(r.body).event as string);
      expect(events.filter((e) => e === 'bk.item.updated')).to.have.length(1);
      expect(events).to.have.length(63);
    } finally {
      await receiver.stop();
    }
  });

  it('replays the answer for an Idempotency-Key sent again, writing nothing twice', async () => {
    const body = { items: [{ title: 'a' }, { title: 'b' }] };
    const first = await t.http.post(`${path}/bulk`).set(as(tenant, 'editor')).set('Idempotency-Key', 'bulk-1').send(body).expect(201);
    const again = await t.http.post(`${path}/bulk`).set(as(tenant, 'editor')).set('Idempotency-Key', 'bulk-1').send(body).expect(201);
    expect(again.body.data.items.map((i: { id: string }) => i.id)).to.deep.equal(first.body.data.items.map((i: { id: string }) => i.id));
    expect(await total()).to.equal(2);
  });

  it('50 parallel upserts of the same keys leave one record per key', async () => {
    const keys = Array.from({ length: 20 }, (_, i) => `k${i}`);
    const results = await Promise.all(Array.from({ length: 50 }, (_, r) => t.http.post(`${path}/bulk?upsert=sku`).set(as(tenant, 'editor'))
      .send({ items: keys.map((sku) => ({ title: `round ${r}`, sku })) })));
    for (const res of results) expect([200, 409], JSON.stringify(res.body)).to.include(res.status);
    expect(results.filter((r) => r.status === 200).length).to.be.greaterThan(0);
    expect(await total()).to.equal(keys.length);
    const parallelCreates = await Promise.all(Array.from({ length: 50 }, (_, r) => t.http.post(`${path}/bulk`).set(as(tenant, 'editor'))
      .send({ items: Array.from({ length: 20 }, (_, i) => ({ title: `p${r}-${i}` })) })));
    expect(parallelCreates.every((r) => r.status === 201)).to.equal(true);
    expect(await total()).to.equal(keys.length + 1000);
  });

  it('checks the references of all items together, naming the dangling ones, with statements by chunks of rows, not per item', async () => {
    await t.http.post('/api/v1/metadata/schemas').set(as(tenant, 'admin')).send({
      namespace: 'bk', name: 'line',
      schema: { type: 'object', required: ['item'], properties: { item: { type: 'string', 'x-ref': 'bk.item' }, also: { type: 'array', items: { type: 'string' }, 'x-ref': 'bk.item' } } },
    }).expect(201);
    const targets = (await t.http.post(`${path}/bulk`).set(as(tenant, 'editor')).send({ items: Array.from({ length: 20 }, (_, i) => ({ title: `t${i}` })) }).expect(201)).body.data.items.map((i: { id: string }) => i.id);
    const lines = (n: number) => Array.from({ length: n }, (_, i) => ({ item: targets[i % 20], also: [targets[(i + 1) % 20]] }));
    const missing = '01890000-0000-7000-8000-000000000000';
    const bad = lines(300);
    bad[17] = { item: missing, also: [targets[0]] };
    bad[250] = { item: targets[1], also: [targets[2], missing] };
    const refused = await t.http.post('/api/v1/data/bk/line/bulk').set(as(tenant, 'editor')).send({ items: bad }).expect(400);
    expect(refused.body.data.errors.map((e: { path: string }) => e.path)).to.deep.equal(['/items/17/item', '/items/250/also/1']);
    expect((await t.http.get('/api/v1/data/bk/line?limit=1').set(as(tenant, 'viewer')).expect(200)).body.data.pagination.total).to.equal(0);
    const ten = await t.http.post('/api/v1/data/bk/line/bulk').set(as(tenant, 'editor')).send({ items: lines(10) }).expect(201);
    const thousand = await t.http.post('/api/v1/data/bk/line/bulk').set(as(tenant, 'editor')).send({ items: lines(1000) }).expect(201);
    expect(thousand.body.data.items).to.have.length(1000);
    // One reference lookup per relation, not one per item (that was 2000 statements): the rest are multi-row inserts.
    expect(Number(thousand.headers['x-query-count']), `${ten.headers['x-query-count']} statements for 10 items, ${thousand.headers['x-query-count']} for 1000`)
      .to.be.below(50);
  });
});
