import Database from 'better-sqlite3';
import { expect } from 'chai';
import pg from 'pg';
import { packs as defaultPacks } from '../../config/packs.js';
import type { PlatformEvent } from '../../core/events/event.js';
import { ValidationFailed } from '../../core/base/errors.js';
import { definePack } from '../../core/kernel/define-pack.js';
import { systemContext } from '../../core/base/request-context.js';
import { createTenant, startTestApp, type TestApp } from '../helpers/test-app.js';
import { as } from '../helpers/tokens.js';

const received: PlatformEvent[] = [];

/** A pack that watches record events after commit and vetoes some writes inside the transaction. */
const watcherPack = definePack({
  name: 'watcher',
  namespaces: [{ name: 'rec', open: true }],
  hooks: {
    'rec.doc.create': async (payload, rc, pack) => {
      if (payload.data.title === 'veto') {
        // Write something in the same transaction first, to see that the veto rolls it back too.
        await pack.records.create(rc, 'rec', 'doc', { title: 'written by the hook before the veto' });
        throw ValidationFailed('Vetoed by the hook', [{ path: '/title', message: 'is vetoed' }]);
      }
      if (payload.data.title === 'shout') return { ...payload.data, title: 'SHOUT' };
    },
    'rec.doc.update': (payload) => {
      if (payload.data.title === 'veto') throw ValidationFailed('Vetoed by the hook');
    },
    'rec.doc.delete': (payload) => {
      if (payload.data.locked === true) throw ValidationFailed('Locked documents cannot be deleted');
    },
  },
  on: {
    'rec.*': (event) => {
      received.push(event);
    },
  },
});

const docSchema = {
  namespace: 'rec',
  name: 'doc',
  schema: {
    type: 'object',
    required: ['title'],
    properties: {
      title: { type: 'string', minLength: 1 },
      sku: { type: 'string' },
      body: { type: 'object' },
      list: { type: 'array' },
      locked: { type: 'boolean' },
      status: { type: 'string', default: 'draft' },
    },
  },
  unique: [['sku']],
};

async function eventually<T>(read: () => T, ok: (v: T) => boolean, timeoutMs = 3000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = read();
    if (ok(value) || Date.now() > deadline) return value;
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('records through /api/v1/data/:ns/:schema/:id', () => {
  let t: TestApp;
  let tenant: string;

  before(async () => {
    t = await startTestApp({ packs: [...defaultPacks, watcherPack] });
  });
  after(() => t?.close());
  beforeEach(async () => {
    tenant = await createTenant(t, 'rec');
    await t.http.post('/api/v1/metadata/schemas').set(as(tenant, 'admin')).send(docSchema).expect(201);
  });

  const create = (body: object, tenantId = tenant) => t.http.post('/api/v1/data/rec/doc').set(as(tenantId, 'editor')).send(body);
  const url = (id: string) => `/api/v1/data/rec/doc/${id}`;
  const outbox = (tenantId = tenant) => t.app.kernel.db.knex('outbox_events').where({ tenant_id: tenantId }).orderBy('occurred_at').select('name', 'payload');
  const eventsOf = (tenantId: string) => received.filter((e) => e.tenantId === tenantId);

  describe('POST', () => {
    it('answers 201 with defaults applied, server fields set and ETag "1"', async () => {
      const res = await create({ title: 'Hello' });
      expect(res.status).to.equal(201);
      expect(res.headers.etag).to.equal('"1"');
      expect(res.body.data.item).to.include({ title: 'Hello', status: 'draft', version: 1 });
    });

    it('answers 400 validation_failed when the body sets server-managed fields', async () => {
      const res = await create({ title: 'x', id: '0190a0a0-0000-7000-8000-000000000000', version: 9, createdAt: 'now', updatedAt: 'then' });
      expect(res.status).to.equal(400);
      expect(res.body.data.code).to.equal('validation_failed');
      expect(res.body.data.errors.map((e: { path: string }) => e.path).sort()).to.deep.equal(['/createdAt', '/id', '/updatedAt', '/version']);
    });

    it('answers 400 validation_failed for a body that is not an object', async () => {
      for (const body of [[1, 2], 'text', 42]) {
        const res = await t.http.post('/api/v1/data/rec/doc').set(as(tenant, 'editor')).set('Content-Type', 'application/json').send(JSON.stringify(body));
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(res.body.data.code).to.equal('validation_failed');
      }
    });

    it('answers 409 conflict for a duplicate unique value on this engine, per tenant only', async () => {
      await create({ title: 'a', sku: 'S-1' }).expect(201);
      const dup = await create({ title: 'b', sku: 'S-1' });
      expect(dup.status).to.equal(409);
      expect(dup.body.status).to.equal('fail');
      expect(dup.body.data.code).to.equal('conflict');
      expect(dup.body.data.message).to.not.match(/SQLITE|duplicate key|rec_\d+|constraint/i);
      const other = await createTenant(t, 'rec-other');
      await t.http.post('/api/v1/metadata/schemas').set(as(other, 'admin')).send(docSchema).expect(201);
      expect((await create({ title: 'c', sku: 'S-1' }, other)).status).to.equal(201);
      // The same translation on an update that collides.
      const second = await create({ title: 'd', sku: 'S-2' });
      const clash = await t.http.patch(url(second.body.data.item.id)).set(as(tenant, 'editor')).send({ sku: 'S-1' });
      expect(clash.status).to.equal(409);
      expect(clash.body.data.code).to.equal('conflict');
    });
  });

  describe('GET by id', () => {
    it('answers 200 with the record and its ETag, 404 not_found for unknown or malformed ids', async () => {
      const created = (await create({ title: 'Read me' })).body.data.item;
      const res = await t.http.get(url(created.id)).set(as(tenant, 'viewer'));
      expect(res.status).to.equal(200);
      expect(res.headers.etag).to.equal('"1"');
      expect(res.body).to.deep.equal({ status: 'success', data: { item: created } });
      for (const id of ['0190a0a0-0000-7000-8000-000000000000', 'not-a-uuid', "1' or '1'='1"]) {
        const missing = await t.http.get(url(encodeURIComponent(id))).set(as(tenant, 'viewer'));
        expect(missing.status, id).to.equal(404);
        expect(missing.body.data.code).to.equal('not_found');
      }
    });
  });

  describe('PATCH (JSON merge patch)', () => {
    it('merges nested objects, removes keys set to null, replaces arrays, bumps version and updatedAt', async () => {
      const created = (await create({ title: 'T', body: { a: 1, b: { c: 2, keep: true } }, list: [1, 2, 3], locked: false })).body.data.item;
      const res = await t.http.patch(url(created.id)).set(as(tenant, 'editor')).send({ body: { b: { c: null, d: 3 }, e: 'x' }, list: [9], locked: null });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.headers.etag).to.equal('"2"');
      const item = res.body.data.item;
      expect(item.body).to.deep.equal({ a: 1, b: { keep: true, d: 3 }, e: 'x' });
      expect(item.list).to.deep.equal([9]);
      expect(item).to.not.have.property('locked');
      expect(item).to.include({ id: created.id, title: 'T', version: 2, createdAt: created.createdAt });
      expect(item.updatedAt >= created.updatedAt).to.equal(true);
      const read = await t.http.get(url(created.id)).set(as(tenant, 'viewer'));
      expect(read.body.data.item).to.deep.equal(item);
    });

    it('validates the merged document: removing a required field answers 400', async () => {
      const created = (await create({ title: 'T' })).body.data.item;
      const res = await t.http.patch(url(created.id)).set(as(tenant, 'editor')).send({ title: null });
      expect(res.status).to.equal(400);
      expect(res.body.data.errors).to.deep.include({ path: '/title', message: 'is required' });
      const server = await t.http.patch(url(created.id)).set(as(tenant, 'editor')).send({ version: 7 });
      expect(server.status).to.equal(400);
      expect(server.body.data.errors[0].path).to.equal('/version');
      const unchanged = await t.http.get(url(created.id)).set(as(tenant, 'viewer'));
      expect(unchanged.body.data.item.version).to.equal(1);
    });

    it('honours If-Match: a matching version (plain, quoted, weak or *) passes, a stale one answers 412', async () => {
      const id = (await create({ title: 'v1' })).body.data.item.id;
      for (const [ifMatch, version] of [['"1"', 2], ['W/"2"', 3], ['3', 4], ['*', 5], ['"9", "5"', 6]] as const) {
        const res = await t.http.patch(url(id)).set(as(tenant, 'editor')).set('If-Match', ifMatch).send({ title: `v${version}` });
        expect(res.status, ifMatch).to.equal(200);
        expect(res.body.data.item.version).to.equal(version);
      }
      const stale = await t.http.patch(url(id)).set(as(tenant, 'editor')).set('If-Match', '"1"').send({ title: 'lost' });
      expect(stale.status).to.equal(412);
      expect(stale.body.data.code).to.equal('version_mismatch');
      expect((await t.http.get(url(id)).set(as(tenant, 'viewer'))).body.data.item.title).to.equal('v6');
    });

    it('loses no update under concurrent PATCHes: each one is applied or answers 409', async () => {
      const id = (await create({ title: 'race', body: {} })).body.data.item.id;
      const results = await Promise.all(Array.from({ length: 12 }, (_, i) => t.http.patch(url(id)).set(as(tenant, 'editor')).send({ body: { [`f${i}`]: i } })));
      const applied = results.filter((r) => r.status === 200);
      expect(results.every((r) => r.status === 200 || r.status === 409), results.map((r) => r.status).join(',')).to.equal(true);
      expect(applied.length).to.be.greaterThan(0);
      const final = (await t.http.get(url(id)).set(as(tenant, 'viewer'))).body.data.item;
      expect(final.version).to.equal(1 + applied.length);
      // Every PATCH that answered 200 left its field in the final document; none that answered 409 did.
      const expected = results.flatMap((r, i) => (r.status === 200 ? [`f${i}`] : [])).sort();
      expect(Object.keys(final.body).sort()).to.deep.equal(expected);
    });
  });

  describe('DELETE', () => {
    it('answers 200 with data null, then 404; a stale If-Match answers 412 and keeps the record', async () => {
      const id = (await create({ title: 'bye' })).body.data.item.id;
      const stale = await t.http.delete(url(id)).set(as(tenant, 'editor')).set('If-Match', '"4"');
      expect(stale.status).to.equal(412);
      const res = await t.http.delete(url(id)).set(as(tenant, 'editor')).set('If-Match', '"1"');
      expect(res.status).to.equal(200);
      expect(res.body).to.deep.equal({ status: 'success', data: null });
      expect((await t.http.get(url(id)).set(as(tenant, 'viewer'))).status).to.equal(404);
      expect((await t.http.delete(url(id)).set(as(tenant, 'editor'))).status).to.equal(404);
    });

    it('answers 403 forbidden to a viewer for writes', async () => {
      const id = (await create({ title: 'mine' })).body.data.item.id;
      expect((await t.http.patch(url(id)).set(as(tenant, 'viewer')).send({ title: 'x' })).status).to.equal(403);
      expect((await t.http.delete(url(id)).set(as(tenant, 'viewer'))).status).to.equal(403);
    });
  });

  describe('list totals', () => {
    it('counts every write: through the API and by another connection (another process)', async () => {
      const total = async () => (await t.http.get('/api/v1/data/rec/doc').set(as(tenant, 'viewer'))).body.data.pagination.total;
      await create({ title: 'one' }).expect(201);
      await create({ title: 'two' }).expect(201);
      expect(await total()).to.equal(2);
      expect(await total()).to.equal(2);
      const id = (await create({ title: 'three' })).body.data.item.id;
      expect(await total()).to.equal(3);
      await t.http.delete(url(id)).set(as(tenant, 'editor')).expect(200);
      expect(await total()).to.equal(2);
      // A filtered total, asked twice (the second may be the remembered one, on PostgreSQL by the snapshot).
      const filtered = async () => (await t.http.get('/api/v1/data/rec/doc').query({ 'filter[title]': 'elsewhere' }).set(as(tenant, 'viewer'))).body.data.pagination.total;
      expect(await filtered()).to.equal(0);
      expect(await filtered()).to.equal(0);
      // A row written by another connection, as another service process on the same database would:
      // the record and its +1 on the tenant's counter, in one transaction.
      const { tableName, id: schemaId } = await t.app.kernel.schemas.resolve(systemContext(tenant), 'rec', 'doc');
      const now = new Date().toISOString();
      const values = [tenant, '0190a0a0-0000-7000-8000-00000000abcd', JSON.stringify({ title: 'elsewhere' }), 1, now, now];
      const insert = `INSERT INTO ${tableName} (tenant_id, id, data, version, created_at, updated_at)`;
      const counter = [tenant, schemaId, '0190a0a0-0000-7000-8000-00000000abce', 1];
      const count = 'INSERT INTO record_counts (tenant_id, schema_id, id, n)';
      if (t.engine === 'sqlite') {
        const other = new Database(t.database.url.slice('sqlite:'.length));
        other.transaction(() => {
          other.prepare(`${insert} VALUES (?, ?, ?, ?, ?, ?)`).run(...values);
          other.prepare(`${count} VALUES (?, ?, ?, ?)`).run(...counter);
        })();
        other.close();
      } else {
        const other = new pg.Client({ connectionString: t.database.url });
        await other.connect();
        await other.query('BEGIN');
        await other.query(`${insert} VALUES ($1, $2, $3, $4, $5, $6)`, values);
        await other.query(`${count} VALUES ($1, $2, $3, $4)`, counter);
        await other.query('COMMIT');
        await other.end();
      }
      expect(await total()).to.equal(3);
      expect(await filtered()).to.equal(1);
    });
  });

  describe('tenant isolation by id', () => {
    it('answers 404 to another tenant for GET, PATCH and DELETE of a record id, and leaves the record alone', async () => {
      const created = (await create({ title: 'private' })).body.data.item;
      const other = await createTenant(t, 'rec-spy');
      await t.http.post('/api/v1/metadata/schemas').set(as(other, 'admin')).send(docSchema).expect(201);
      const spy = as(other, 'admin');
      expect((await t.http.get(url(created.id)).set(spy)).status).to.equal(404);
      expect((await t.http.patch(url(created.id)).set(spy).send({ title: 'mine now' })).status).to.equal(404);
      expect((await t.http.delete(url(created.id)).set(spy)).status).to.equal(404);
      expect((await t.http.get('/api/v1/data/rec/doc').query({ 'filter[id]': created.id }).set(spy)).body.data.items).to.deep.equal([]);
      const still = await t.http.get(url(created.id)).set(as(tenant, 'viewer'));
      expect(still.body.data.item).to.deep.equal(created);
    });
  });

  describe('events and filter hooks', () => {
    it('raises rec.doc.created, updated and deleted after commit, in the outbox and in process', async () => {
      const created = (await create({ title: 'evented' })).body.data.item;
      const patched = (await t.http.patch(url(created.id)).set(as(tenant, 'editor')).send({ title: 'changed' })).body.data.item;
      await t.http.delete(url(created.id)).set(as(tenant, 'editor')).expect(200);
      const names = (await outbox()).map((r) => r.name);
      expect(names).to.deep.equal(['rec.doc.created', 'rec.doc.updated', 'rec.doc.deleted']);
      const seen = await eventually(() => eventsOf(tenant), (e) => e.length >= 3);
      expect(seen.map((e) => e.name)).to.deep.equal(names);
      expect(seen[0].payload).to.deep.equal({ namespace: 'rec', schema: 'doc', id: created.id, record: created, previous: null });
      expect(seen[1].payload.record).to.deep.equal(patched);
      expect(seen[1].payload.previous).to.deep.equal(created);
      expect((seen[2].payload as { id: string }).id).to.equal(created.id);
    });

    it('lets a filter hook change the document inside the transaction', async () => {
      const res = await create({ title: 'shout' });
      expect(res.body.data.item.title).to.equal('SHOUT');
      expect((await t.http.get(url(res.body.data.item.id)).set(as(tenant, 'viewer'))).body.data.item.title).to.equal('SHOUT');
    });

    it('rolls everything back when a filter hook vetoes: no record, no outbox row, no event', async () => {
      const res = await create({ title: 'veto' });
      expect(res.status).to.equal(400);
      expect(res.body.data.errors).to.deep.equal([{ path: '/title', message: 'is vetoed' }]);
      const list = await t.http.get('/api/v1/data/rec/doc').set(as(tenant, 'viewer'));
      expect(list.body.data.items).to.deep.equal([]);
      expect(await outbox()).to.deep.equal([]);
      await new Promise((r) => setTimeout(r, 100));
      expect(eventsOf(tenant)).to.deep.equal([]);
    });

    it('keeps the stored version when an update or delete hook vetoes', async () => {
      const created = (await create({ title: 'keep', locked: true })).body.data.item;
      expect((await t.http.patch(url(created.id)).set(as(tenant, 'editor')).send({ title: 'veto' })).status).to.equal(400);
      expect((await t.http.delete(url(created.id)).set(as(tenant, 'editor'))).status).to.equal(400);
      expect((await t.http.get(url(created.id)).set(as(tenant, 'viewer'))).body.data.item).to.deep.equal(created);
      expect((await outbox()).map((r) => r.name)).to.deep.equal(['rec.doc.created']);
    });
  });
});
