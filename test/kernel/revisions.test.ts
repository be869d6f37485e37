import { expect } from 'chai';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { RevisionRetention } from '../../core/data/revision-retention.js';
import { mcpClient } from '../helpers/mcp-client.js';
import { createTenant, sharedTestApp, type TestApp } from '../helpers/test-app.js';
import { as } from '../helpers/tokens.js';

type Json = Record<string, any>;

const noteSchema = {
  namespace: 'rv',
  name: 'note',
  schema: {
    type: 'object', additionalProperties: false, required: ['title'],
    properties: { title: { type: 'string', minLength: 1 }, sku: { type: 'string' }, extra: { type: 'string' } },
  },
  unique: [['sku']],
};
const ownerSchema = { namespace: 'rv', name: 'owner', schema: { type: 'object', properties: { name: { type: 'string' } } } };
const petSchema = {
  namespace: 'rv', name: 'pet',
  schema: { type: 'object', properties: { name: { type: 'string' }, owner: { type: 'string', 'x-ref': 'rv.owner', 'x-on-delete': 'cascade' } } },
};

/**
 * Revisions (CONTRACT.md 16.3): every write of a record, through any path, keeps a revision in its transaction;
 * GET .../revisions lists them, POST .../revisions/{version}/restore writes one back through the one write path.
 */
describe('revisions: GET /api/v1/data/:ns/:schema/:id/revisions and restore', () => {
  let t: TestApp;
  let tenant: string;
  const NOTES = '/api/v1/data/rv/note';
  const editor = () => as(tenant, 'editor', { sub: 'ed-1', email: 'ed@example.com' });
  const revisionsOf = async (path: string, id: string, query = ''): Promise<Json> => {
    const res = await t.http.get(`${path}/${id}/revisions${query}`).set(as(tenant, 'viewer'));
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body.data;
  };
  const actions = async (path: string, id: string) => (await revisionsOf(path, id)).items.map((r: Json) => `${r.version}:${r.action}`);
  const create = async (body: Json): Promise<Json> => {
    const res = await t.http.post(NOTES).set(editor()).send(body);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body.data.item;
  };

  before(async () => {
    t = await sharedTestApp();
  });

  beforeEach(async () => {
    tenant = await createTenant(t, 'rv');
    for (const schema of [noteSchema, ownerSchema, petSchema]) {
      const res = await t.http.post('/api/v1/metadata/schemas').set(as(tenant, 'admin')).send(schema);
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
    }
  });

  it('keeps a revision of a create, an update and a delete through /data, newest first, with the actor and the data', async () => {
    const note = await create({ title: 'First' });
    const patched = await t.http.patch(`${NOTES}/${note.id}`).set(editor()).send({ title: 'Second' });
    expect(patched.status).to.equal(200);
    await t.http.delete(`${NOTES}/${note.id}`).set(editor()).expect(200);

    const page = await revisionsOf(NOTES, note.id);
    expect(page.items.map((r: Json) => [r.version, r.action])).to.deep.equal([[3, 'delete'], [2, 'update'], [1, 'create']]);
    expect(page.pagination).to.include({ total: 3, hasMore: false, nextCursor: null, limit: 50, offset: 0 });
    const [deleted, updated, created] = page.items;
    expect(created.data).to.deep.equal(note);
    expect(updated.data).to.deep.equal(patched.body.data.item);
    expect(deleted.data).to.deep.include({ id: note.id, title: 'Second', version: 3 });
    for (const r of page.items) {
      expect(r.actor).to.deep.equal({ type: 'user', id: 'ed-1', email: 'ed@example.com' });
      expect(Date.parse(r.at)).to.be.closeTo(Date.now(), 60_000);
    }
  });

  it('pages revisions with limit and a cursor, and count=false leaves the total null', async () => {
    const note = await create({ title: 'v1' });
    for (const title of ['v2', 'v3', 'v4']) await t.http.patch(`${NOTES}/${note.id}`).set(editor()).send({ title }).expect(200);
    const first = await revisionsOf(NOTES, note.id, '?limit=3');
    expect(first.items.map((r: Json) => r.version)).to.deep.equal([4, 3, 2]);
    expect(first.pagination).to.include({ hasMore: true, total: 4 });
    const second = await revisionsOf(NOTES, note.id, `?limit=3&count=false&cursor=${first.pagination.nextCursor}`);
    expect(second.items.map((r: Json) => r.version)).to.deep.equal([1]);
    expect(second.pagination).to.include({ hasMore: false, total: null, nextCursor: null });
    const offset = await revisionsOf(NOTES, note.id, '?limit=2&offset=2');
    expect(offset.items.map((r: Json) => r.version)).to.deep.equal([2, 1]);
  });

  it('keeps revisions of bulk creates and upserts and of imported lines', async () => {
    const bulk = await t.http.post(`${NOTES}/bulk`).set(editor()).send({ items: [{ title: 'A', sku: 'a' }, { title: 'B', sku: 'b' }] });
    expect(bulk.status, JSON.stringify(bulk.body)).to.equal(201);
    const [a, b] = bulk.body.data.items;
    const upsert = await t.http.post(`${NOTES}/bulk?upsert=sku`).set(editor()).send({ items: [{ sku: 'a', title: 'A2' }, { sku: 'c', title: 'C' }] });
    expect(upsert.status, JSON.stringify(upsert.body)).to.equal(200);
    expect(await actions(NOTES, a.id)).to.deep.equal(['2:update', '1:create']);
    expect(await actions(NOTES, b.id)).to.deep.equal(['1:create']);
    expect((await revisionsOf(NOTES, a.id)).items[0].data).to.deep.include({ title: 'A2', version: 2 });
    const c = upsert.body.data.items.find((i: Json) => i.sku === 'c');
    expect(await actions(NOTES, c.id)).to.deep.equal(['1:create']);

    const imported = await t.http.post(`${NOTES}/import?upsert=sku`).set(editor()).set('Content-Type', 'application/x-ndjson')
      .send(`${JSON.stringify({ title: 'B2', sku: 'b' })}\n${JSON.stringify({ title: 'D', sku: 'd' })}\n`);
    expect(imported.status, JSON.stringify(imported.body)).to.equal(200);
    expect(imported.body.data).to.include({ created: 1, updated: 1, failed: 0 });
    expect(await actions(NOTES, b.id)).to.deep.equal(['2:update', '1:create']);
    const d = (await t.http.get(`${NOTES}?filter[sku]=d`).set(as(tenant, 'viewer')).expect(200)).body.data.items[0];
    const revisions = await revisionsOf(NOTES, d.id);
    expect(revisions.items.map((r: Json) => r.action)).to.deep.equal(['create']);
    expect(revisions.items[0].actor).to.deep.equal({ type: 'user', id: 'ed-1', email: 'ed@example.com' });
  });

  it('keeps revisions of a pack endpoint\'s writes (POST /crm/deals) and of the MCP tool create_record', async () => {
    const deal = await t.http.post('/api/v1/crm/deals').set(editor()).send({ title: 'Via the pack' });
    expect(deal.status, JSON.stringify(deal.body)).to.equal(201);
    const dealRevisions = await revisionsOf('/api/v1/data/crm/deal', deal.body.data.id);
    expect(dealRevisions.items).to.have.length(1);
    expect(dealRevisions.items[0]).to.deep.include({ version: 1, action: 'create', actor: { type: 'user', id: 'ed-1', email: 'ed@example.com' } });
    expect(dealRevisions.items[0].data).to.deep.equal(deal.body.data);

    let client: Client | null = null;
    try {
      client = await mcpClient(t, '/api/v1/mcp', editor());
      const result = await client.callTool({ name: 'create_record', arguments: { namespace: 'rv', schema: 'note', data: { title: 'By an agent' } } });
      expect(result.isError ?? false, JSON.stringify(result)).to.equal(false);
      const item = (result.structuredContent as { item: Json }).item;
      const revisions = await revisionsOf(NOTES, item.id);
      expect(revisions.items.map((r: Json) => r.action)).to.deep.equal(['create']);
      expect(revisions.items[0].data).to.deep.equal(item);
    } finally {
      await client?.close();
    }
  });

  it('keeps a delete revision of each record a cascade deletes', async () => {
    const owner = (await t.http.post('/api/v1/data/rv/owner').set(editor()).send({ name: 'Ana' }).expect(201)).body.data.item;
    const pet = (await t.http.post('/api/v1/data/rv/pet').set(editor()).send({ name: 'Rex', owner: owner.id }).expect(201)).body.data.item;
    await t.http.delete(`/api/v1/data/rv/owner/${owner.id}`).set(editor()).expect(200);
    await t.http.get(`/api/v1/data/rv/pet/${pet.id}`).set(as(tenant, 'viewer')).expect(404);
    expect(await actions('/api/v1/data/rv/pet', pet.id)).to.deep.equal(['2:delete', '1:create']);
    expect((await revisionsOf('/api/v1/data/rv/pet', pet.id)).items[0].data).to.deep.include({ name: 'Rex', owner: owner.id });
  });

  it('keeps a revision of each record a schema change\'s migrate rewrites, by the admin who changed the schema', async () => {
    const note = await create({ title: 'Before', extra: 'old' });
    const current = (await t.http.get('/api/v1/metadata/schemas/rv/note').set(as(tenant, 'admin')).expect(200)).body.data.item;
    const required = { ...noteSchema, schema: { ...noteSchema.schema, required: ['title', 'sku'] }, migrate: { set: { sku: 'none' }, unset: ['extra'] } };
    const put = await t.http.put('/api/v1/metadata/schemas/rv/note').set(as(tenant, 'admin', { sub: 'admin-1' })).set('If-Match', `"${current.version}"`).send(required);
    expect(put.status, JSON.stringify(put.body)).to.equal(200);
    const read = (await t.http.get(`${NOTES}/${note.id}`).set(as(tenant, 'viewer')).expect(200)).body.data.item;
    expect(read).to.include({ sku: 'none', version: 2 });
    const [migrated, created] = (await revisionsOf(NOTES, note.id)).items;
    expect(created).to.deep.include({ version: 1, action: 'create' });
    expect(migrated).to.deep.include({ version: 2, action: 'update', actor: { type: 'user', id: 'admin-1' } });
    expect(migrated.data).to.deep.equal(read);
    // Later writes go on from there.
    await t.http.patch(`${NOTES}/${note.id}`).set(editor()).send({ title: 'After' }).expect(200);
    expect(await actions(NOTES, note.id)).to.deep.equal(['3:update', '2:update', '1:create']);
  });

  it('restores an update as a new version (200): the revision\'s data replaces the record\'s, with its event and revision', async () => {
    const note = await create({ title: 'Original' });
    await t.http.patch(`${NOTES}/${note.id}`).set(editor()).send({ title: 'Changed', extra: 'added later' }).expect(200);
    const res = await t.http.post(`${NOTES}/${note.id}/revisions/1/restore`).set(editor());
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.headers.etag).to.equal('"3"');
    const item = res.body.data.item;
    expect(item).to.deep.include({ id: note.id, title: 'Original', version: 3, createdAt: note.createdAt });
    expect(item).to.not.have.property('extra');
    const read = await t.http.get(`${NOTES}/${note.id}`).set(as(tenant, 'viewer')).expect(200);
    expect(read.body.data.item).to.deep.equal(item);
    expect(await actions(NOTES, note.id)).to.deep.equal(['3:update', '2:update', '1:create']);
  });

  it('restores a deleted record under its id (201), continuing its versions', async () => {
    const note = await create({ title: 'Gone soon' });
    await t.http.delete(`${NOTES}/${note.id}`).set(editor()).expect(200);
    const res = await t.http.post(`${NOTES}/${note.id}/revisions/1/restore`).set(editor());
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    expect(res.body.data.item).to.deep.include({ id: note.id, title: 'Gone soon', version: 3 });
    const read = await t.http.get(`${NOTES}/${note.id}`).set(as(tenant, 'viewer')).expect(200);
    expect(read.body.data.item).to.deep.equal(res.body.data.item);
    expect(await actions(NOTES, note.id)).to.deep.equal(['3:create', '2:delete', '1:create']);
    // The record is live again: a second restore is an update.
    const again = await t.http.post(`${NOTES}/${note.id}/revisions/2/restore`).set(editor());
    expect(again.status, JSON.stringify(again.body)).to.equal(200);
    expect(again.body.data.item).to.deep.include({ title: 'Gone soon', version: 4 });
  });

  it('answers 400 naming the path when the revision no longer fits the current schema version, and writes nothing', async () => {
    const note = await create({ title: 'A long title' });
    await t.http.patch(`${NOTES}/${note.id}`).set(editor()).send({ title: 'Tiny' }).expect(200);
    const current = (await t.http.get('/api/v1/metadata/schemas/rv/note').set(as(tenant, 'admin')).expect(200)).body.data.item;
    const narrowed = { ...noteSchema, schema: { ...noteSchema.schema, properties: { ...noteSchema.schema.properties, title: { type: 'string', minLength: 1, maxLength: 5 } } } };
    const put = await t.http.put('/api/v1/metadata/schemas/rv/note').set(as(tenant, 'admin')).set('If-Match', `"${current.version}"`).send(narrowed);
    expect(put.status, JSON.stringify(put.body)).to.equal(200);
    const res = await t.http.post(`${NOTES}/${note.id}/revisions/1/restore`).set(editor());
    expect(res.status, JSON.stringify(res.body)).to.equal(400);
    expect(res.body.data.code).to.equal('validation_failed');
    expect(res.body.data.errors.map((e: Json) => e.path)).to.include('/title');
    const read = await t.http.get(`${NOTES}/${note.id}`).set(as(tenant, 'viewer')).expect(200);
    expect(read.body.data.item).to.include({ title: 'Tiny', version: 2 });
    expect(await actions(NOTES, note.id)).to.deep.equal(['2:update', '1:create']);
  });

  it('answers 403 forbidden to a restore of a sealed schema\'s record (crm.ticket), which its revisions still list', async () => {
    const opened = await t.http.post('/api/v1/crm/support-tickets').set(editor())
      .send({ type: 'complaint', subject: 'Late', description: 'It came late.', customerRef: 'cust-1' });
    expect(opened.status, JSON.stringify(opened.body)).to.equal(201);
    const id = opened.body.data.id;
    expect(await actions('/api/v1/data/crm/ticket', id)).to.deep.equal(['1:create']);
    const res = await t.http.post(`/api/v1/data/crm/ticket/${id}/revisions/1/restore`).set(as(tenant, 'admin'));
    expect(res.status, JSON.stringify(res.body)).to.equal(403);
    expect(res.body.data.code).to.equal('forbidden');
  });

  it('answers 404 for another tenant\'s revisions, an unknown record and an unknown version; a viewer may not restore', async () => {
    const note = await create({ title: 'Mine' });
    const other = await createTenant(t, 'rv-other');
    await t.http.post('/api/v1/metadata/schemas').set(as(other, 'admin')).send(noteSchema).expect(201);
    const foreign = await t.http.get(`${NOTES}/${note.id}/revisions`).set(as(other, 'admin'));
    expect(foreign.status).to.equal(404);
    expect(foreign.body.data.code).to.equal('not_found');
    expect((await t.http.post(`${NOTES}/${note.id}/revisions/1/restore`).set(as(other, 'admin'))).status).to.equal(404);
    expect((await t.http.get(`${NOTES}/0190a0a0-0000-7000-8000-000000000000/revisions`).set(as(tenant, 'viewer'))).status).to.equal(404);
    const unknown = await t.http.post(`${NOTES}/${note.id}/revisions/7/restore`).set(editor());
    expect(unknown.status).to.equal(404);
    expect(unknown.body.data.code).to.equal('not_found');
    expect((await t.http.post(`${NOTES}/${note.id}/revisions/abc/restore`).set(editor())).status).to.equal(404);
    expect((await t.http.post(`${NOTES}/${note.id}/revisions/1/restore`).set(as(tenant, 'viewer'))).status).to.equal(403);
  });

  it('retention deletes revisions older than REVISION_RETENTION_DAYS but keeps a live record\'s newest one', async () => {
    const live = await create({ title: 'Live' });
    await t.http.patch(`${NOTES}/${live.id}`).set(editor()).send({ title: 'Live 2' }).expect(200);
    await t.http.patch(`${NOTES}/${live.id}`).set(editor()).send({ title: 'Live 3' }).expect(200);
    const gone = await create({ title: 'Gone' });
    await t.http.delete(`${NOTES}/${gone.id}`).set(editor()).expect(200);
    const retention = t.app.kernel.background.get('revision-retention') as RevisionRetention;
    // Nothing is old yet.
    await retention.pruneOnce();
    expect(await actions(NOTES, live.id)).to.deep.equal(['3:update', '2:update', '1:create']);
    // A hundred days on (the default keeps 90).
    await retention.pruneOnce(new Date(Date.now() + 100 * 24 * 60 * 60 * 1000));
    expect(await actions(NOTES, live.id)).to.deep.equal(['3:update']);
    expect((await t.http.get(`${NOTES}/${gone.id}/revisions`).set(as(tenant, 'viewer'))).status).to.equal(404);
  });
});
