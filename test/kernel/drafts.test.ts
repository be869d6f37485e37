import { expect } from 'chai';
import type { ScheduledPublish } from '../../core/workflow/scheduled-publish.js';
import { SseClient } from '../helpers/sse-client.js';
import { createTenant, sharedTestApp, type TestApp } from '../helpers/test-app.js';
import { as } from '../helpers/tokens.js';
import { waitUntil } from '../helpers/wait.js';

type Json = Record<string, any>;

const articleSchema = {
  namespace: 'wf',
  name: 'article',
  workflow: { drafts: true },
  schema: {
    type: 'object', additionalProperties: false, required: ['title'],
    properties: { title: { type: 'string', minLength: 1 }, body: { type: 'string' }, rank: { type: 'integer', minimum: 0 } },
  },
};
const plainSchema = { namespace: 'wf', name: 'plain', schema: { type: 'object', properties: { title: { type: 'string' } } } };

/**
 * Drafts (CONTRACT.md 17.1): a draft beside the live record, saved, read, discarded and published through the
 * one write path, now or at a set time; draft-only records; lists with drafts for editors.
 */
describe('drafts: /data/{ns}/{schema}/{id}/draft (CONTRACT.md 17.1)', function () {
  this.timeout(30_000);
  let t: TestApp;
  let tenant: string;
  const ARTICLES = '/api/v1/data/wf/article';
  const editor = () => as(tenant, 'editor', { sub: 'ed-1', email: 'ed@example.com' });
  const create = async (body: Json): Promise<Json> => {
    const res = await t.http.post(ARTICLES).set(editor()).send(body);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body.data.item;
  };
  const saveDraft = async (id: string, patch: Json, query = ''): Promise<Json> => {
    const res = await t.http.put(`${ARTICLES}/${id}/draft${query}`).set(editor()).send(patch);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body.data;
  };
  const live = (id: string) => t.http.get(`${ARTICLES}/${id}`).set(as(tenant, 'viewer'));
  const outbox = () => t.app.kernel.db.knex('outbox_events').where({ tenant_id: tenant }).orderBy('occurred_at').select('name', 'payload');
  const eventNames = async () => (await outbox()).map((e: Json) => e.name);
  const revisions = async (id: string) => (await t.http.get(`${ARTICLES}/${id}/revisions`).set(as(tenant, 'viewer'))).body.data.items.map((r: Json) => `${r.version}:${r.action}`);

  before(async () => {
    t = await sharedTestApp();
  });

  beforeEach(async () => {
    tenant = await createTenant(t, 'wf');
    for (const schema of [articleSchema, plainSchema]) {
      const res = await t.http.post('/api/v1/metadata/schemas').set(as(tenant, 'admin')).send(schema);
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
    }
  });

  describe('the workflow registration key', () => {
    it('shows workflow on the schema item, null when not asked for, and a later change turns it on', async () => {
      const article = await t.http.get('/api/v1/metadata/schemas/wf/article').set(as(tenant, 'viewer')).expect(200);
      expect(article.body.data.item.workflow).to.deep.equal({ drafts: true });
      const plain = await t.http.get('/api/v1/metadata/schemas/wf/plain').set(as(tenant, 'viewer')).expect(200);
      expect(plain.body.data.item.workflow).to.equal(null);
      const id = (await t.http.post('/api/v1/data/wf/plain').set(editor()).send({ title: 'x' }).expect(201)).body.data.item.id;
      const refused = await t.http.put(`/api/v1/data/wf/plain/${id}/draft`).set(editor()).send({ title: 'y' });
      expect(refused.status).to.equal(404);
      expect(refused.body.data.code).to.equal('not_found');
      const changed = await t.http.put('/api/v1/metadata/schemas/wf/plain').set(as(tenant, 'admin')).set('If-Match', '"1"')
        .send({ schema: plainSchema.schema, workflow: { drafts: true } });
      expect(changed.status, JSON.stringify(changed.body)).to.equal(200);
      expect(changed.body.data.item.workflow).to.deep.equal({ drafts: true });
      await t.http.put(`/api/v1/data/wf/plain/${id}/draft`).set(editor()).send({ title: 'y' }).expect(200);
      // A change that does not name the key keeps it.
      const again = await t.http.put('/api/v1/metadata/schemas/wf/plain').set(as(tenant, 'admin')).set('If-Match', '"2"')
        .send({ schema: plainSchema.schema, title: 'Plain' });
      expect(again.body.data.item.workflow).to.deep.equal({ drafts: true });
    });

    it('answers 400 validation_failed for a workflow that is not one', async () => {
      for (const [workflow, path] of [[{ drafts: 'yes' }, '/workflow/drafts'], [{ publish: true }, '/workflow']] as const) {
        const res = await t.http.post('/api/v1/metadata/schemas').set(as(tenant, 'admin')).send({ ...plainSchema, name: 'bad', workflow });
        expect(res.status).to.equal(400);
        expect(res.body.data.code).to.equal('validation_failed');
        expect(res.body.data.errors.map((d: Json) => d.path).join(' ')).to.include(path);
      }
      const fields = await t.http.post('/api/v1/metadata/schemas').set(as(tenant, 'admin')).send({ ...plainSchema, name: 'bad', workflow: { drafts: true, fields: ['nope'] } });
      expect(fields.status).to.equal(400);
      expect(fields.body.data.errors[0].path).to.equal('/workflow/fields/0');
    });
  });

  describe('saving, reading and discarding', () => {
    it('saves a merge patch as a draft: the live record, its ETag, revisions and live events stay; draft_updated is emitted', async () => {
      const article = await create({ title: 'Live', body: 'old', rank: 1 });
      const before = await eventNames();
      const saved = await saveDraft(article.id, { title: 'Draft', rank: null });
      expect(saved.item).to.deep.include({ id: article.id, title: 'Draft', body: 'old', version: 1, createdAt: article.createdAt });
      expect(saved.item).to.not.have.property('rank');
      expect(saved.draft).to.deep.include({ baseVersion: 1, revision: 1, updatedBy: 'ed-1', scheduledAt: null, lastError: null, releaseId: null });

      const res = await live(article.id).expect(200);
      expect(res.body.data.item).to.deep.equal(article);
      expect(res.headers.etag).to.equal('"1"');
      expect(await revisions(article.id)).to.deep.equal(['1:create']);
      const events = (await outbox()).slice(before.length);
      expect(events.map((e: Json) => e.name)).to.deep.equal(['wf.article.draft_updated']);
      const payload = typeof events[0].payload === 'string' ? JSON.parse(events[0].payload) : events[0].payload;
      expect(payload).to.deep.include({ namespace: 'wf', schema: 'article', id: article.id });
      expect(payload.draft).to.deep.include({ baseVersion: 1, revision: 1 });

      // The next save patches the draft, not the live record; revision counts saves.
      const second = await saveDraft(article.id, { body: 'new' });
      expect(second.item).to.deep.include({ title: 'Draft', body: 'new' });
      expect(second.draft).to.deep.include({ baseVersion: 1, revision: 2 });
      const read = await t.http.get(`${ARTICLES}/${article.id}/draft`).set(as(tenant, 'viewer')).expect(200);
      expect(read.body.data).to.deep.equal(second);
    });

    it('validates the draft like a write (400 naming the path) and keeps the draft it had', async () => {
      const article = await create({ title: 'Live' });
      await saveDraft(article.id, { body: 'kept' });
      for (const [patch, path] of [[{ rank: -1 }, '/rank'], [{ title: null }, '/title'], [{ version: 3 }, '/version']] as const) {
        const res = await t.http.put(`${ARTICLES}/${article.id}/draft`).set(editor()).send(patch);
        expect(res.status, JSON.stringify(patch)).to.equal(400);
        expect(res.body.data.code).to.equal('validation_failed');
        expect(res.body.data.errors.map((d: Json) => d.path)).to.include(path);
      }
      const read = await t.http.get(`${ARTICLES}/${article.id}/draft`).set(as(tenant, 'viewer')).expect(200);
      expect(read.body.data.draft.revision).to.equal(1);
      expect(read.body.data.item.body).to.equal('kept');
    });

    it('answers 404 for a record without a draft, an unknown record, and a viewer may not save', async () => {
      const article = await create({ title: 'Live' });
      const none = await t.http.get(`${ARTICLES}/${article.id}/draft`).set(as(tenant, 'viewer'));
      expect(none.status).to.equal(404);
      expect(none.body.data.code).to.equal('not_found');
      expect((await t.http.put(`${ARTICLES}/0190aaaa-0000-7000-8000-000000000000/draft`).set(editor()).send({ title: 'x' })).status).to.equal(404);
      expect((await t.http.put(`${ARTICLES}/${article.id}/draft`).set(as(tenant, 'viewer')).send({ title: 'x' })).status).to.equal(403);
      expect((await t.http.delete(`${ARTICLES}/${article.id}/draft`).set(editor())).status).to.equal(404);
    });

    it('discards a draft with DELETE; the live record is as it was', async () => {
      const article = await create({ title: 'Live' });
      await saveDraft(article.id, { title: 'Gone soon' });
      await t.http.delete(`${ARTICLES}/${article.id}/draft`).set(editor()).expect(200);
      expect((await t.http.get(`${ARTICLES}/${article.id}/draft`).set(editor())).status).to.equal(404);
      expect((await live(article.id)).body.data.item.title).to.equal('Live');
    });

    it('discards the drafts of a schema deleted with its records; registered again, its records have none', async () => {
      const article = await create({ title: 'Live' });
      await saveDraft(article.id, { title: 'Draft' });
      await t.http.post(`${ARTICLES}?draft=true`).set(editor()).send({ title: 'Draft only' }).expect(201);
      await t.http.delete('/api/v1/metadata/schemas/wf/article').set(as(tenant, 'admin')).set('If-Match', '"1"').expect(200);
      await t.http.post('/api/v1/metadata/schemas').set(as(tenant, 'admin')).send(articleSchema).expect(201);
      expect((await t.http.get(`${ARTICLES}?drafts=only`).set(editor()).expect(200)).body.data.items).to.deep.equal([]);
      expect((await t.http.get(`${ARTICLES}/${article.id}/draft`).set(editor())).status).to.equal(404);
    });

    it('sends no live change for draft saves and draft-only records, and one for their publish', async () => {
      const article = await create({ title: 'Live' });
      const stream = await SseClient.open(`${t.baseUrl}/api/v1/changes?schemas=wf.article`, as(tenant, 'viewer'));
      try {
        await saveDraft(article.id, { title: 'Draft' });
        const fresh = (await t.http.post(`${ARTICLES}?draft=true`).set(editor()).send({ title: 'Draft only' }).expect(201)).body.data.item;
        await t.http.post(`${ARTICLES}/${article.id}/draft/publish`).set(editor()).expect(200);
        await t.http.post(`${ARTICLES}/${fresh.id}/draft/publish`).set(editor()).expect(200);
        await stream.waitForEvents(2);
        expect(stream.events.map((e) => [e.event, JSON.parse(e.data).payload.id])).to.deep.equal([['wf.article.updated', article.id], ['wf.article.created', fresh.id]]);
      } finally {
        stream.close();
      }
    });

    it('keeps another tenant out of the draft', async () => {
      const article = await create({ title: 'Live' });
      await saveDraft(article.id, { title: 'Secret draft' });
      const other = await createTenant(t, 'wf');
      await t.http.post('/api/v1/metadata/schemas').set(as(other, 'admin')).send(articleSchema).expect(201);
      expect((await t.http.get(`${ARTICLES}/${article.id}/draft`).set(as(other, 'admin'))).status).to.equal(404);
    });
  });

  describe('publishing now', () => {
    it('makes the draft the next live version through the one write path: revision, updated event, the draft gone', async () => {
      const article = await create({ title: 'Live', body: 'old' });
      await saveDraft(article.id, { title: 'Published', body: null });
      const before = await eventNames();
      const res = await t.http.post(`${ARTICLES}/${article.id}/draft/publish`).set(editor()).set('If-Match', '"1"');
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.headers.etag).to.equal('"2"');
      expect(res.body.data.item).to.deep.include({ id: article.id, title: 'Published', version: 2, createdAt: article.createdAt });
      expect(res.body.data.item).to.not.have.property('body');
      expect((await live(article.id)).body.data.item).to.deep.equal(res.body.data.item);
      expect(await revisions(article.id)).to.deep.equal(['2:update', '1:create']);
      expect((await eventNames()).slice(before.length)).to.deep.equal(['wf.article.updated']);
      expect((await t.http.get(`${ARTICLES}/${article.id}/draft`).set(editor())).status).to.equal(404);
      expect((await t.http.post(`${ARTICLES}/${article.id}/draft/publish`).set(editor())).status).to.equal(404);
    });

    it('answers 412 for a stale If-Match and 409 when the live record moved from the draft\'s baseVersion, until ?rebase=true', async () => {
      const article = await create({ title: 'Live', rank: 1 });
      await saveDraft(article.id, { title: 'Draft' });
      const stale = await t.http.post(`${ARTICLES}/${article.id}/draft/publish`).set(editor()).set('If-Match', '"7"');
      expect(stale.status).to.equal(412);
      expect(stale.body.data.code).to.equal('version_mismatch');

      await t.http.patch(`${ARTICLES}/${article.id}`).set(editor()).send({ rank: 2 }).expect(200);
      const moved = await t.http.post(`${ARTICLES}/${article.id}/draft/publish`).set(editor());
      expect(moved.status).to.equal(409);
      expect(moved.body.data.code).to.equal('conflict');
      // Nothing was published, the draft is still there.
      expect((await live(article.id)).body.data.item).to.deep.include({ title: 'Live', version: 2 });
      const kept = await saveDraft(article.id, {}, '?rebase=true');
      expect(kept.draft).to.deep.include({ baseVersion: 2, revision: 2 });
      const published = await t.http.post(`${ARTICLES}/${article.id}/draft/publish`).set(editor()).expect(200);
      expect(published.body.data.item).to.deep.include({ title: 'Draft', version: 3 });
    });

    it('answers 400 naming the path when the draft no longer fits the schema, and publishes nothing', async () => {
      const article = await create({ title: 'Live' });
      await saveDraft(article.id, { body: 'text' });
      const changed = await t.http.put('/api/v1/metadata/schemas/wf/article').set(as(tenant, 'admin')).set('If-Match', '"1"').send({
        schema: { ...articleSchema.schema, properties: { ...articleSchema.schema.properties, body: { type: 'string', maxLength: 2 } } },
      });
      expect(changed.status, JSON.stringify(changed.body)).to.equal(200);
      const res = await t.http.post(`${ARTICLES}/${article.id}/draft/publish`).set(editor());
      expect(res.status).to.equal(400);
      expect(res.body.data.errors.map((d: Json) => d.path)).to.include('/body');
      expect((await live(article.id)).body.data.item.version).to.equal(1);
      expect((await t.http.get(`${ARTICLES}/${article.id}/draft`).set(editor())).status).to.equal(200);
    });
  });

  describe('draft-only records (?draft=true)', () => {
    it('exists only as a draft until its first publish creates version 1 and emits created', async () => {
      const res = await t.http.post(`${ARTICLES}?draft=true`).set(editor()).send({ title: 'Fresh' });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      const { item, draft } = res.body.data;
      expect(item).to.include({ title: 'Fresh', version: 0 });
      expect(draft).to.include({ baseVersion: 0, revision: 1 });
      expect((await live(item.id)).status).to.equal(404);
      const plain = await t.http.get(ARTICLES).set(editor()).expect(200);
      expect(plain.body.data.items).to.deep.equal([]);
      const include = await t.http.get(`${ARTICLES}?drafts=include`).set(editor()).expect(200);
      expect(include.body.data.items).to.deep.equal([]);
      const only = await t.http.get(`${ARTICLES}?drafts=only`).set(editor()).expect(200);
      expect(only.body.data.items.map((i: Json) => [i.id, i.title, i.hasDraft])).to.deep.equal([[item.id, 'Fresh', true]]);
      expect(only.body.data.pagination.total).to.equal(1);

      const before = await eventNames();
      const published = await t.http.post(`${ARTICLES}/${item.id}/draft/publish`).set(editor()).expect(200);
      expect(published.body.data.item).to.include({ id: item.id, title: 'Fresh', version: 1 });
      expect((await eventNames()).slice(before.length)).to.deep.equal(['wf.article.created']);
      expect(await revisions(item.id)).to.deep.equal(['1:create']);
    });

    it('validates a draft-only record as a create', async () => {
      const res = await t.http.post(`${ARTICLES}?draft=true`).set(editor()).send({ rank: 1 });
      expect(res.status).to.equal(400);
      expect(res.body.data.code).to.equal('validation_failed');
    });
  });

  describe('lists with drafts', () => {
    it('include: live records with their drafts merged and hasDraft; only: the drafts; a viewer gets 403', async () => {
      const a = await create({ title: 'A live' });
      const b = await create({ title: 'B live' });
      await saveDraft(a.id, { title: 'A draft' });
      const include = await t.http.get(`${ARTICLES}?drafts=include&sort=title`).set(editor()).expect(200);
      expect(include.body.data.items.map((i: Json) => [i.id, i.title, i.hasDraft])).to.deep.equal([[a.id, 'A draft', true], [b.id, 'B live', false]]);
      const only = await t.http.get(`${ARTICLES}?drafts=only`).set(editor()).expect(200);
      expect(only.body.data.items.map((i: Json) => [i.id, i.title, i.version])).to.deep.equal([[a.id, 'A draft', 1]]);
      const plain = await t.http.get(`${ARTICLES}?sort=title`).set(as(tenant, 'viewer')).expect(200);
      expect(plain.body.data.items.map((i: Json) => i.title)).to.deep.equal(['A live', 'B live']);
      expect(plain.body.data.items[0]).to.not.have.property('hasDraft');
      for (const mode of ['include', 'only']) {
        const res = await t.http.get(`${ARTICLES}?drafts=${mode}`).set(as(tenant, 'viewer'));
        expect(res.status).to.equal(403);
        expect(res.body.data.code).to.equal('forbidden');
      }
      expect((await t.http.get(`${ARTICLES}?drafts=all`).set(editor())).status).to.equal(400);
    });
  });

  describe('scheduled publishing', () => {
    const scheduler = () => t.app.kernel.background.get('scheduled-publish') as ScheduledPublish;

    it('answers 400 at /at for a time not in the future, 404 without a draft', async () => {
      const article = await create({ title: 'Live' });
      expect((await t.http.post(`${ARTICLES}/${article.id}/draft/publish`).set(editor()).send({ at: new Date(Date.now() + 60_000).toISOString() })).status).to.equal(404);
      await saveDraft(article.id, { title: 'Later' });
      for (const at of [new Date(Date.now() - 1000).toISOString(), 'tomorrow']) {
        const res = await t.http.post(`${ARTICLES}/${article.id}/draft/publish`).set(editor()).send({ at });
        expect(res.status, at).to.equal(400);
        expect(res.body.data.errors[0].path).to.equal('/at');
      }
    });

    it('publishes a scheduled draft within 30 s after its time, once; DELETE …/draft/schedule unschedules', async () => {
      const article = await create({ title: 'Live' });
      const other = await create({ title: 'Other live' });
      await saveDraft(article.id, { title: 'At the time' });
      await saveDraft(other.id, { title: 'Not any more' });
      const at = new Date(Date.now() + 1500).toISOString();
      const scheduled = await t.http.post(`${ARTICLES}/${article.id}/draft/publish`).set(editor()).send({ at }).expect(200);
      expect(scheduled.body.data.draft.scheduledAt).to.equal(at);
      expect(scheduled.body.data.item.version).to.equal(1);
      await t.http.post(`${ARTICLES}/${other.id}/draft/publish`).set(editor()).send({ at }).expect(200);
      const unscheduled = await t.http.delete(`${ARTICLES}/${other.id}/draft/schedule`).set(editor()).expect(200);
      expect(unscheduled.body.data.draft.scheduledAt).to.equal(null);
      expect((await live(article.id)).body.data.item.version).to.equal(1);

      const published = await waitUntil('the scheduled publish', async () => {
        const res = await live(article.id);
        return res.body.data.item.version === 2 && res.body.data.item;
      }, 30_000);
      expect(published.title).to.equal('At the time');
      expect(Date.parse(published.updatedAt)).to.be.at.least(Date.parse(at));
      // Once: another pass finds nothing more to publish.
      await scheduler().runOnce(new Date(Date.now() + 60_000));
      expect(await revisions(article.id)).to.deep.equal(['2:update', '1:create']);
      expect((await live(other.id)).body.data.item).to.deep.include({ title: 'Other live', version: 1 });
    });

    it('a scheduled draft that no longer fits: unscheduled, lastError kept until its next save, nothing live changes', async () => {
      const article = await create({ title: 'Live' });
      await saveDraft(article.id, { body: 'too long' });
      await t.http.post(`${ARTICLES}/${article.id}/draft/publish`).set(editor()).send({ at: new Date(Date.now() + 60_000).toISOString() }).expect(200);
      await t.http.put('/api/v1/metadata/schemas/wf/article').set(as(tenant, 'admin')).set('If-Match', '"1"').send({
        schema: { ...articleSchema.schema, properties: { ...articleSchema.schema.properties, body: { type: 'string', maxLength: 2 } } },
      }).expect(200);
      await scheduler().runOnce(new Date(Date.now() + 61_000));
      const draft = (await t.http.get(`${ARTICLES}/${article.id}/draft`).set(editor()).expect(200)).body.data.draft;
      expect(draft.scheduledAt).to.equal(null);
      expect(draft.lastError).to.deep.include({ code: 'validation_failed' });
      expect(draft.lastError.details.map((d: Json) => d.path)).to.include('/body');
      expect((await live(article.id)).body.data.item.version).to.equal(1);
      const saved = await saveDraft(article.id, { body: 'ok' });
      expect(saved.draft.lastError).to.equal(null);
    });
  });
});
