import { expect } from 'chai';
import type { ScheduledPublish } from '../../core/workflow/scheduled-publish.js';
import { createTenant, sharedTestApp, type TestApp } from '../helpers/test-app.js';
import { as } from '../helpers/tokens.js';

type Json = Record<string, any>;

const articleSchema = {
  namespace: 'rl',
  name: 'article',
  workflow: { drafts: true },
  schema: {
    type: 'object', additionalProperties: false, required: ['title'],
    properties: { title: { type: 'string', minLength: 1 }, body: { type: 'string' } },
  },
};

/** Releases (CONTRACT.md 17.3): drafts bound together, published all or none, scheduled, rolled back. */
describe('releases: /releases (CONTRACT.md 17.3)', function () {
  this.timeout(30_000);
  let t: TestApp;
  let tenant: string;
  const ARTICLES = '/api/v1/data/rl/article';
  const editor = () => as(tenant, 'editor');
  const admin = () => as(tenant, 'admin');
  const article = async (title: string): Promise<Json> => (await t.http.post(ARTICLES).set(editor()).send({ title }).expect(201)).body.data.item;
  const draft = async (id: string, patch: Json) => (await t.http.put(`${ARTICLES}/${id}/draft`).set(editor()).send(patch).expect(200)).body.data;
  const live = async (id: string) => (await t.http.get(`${ARTICLES}/${id}`).set(editor())).body.data?.item ?? null;
  const release = async (name = 'Campaign'): Promise<Json> => (await t.http.post('/api/v1/releases').set(editor()).send({ name }).expect(201)).body.data;
  const bind = (releaseId: string, id: string) => t.http.post(`/api/v1/releases/${releaseId}/items`).set(editor()).send({ namespace: 'rl', schema: 'article', id });
  const outbox = async (name: string) => (await t.app.kernel.db.knex('outbox_events').where({ tenant_id: tenant, name }).select('payload'))
    .map((e: Json) => (typeof e.payload === 'string' ? JSON.parse(e.payload) : e.payload));
  const scheduler = () => t.app.kernel.background.get('scheduled-publish') as ScheduledPublish;

  /** Three articles with drafts, bound to one release. */
  const campaign = async () => {
    const items = [await article('One'), await article('Two'), await article('Three')];
    for (const [n, a] of items.entries()) await draft(a.id, { title: `${a.title} new`, body: `text ${n}` });
    const r = await release();
    for (const a of items) expect((await bind(r.id, a.id)).status).to.equal(200);
    return { r, items };
  };

  before(async () => {
    t = await sharedTestApp();
  });

  beforeEach(async () => {
    tenant = await createTenant(t, 'rl');
    await t.http.post('/api/v1/metadata/schemas').set(admin()).send(articleSchema).expect(201);
  });

  it('creates, reads and lists releases; a viewer reads but does not create', async () => {
    const r = await release('Summer');
    expect(r).to.deep.include({ name: 'Summer', description: '', status: 'open', items: [], scheduledAt: null, publishedAt: null, errors: [] });
    expect((await t.http.get(`/api/v1/releases/${r.id}`).set(as(tenant, 'viewer')).expect(200)).body.data).to.deep.equal(r);
    const list = (await t.http.get('/api/v1/releases').set(as(tenant, 'viewer')).expect(200)).body.data;
    expect(list.items.map((i: Json) => i.id)).to.deep.equal([r.id]);
    expect(list.pagination.total).to.equal(1);
    expect((await t.http.post('/api/v1/releases').set(as(tenant, 'viewer')).send({ name: 'x' })).status).to.equal(403);
    expect((await t.http.get(`/api/v1/releases/${r.id}`).set(as(await createTenant(t, 'rl'), 'admin'))).status).to.equal(404);
  });

  it('binds drafts: 400 without a draft, 409 for a draft of another release, and a bound draft is not published alone', async () => {
    const a = await article('A');
    const r = await release();
    const none = await bind(r.id, a.id);
    expect(none.status).to.equal(400);
    await draft(a.id, { title: 'A new' });
    const bound = await bind(r.id, a.id);
    expect(bound.status, JSON.stringify(bound.body)).to.equal(200);
    expect(bound.body.data.items).to.deep.equal([{ id: a.id, namespace: 'rl', schema: 'article', version: null }]);
    expect((await t.http.get(`${ARTICLES}/${a.id}/draft`).set(editor())).body.data.draft.releaseId).to.equal(r.id);
    const other = await release('Other');
    const taken = await bind(other.id, a.id);
    expect(taken.status).to.equal(409);
    expect(taken.body.error.code).to.equal('conflict');
    expect((await t.http.post(`${ARTICLES}/${a.id}/draft/publish`).set(editor())).status).to.equal(409);

    const unbound = await t.http.delete(`/api/v1/releases/${r.id}/items/${a.id}`).set(editor()).expect(200);
    expect(unbound.body.data.items).to.deep.equal([]);
    expect((await t.http.get(`${ARTICLES}/${a.id}/draft`).set(editor())).body.data.draft.releaseId).to.equal(null);
    expect((await bind(other.id, a.id)).status).to.equal(200);
  });

  it('publishes every draft in one transaction: new live versions, their record events and release.published', async () => {
    const { r, items } = await campaign();
    expect((await t.http.post(`/api/v1/releases/${r.id}/publish`).set(editor())).status).to.equal(403);
    const res = await t.http.post(`/api/v1/releases/${r.id}/publish`).set(admin());
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.data).to.include({ status: 'published' });
    expect(Date.parse(res.body.data.publishedAt)).to.be.closeTo(Date.now(), 60_000);
    expect(res.body.data.items.map((i: Json) => i.version)).to.deep.equal([2, 2, 2]);
    for (const a of items) {
      expect(await live(a.id)).to.include({ title: `${a.title} new`, version: 2 });
      expect((await t.http.get(`${ARTICLES}/${a.id}/draft`).set(editor())).status).to.equal(404);
    }
    expect((await outbox('rl.article.updated')).map((p: Json) => p.id).sort()).to.deep.equal(items.map((a) => a.id).sort());
    const [event] = await outbox('release.published');
    expect(event).to.deep.equal({ releaseId: r.id, name: 'Campaign', items: items.map((a) => ({ namespace: 'rl', schema: 'article', id: a.id, version: 2 })) });
    expect((await t.http.post(`/api/v1/releases/${r.id}/publish`).set(admin())).status).to.equal(409);
  });

  it('publishes nothing when its third item fails, and the 409 names the items that cannot go', async () => {
    const { r, items } = await campaign();
    // The third draft no longer fits the schema; the second's live record moved since its draft.
    await t.http.put('/api/v1/metadata/schemas/rl/article').set(admin()).set('If-Match', '"1"').send({
      schema: { ...articleSchema.schema, properties: { ...articleSchema.schema.properties, body: { type: 'string', pattern: '^text [01]$' } } },
    }).expect(200);
    let res = await t.http.post(`/api/v1/releases/${r.id}/publish`).set(admin());
    expect(res.status).to.equal(409);
    expect(res.body.error.details).to.have.length(1);
    expect(res.body.error.details[0]).to.include({ namespace: 'rl', schema: 'article', id: items[2].id, code: 'validation_failed' });
    for (const a of items) expect(await live(a.id)).to.include({ title: a.title, version: 1 });

    await t.http.patch(`${ARTICLES}/${items[1].id}`).set(editor()).send({ body: 'text 0' }).expect(200);
    res = await t.http.post(`/api/v1/releases/${r.id}/publish`).set(admin());
    expect(res.body.error.details.map((d: Json) => [d.id, d.code])).to.deep.equal([[items[1].id, 'conflict'], [items[2].id, 'validation_failed']]);
    expect(await live(items[0].id)).to.include({ title: 'One', version: 1 });
    expect((await t.http.get(`/api/v1/releases/${r.id}`).set(editor())).body.data.status).to.equal('open');
    expect(await outbox('release.published')).to.deep.equal([]);
  });

  it('publishes a scheduled release once its time has come; one that fails is left failed with errors, nothing published', async () => {
    const { r, items } = await campaign();
    const past = await t.http.post(`/api/v1/releases/${r.id}/publish`).set(admin()).send({ at: new Date(Date.now() - 1000).toISOString() });
    expect(past.status).to.equal(400);
    const at = new Date(Date.now() + 60_000).toISOString();
    const scheduled = await t.http.post(`/api/v1/releases/${r.id}/publish`).set(admin()).send({ at }).expect(200);
    expect(scheduled.body.data).to.include({ status: 'scheduled', scheduledAt: at });
    const unscheduled = await t.http.delete(`/api/v1/releases/${r.id}/schedule`).set(admin()).expect(200);
    expect(unscheduled.body.data).to.include({ status: 'open', scheduledAt: null });
    await t.http.post(`/api/v1/releases/${r.id}/publish`).set(admin()).send({ at }).expect(200);
    await scheduler().runOnce(new Date(Date.now() + 30_000));
    expect((await t.http.get(`/api/v1/releases/${r.id}`).set(editor())).body.data.status).to.equal('scheduled');
    await scheduler().runOnce(new Date(Date.now() + 61_000));
    const done = (await t.http.get(`/api/v1/releases/${r.id}`).set(editor())).body.data;
    expect(done).to.include({ status: 'published', scheduledAt: null });
    for (const a of items) expect(await live(a.id)).to.include({ version: 2 });

    // A scheduled release that cannot go: failed, with the 409's list as errors.
    const b = await article('B');
    await draft(b.id, { title: 'B new' });
    const second = await release('Second');
    await bind(second.id, b.id).expect(200);
    await t.http.post(`/api/v1/releases/${second.id}/publish`).set(admin()).send({ at }).expect(200);
    await t.http.patch(`${ARTICLES}/${b.id}`).set(editor()).send({ body: 'moved' }).expect(200);
    await scheduler().runOnce(new Date(Date.now() + 61_000));
    const failed = (await t.http.get(`/api/v1/releases/${second.id}`).set(editor())).body.data;
    expect(failed).to.include({ status: 'failed', scheduledAt: null });
    expect(failed.errors.map((e: Json) => [e.namespace, e.schema, e.id, e.code])).to.deep.equal([['rl', 'article', b.id, 'conflict']]);
    expect(await live(b.id)).to.include({ title: 'B', version: 2 });
  });

  it('rolls back: 409 naming an item changed since, forced puts every item back as new versions and deletes what it created', async () => {
    const { r, items } = await campaign();
    const fresh = (await t.http.post(`${ARTICLES}?draft=true`).set(editor()).send({ title: 'Created by the release' }).expect(201)).body.data.item;
    await bind(r.id, fresh.id).expect(200);
    await t.http.post(`/api/v1/releases/${r.id}/publish`).set(admin()).expect(200);
    expect(await live(fresh.id)).to.include({ version: 1 });
    await t.http.patch(`${ARTICLES}/${items[0].id}`).set(editor()).send({ body: 'edited after' }).expect(200);

    const refused = await t.http.post(`/api/v1/releases/${r.id}/rollback`).set(admin());
    expect(refused.status).to.equal(409);
    expect(refused.body.error.details.map((d: Json) => d.id)).to.deep.equal([items[0].id]);
    expect(await live(items[1].id)).to.include({ title: 'Two new', version: 2 });

    const forced = await t.http.post(`/api/v1/releases/${r.id}/rollback`).set(admin()).send({ force: true });
    expect(forced.status, JSON.stringify(forced.body)).to.equal(200);
    expect(forced.body.data.status).to.equal('rolled_back');
    expect(await live(items[0].id)).to.include({ title: 'One', version: 4 });
    expect(await live(items[0].id)).to.not.have.property('body');
    expect(await live(items[1].id)).to.include({ title: 'Two', version: 3 });
    expect(await live(fresh.id)).to.equal(null);
    const [event] = await outbox('release.rolled_back');
    expect(event.items.map((i: Json) => [i.id, i.version])).to.deep.equal([[items[0].id, 4], [items[1].id, 3], [items[2].id, 3], [fresh.id, null]]);
    expect((await t.http.post(`/api/v1/releases/${r.id}/rollback`).set(admin())).status).to.equal(409);
  });

  it('rolls back without force when nothing changed since', async () => {
    const { r, items } = await campaign();
    await t.http.post(`/api/v1/releases/${r.id}/publish`).set(admin()).expect(200);
    await t.http.post(`/api/v1/releases/${r.id}/rollback`).set(admin()).expect(200);
    for (const a of items) expect(await live(a.id)).to.include({ title: a.title, version: 3 });
  });
});
