import { expect } from 'chai';
import { newId } from '../../core/base/ids.js';
import { systemContext } from '../../core/base/request-context.js';
import { MIGRATE_BATCH } from '../../core/metadata/schema-migration.js';
import { createTenant, sharedTestApp, startTestApp, type TestApp } from '../helpers/test-app.js';
import { listEvery, storeRecords } from '../helpers/stored-records.js';
import { as } from '../helpers/tokens.js';

const v1 = {
  namespace: 'evo',
  name: 'product',
  schema: {
    type: 'object',
    additionalProperties: false,
    required: ['title'],
    properties: { title: { type: 'string', maxLength: 50 }, code: { type: 'string' }, qty: { type: 'integer' } },
  },
};

/** v1 with extra properties and changes to the definition. */
function changed(properties: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return { ...v1, schema: { ...v1.schema, properties: { ...v1.schema.properties, ...properties }, ...extra } };
}

describe('PUT /api/v1/metadata/schemas/:ns/:name (schema evolution)', () => {
  let t: TestApp;

  before(async () => {
    t = await sharedTestApp();
  });

  async function tenantWith(records: object[] = []): Promise<{ tenant: string; ids: string[] }> {
    const tenant = await createTenant(t, 'evo');
    await t.http.post('/api/v1/metadata/schemas').set(as(tenant, 'admin')).send(v1).expect(201);
    const ids: string[] = [];
    for (const r of records) ids.push((await t.http.post('/api/v1/data/evo/product').set(as(tenant, 'editor')).send(r).expect(201)).body.data.item.id);
    return { tenant, ids };
  }
  const put = (tenant: string, body: object, version: string | null = '"1"', role: 'admin' | 'editor' = 'admin') => {
    const req = t.http.put('/api/v1/metadata/schemas/evo/product').set(as(tenant, role));
    if (version !== null) req.set('If-Match', version);
    return req.send(body);
  };
  const fail = (res: { status: number; body: any }, status: number, code: string) => {
    expect(res.status, JSON.stringify(res.body)).to.equal(status);
    expect(res.body.data.code).to.equal(code);
    return res.body.data;
  };

  it('answers 428 precondition_required without If-Match, 412 version_mismatch when stale, 403 to an editor', async () => {
    const { tenant } = await tenantWith();
    fail(await put(tenant, changed({ color: { type: 'string' } }), null), 428, 'precondition_required');
    fail(await put(tenant, changed({ color: { type: 'string' } }), '"7"'), 412, 'version_mismatch');
    expect((await put(tenant, changed({ color: { type: 'string' } }), '"1"', 'editor')).status).to.equal(403);
    fail(await put(tenant, { ...changed({}), name: 'other' }), 400, 'validation_failed');
  });

  it('applies a compatible change at once: the new field is writable, the OpenAPI document and the versions show it', async () => {
    const { tenant } = await tenantWith([{ title: 'Old' }]);
    const res = await put(tenant, changed({ color: { type: 'string' }, title: { type: 'string', maxLength: 80 } }));
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.data.item.version).to.equal(2);
    expect(res.headers.etag).to.equal('"2"');
    await t.http.post('/api/v1/data/evo/product').set(as(tenant, 'editor')).send({ title: 'New', color: 'red' }).expect(201);
    const doc = (await t.http.get('/api/v1/openapi.json').set(as(tenant, 'viewer'))).body;
    const components = JSON.stringify(doc.components.schemas);
    expect(components).to.include('"color"');
    const versions = await t.http.get('/api/v1/metadata/schemas/evo/product/versions').set(as(tenant, 'viewer')).expect(200);
    expect(versions.body.data.items.map((v: any) => v.version)).to.deep.equal([1, 2]);
    expect(versions.body.data.items[1].schema.properties).to.have.property('color');
    // The next change needs the new version.
    fail(await put(tenant, changed({ size: { type: 'integer' } }), '"1"'), 412, 'version_mismatch');
  });

  it('refuses an incompatible change naming the offending records, changes nothing, then accepts it with migrate', async () => {
    const { tenant, ids } = await tenantWith([{ title: 'A' }, { title: 'B', code: 'b' }, { title: 'C' }]);
    const required = changed({ code: { type: 'string', minLength: 1 } }, { required: ['title', 'code'] });
    const refused = fail(await put(tenant, required), 409, 'schema_incompatible');
    expect(refused.errors.map((e: any) => e.id).sort()).to.deep.equal([ids[0], ids[2]].sort());
    expect(refused.errors[0]).to.include({ path: '/code', message: 'is required' });
    expect((await t.http.get('/api/v1/metadata/schemas/evo/product').set(as(tenant, 'viewer'))).body.data.item.version).to.equal(1);
    // Still version 1: a record without code is accepted.
    await t.http.post('/api/v1/data/evo/product').set(as(tenant, 'editor')).send({ title: 'D' }).expect(201);

    const accepted = await put(tenant, { ...required, migrate: { set: { code: 'none' }, unset: ['qty'] } });
    expect(accepted.status, JSON.stringify(accepted.body)).to.equal(200);
    const items = (await t.http.get('/api/v1/data/evo/product').set(as(tenant, 'viewer'))).body.data.items;
    expect(items).to.have.length(4);
    for (const item of items) expect(item.code).to.equal('none');
    const first = (await t.http.get(`/api/v1/data/evo/product/${ids[0]}`).set(as(tenant, 'viewer'))).body.data.item;
    expect(first.version).to.equal(2);
    fail(await t.http.post('/api/v1/data/evo/product').set(as(tenant, 'editor')).send({ title: 'E' }), 400, 'validation_failed');
  });

  it('validates writes racing a migration against the version current when they commit', async function () {
    this.timeout(60_000);
    const { tenant } = await tenantWith();
    const kernel = t.app.kernel;
    const rc = systemContext(tenant);
    const schema = await kernel.schemas.resolve(rc, 'evo', 'product');
    const at = new Date().toISOString();
    const stored = Array.from({ length: 5000 }, (_, i) => ({ id: newId(), title: `s${i}`, createdAt: at, updatedAt: at, version: 1 }));
    await kernel.db.transaction(rc, (trx) => kernel.records.repository.bulkInsert(trx, schema, stored));
    const required = changed({ code: { type: 'string' } }, { required: ['title', 'code'] });
    const migration = put(tenant, { ...required, migrate: { set: { code: 'migrated' } } }).then((r) => r);
    const writes = await Promise.all(Array.from({ length: 50 }, (_, i) => new Promise((r) => setTimeout(r, i * 2))
      .then(() => t.http.post('/api/v1/data/evo/product').set(as(tenant, 'editor')).send({ title: `w${i}` }))));
    const done = await migration;
    expect(done.status, JSON.stringify(done.body)).to.equal(200);
    for (const w of writes) expect([201, 400], JSON.stringify(w.body)).to.include(w.status);
    // Whatever committed before the switch was migrated; whatever came after was refused: every record has a code.
    const ok = writes.filter((w) => w.status === 201).length;
    let cursor: string | null = null;
    let seen = 0;
    do {
      const page: any = (await t.http.get('/api/v1/data/evo/product').query({ limit: 200, count: 'false', ...(cursor ? { cursor } : {}) }).set(as(tenant, 'viewer'))).body.data;
      for (const item of page.items) expect(item.code, JSON.stringify(item)).to.be.a('string');
      seen += page.items.length;
      cursor = page.pagination.nextCursor;
    } while (cursor);
    expect(seen).to.equal(5000 + ok);
  });

  it('refuses a new unique set over duplicates naming them, accepts it once they are gone, then enforces it', async () => {
    const { tenant, ids } = await tenantWith([{ title: 'A', code: 'x' }, { title: 'B', code: 'x' }, { title: 'C', code: 'y' }, { title: 'D' }, { title: 'E' }]);
    const unique = { ...v1, unique: [['code']] };
    const refused = fail(await put(tenant, unique), 409, 'schema_incompatible');
    expect(refused.errors.map((e: any) => e.id).sort()).to.deep.equal([ids[0], ids[1]].sort());
    await t.http.delete(`/api/v1/data/evo/product/${ids[1]}`).set(as(tenant, 'editor')).expect(200);
    const accepted = await put(tenant, unique);
    expect(accepted.status, JSON.stringify(accepted.body)).to.equal(200);
    expect(accepted.body.data.item.unique).to.deep.equal([['code']]);
    fail(await t.http.post('/api/v1/data/evo/product').set(as(tenant, 'editor')).send({ title: 'F', code: 'y' }), 409, 'conflict');
    // Dropping the unique set lets duplicates in again.
    await put(tenant, { ...v1, unique: [] }, '"2"');
    await t.http.post('/api/v1/data/evo/product').set(as(tenant, 'editor')).send({ title: 'F', code: 'y' }).expect(201);
  });

  it('adds and removes indexes as part of a version', async () => {
    const { tenant } = await tenantWith([{ title: 'A', qty: 1 }, { title: 'B', qty: 2 }]);
    const res = await put(tenant, { ...v1, indexes: [['qty']] });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const list = await t.http.get('/api/v1/data/evo/product').query({ 'filter[qty]': 2 }).set(as(tenant, 'viewer')).expect(200);
    expect(list.body.data.items.map((i: any) => i.title)).to.deep.equal(['B']);
    expect((await put(tenant, { ...v1, indexes: [] }, '"2"')).status).to.equal(200);
  });

  it('is seen at once by another instance of the service on the same database', async () => {
    const { tenant } = await tenantWith();
    const other = await startTestApp({ database: t.database, env: { MIGRATE_ON_START: 'false' } });
    try {
      // The other instance has the schema in its cache.
      await other.http.post('/api/v1/data/evo/product').set(as(tenant, 'editor')).send({ title: 'cached' }).expect(201);
      await put(tenant, changed({ color: { type: 'string' } }));
      const deadline = Date.now() + 2000;
      let status = 0;
      while (Date.now() < deadline) {
        status = (await other.http.post('/api/v1/data/evo/product').set(as(tenant, 'editor')).send({ title: 'new', color: 'red' })).status;
        if (status === 201) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(status).to.equal(201);
    } finally {
      await other.close();
    }
  });
});

describe('DELETE /api/v1/metadata/schemas/:ns/:name', () => {
  let t: TestApp;

  before(async () => {
    t = await sharedTestApp();
  });

  it('answers 428 without If-Match, 412 when stale, then deletes the schema and its records with one event', async () => {
    const tenant = await createTenant(t, 'evd');
    await t.http.post('/api/v1/metadata/schemas').set(as(tenant, 'admin')).send(v1).expect(201);
    for (let i = 0; i < 3; i++) await t.http.post('/api/v1/data/evo/product').set(as(tenant, 'editor')).send({ title: `r${i}` }).expect(201);
    const del = () => t.http.delete('/api/v1/metadata/schemas/evo/product').set(as(tenant, 'admin'));
    expect((await del()).body.data.code).to.equal('precondition_required');
    expect((await del().set('If-Match', '"2"')).status).to.equal(412);
    const res = await del().set('If-Match', '"1"');
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.data).to.equal(null);
    expect((await t.http.get('/api/v1/metadata/schemas/evo/product').set(as(tenant, 'viewer'))).status).to.equal(404);
    expect((await t.http.get('/api/v1/data/evo/product').set(as(tenant, 'viewer'))).body.data.code).to.equal('schema_not_found');
    const events = await t.app.kernel.db.knex('outbox_events').where({ tenant_id: tenant }).whereLike('name', 'metadata.%').select('name', 'payload');
    expect(events).to.have.length(1);
    const payload = typeof events[0].payload === 'string' ? JSON.parse(events[0].payload) : events[0].payload;
    expect(events[0].name).to.equal('metadata.schema.deleted');
    expect(payload).to.deep.equal({ namespace: 'evo', name: 'product', version: 1, records: 3 });
    // The name is free again.
    await t.http.post('/api/v1/metadata/schemas').set(as(tenant, 'admin')).send(v1).expect(201);
    expect((await t.http.get('/api/v1/data/evo/product').set(as(tenant, 'viewer'))).body.data.pagination.total).to.equal(0);
  });
});

describe('PUT /api/v1/metadata/schemas/:ns/:name with migrate: batches and the way back (#16)', function () {
  this.timeout(180_000);
  let t: TestApp;
  /** More records than one batch of the migration (MIGRATE_BATCH). */
  const STORED = MIGRATE_BATCH * 2 + 1500;

  before(async () => {
    t = await sharedTestApp();
  });

  /** A tenant with v1 of evo.product holding `count` records. */
  async function seeded(app: TestApp, count: number): Promise<string> {
    const tenant = await createTenant(app, 'mig');
    await app.http.post('/api/v1/metadata/schemas').set(as(tenant, 'admin')).send(v1).expect(201);
    await storeRecords(app, tenant, 'evo', 'product', count);
    return tenant;
  }
  const everyRecord = (app: TestApp, tenant: string) => listEvery(app.http, tenant, 'evo', 'product');
  const put = (app: TestApp, tenant: string, body: object, version = '"1"') =>
    app.http.put('/api/v1/metadata/schemas/evo/product').set(as(tenant, 'admin')).set('If-Match', version).send(body);
  const withCode = changed({ code: { type: 'string', minLength: 1 } }, { required: ['title', 'code'] });
  const versionOf = async (app: TestApp, tenant: string) =>
    (await app.http.get('/api/v1/metadata/schemas/evo/product').set(as(tenant, 'viewer')).expect(200)).body.data.item.version;

  it('migrates more records than one batch, each once with version + 1, while writes to another schema go on', async () => {
    const tenant = await seeded(t, STORED);
    await t.http.post('/api/v1/metadata/schemas').set(as(tenant, 'admin')).send({ ...v1, name: 'other' }).expect(201);
    let done = false;
    const migration = put(t, tenant, { ...withCode, migrate: { set: { code: 'migrated' }, unset: ['qty'] } }).then((r) => { done = true; return r; });
    const others: number[] = [];
    while (!done) others.push((await t.http.post('/api/v1/data/evo/other').set(as(tenant, 'editor')).send({ title: `o${others.length}` })).status);
    const res = await migration;
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.data.item.version).to.equal(2);
    expect(others.filter((s) => s !== 201), 'writes to another schema').to.deep.equal([]);

    const records = await everyRecord(t, tenant);
    expect(records.size).to.equal(STORED);
    for (const r of records.values()) {
      expect(r, JSON.stringify(r)).to.include({ code: 'migrated', version: 2 });
      expect(r).not.to.have.property('qty');
    }
    // Nothing is left of the migration: a second one runs as the first did.
    const again = await put(t, tenant, { ...withCode, migrate: { set: { code: 'again' } } }, '"2"');
    expect(again.status, JSON.stringify(again.body)).to.equal(200);
    const sample = (await t.http.get('/api/v1/data/evo/product').query({ limit: 5 }).set(as(tenant, 'viewer')).expect(200)).body.data.items;
    for (const r of sample) expect(r).to.include({ code: 'again', version: 3 });
  });

  it('refuses the change when a new unique set fails after the batches ran, and every record is exactly as before', async () => {
    const tenant = await seeded(t, STORED);
    const before = await everyRecord(t, tenant);
    // Every record gets the same code: the new unique set is violated once all batches have run.
    const res = await put(t, tenant, { ...withCode, unique: [['code']], migrate: { set: { code: 'same' }, unset: ['qty'] } });
    expect(res.status, JSON.stringify(res.body)).to.equal(409);
    expect(res.body.data.code).to.equal('schema_incompatible');
    expect(res.body.data.errors.length).to.be.within(1, 20);
    expect(before.has(res.body.data.errors[0].id)).to.equal(true);

    expect(await versionOf(t, tenant)).to.equal(1);
    const after = await everyRecord(t, tenant);
    expect(after.size).to.equal(STORED);
    for (const [id, record] of before) expect(after.get(id), id).to.deep.equal(record);
    // The same change without the unique set goes through.
    const ok = await put(t, tenant, { ...withCode, migrate: { set: { code: 'x' } } });
    expect(ok.status, JSON.stringify(ok.body)).to.equal(200);
  });

  it('a write during a migration answers 200 or 503 unavailable after SCHEMA_WRITE_WAIT_MS, and no record is left in between', async () => {
    const app = await startTestApp({ env: { SCHEMA_WRITE_WAIT_MS: '200' } });
    try {
      const tenant = await seeded(app, STORED);
      const ids = [...(await everyRecord(app, tenant)).keys()].slice(0, 60);
      let done = false;
      const migration = put(app, tenant, { ...withCode, migrate: { set: { code: 'migrated' } } }).then((r) => { done = true; return r; });
      const answers: Array<{ id: string; status: number; retryAfter?: string; title: string }> = [];
      for (let i = 0; !done && i < ids.length; i++) {
        const title = `patched ${i}`;
        const res = await app.http.patch(`/api/v1/data/evo/product/${ids[i]}`).set(as(tenant, 'editor')).send({ title });
        answers.push({ id: ids[i], status: res.status, retryAfter: res.headers['retry-after'], title });
      }
      expect((await migration).status).to.equal(200);
      expect(answers.length).to.be.greaterThan(0);
      for (const a of answers) {
        expect([200, 503], JSON.stringify(a)).to.include(a.status);
        if (a.status === 503) expect(a.retryAfter).to.equal('5');
      }
      const records = await everyRecord(app, tenant);
      expect(records.size).to.equal(STORED);
      for (const r of records.values()) expect(r.code, JSON.stringify(r)).to.equal('migrated');
      for (const a of answers.filter((x) => x.status === 200)) expect(records.get(a.id).title).to.equal(a.title);
      for (const a of answers.filter((x) => x.status === 503)) expect(records.get(a.id).title).not.to.equal(a.title);
    } finally {
      await app.close();
    }
  });
});
