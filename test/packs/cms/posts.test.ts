import { expect } from 'chai';
import { systemContext } from '../../../core/base/request-context.js';
import { createTenant, sharedTestApp, type TestApp } from '../../helpers/test-app.js';
import { as } from '../../helpers/tokens.js';

const POSTS = '/api/v1/cms/posts';

describe('CMS posts', () => {
  let t: TestApp;
  let tenant: string;

  before(async () => {
    t = await sharedTestApp();
  });

  beforeEach(async () => {
    tenant = await createTenant(t, 'blog');
  });

  const create = async (body: Record<string, unknown>, on = tenant) => {
    const res = await t.http.post(POSTS).set(as(on, 'editor')).send({ content: '', ...body });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body.data as Record<string, any>;
  };
  const patch = (id: string, body: Record<string, unknown>) => t.http.patch(`${POSTS}/${id}`).set(as(tenant, 'editor')).send(body);
  const list = (query: Record<string, string | number> = {}) => t.http.get(POSTS).query(query).set(as(tenant, 'viewer'));
  const search = async (q: string, on = tenant) => {
    const res = await t.http.get(`/api/v1/public/tenant/${on}/knowledge`).query({ q });
    expect(res.status).to.equal(200);
    return res.body.data.items as Array<Record<string, any>>;
  };

  describe('GET /api/v1/cms/posts', () => {
    it('lists newest first with limit 50 and offset 0 by default', async () => {
      for (let batch = 0; batch < 51; batch += 17) {
        await Promise.all(Array.from({ length: 17 }, (_, i) => create({ title: `Post ${batch + i}` })));
      }
      const newest = await create({ title: 'Newest' });
      const res = await list();
      expect(res.status).to.equal(200);
      expect(res.body.data.items).to.have.length(50);
      expect(res.body.data.items[0].id).to.equal(newest.id);
      expect(res.body.data.pagination).to.include({ limit: 50, offset: 0, total: 52, hasMore: true });
      const createdAt = res.body.data.items.map((p: any) => p.createdAt);
      expect(createdAt).to.deep.equal([...createdAt].sort().reverse());
    });

    it('pages with limit and offset', async () => {
      const a = await create({ title: 'A' });
      const b = await create({ title: 'B' });
      await create({ title: 'C' });
      const res = await list({ limit: 2, offset: 1 });
      expect(res.body.data.items.map((p: any) => p.id)).to.deep.equal([b.id, a.id]);
      expect(res.body.data.pagination).to.include({ limit: 2, offset: 1, total: 3, hasMore: false });
      expect((await list({ limit: 200 })).status).to.equal(200);
    });

    it('answers 400 validation_failed for a limit outside 1..200 or a negative offset', async () => {
      for (const query of [{ limit: 0 }, { limit: 201 }, { limit: 'ten' }, { offset: -1 }] as Array<Record<string, string | number>>) {
        const res = await list(query);
        expect(res.status, JSON.stringify(query)).to.equal(400);
        expect(res.body.error.code).to.equal('validation_failed');
      }
    });

    it('shows a tenant only its own posts, and answers 403 module_disabled without cms', async () => {
      await create({ title: 'Mine' });
      const other = await createTenant(t, 'blog');
      expect((await t.http.get(POSTS).set(as(other, 'viewer'))).body.data.items).to.deep.equal([]);
      await t.app.kernel.tenants.setModule(systemContext(null), tenant, 'cms', false);
      const res = await list();
      expect(res.status).to.equal(403);
      expect(res.body.error.code).to.equal('module_disabled');
    });
  });

  describe('POST /api/v1/cms/posts', () => {
    it('creates a draft with a slug from the title, an ETag and the post\'s fields', async () => {
      const res = await t.http.post(POSTS).set(as(tenant, 'editor'))
        .send({ title: 'Flu season: what to know!', content: '# Flu\nGet vaccinated.', metadata: { category: 'health', author: 'Dr. Ana' } });
      expect(res.status).to.equal(201);
      expect(res.headers.etag).to.equal('"1"');
      expect(res.body.data).to.include({ title: 'Flu season: what to know!', slug: 'flu-season-what-to-know', status: 'draft', content: '# Flu\nGet vaccinated.', version: 1 });
      expect(res.body.data.metadata).to.deep.equal({ category: 'health', author: 'Dr. Ana' });
      const read = await t.http.get(`${POSTS}/${res.body.data.id}`).set(as(tenant, 'viewer'));
      expect(read.status).to.equal(200);
      expect(read.headers.etag).to.equal('"1"');
      expect(read.body.data).to.deep.equal(res.body.data);
    });

    it('makes another slug from the same title, and answers 409 conflict for a slug given that is taken', async () => {
      await create({ title: 'Opening hours' });
      expect((await create({ title: 'Opening hours' })).slug).to.equal('opening-hours-2');
      const res = await t.http.post(POSTS).set(as(tenant, 'editor')).send({ title: 'Other', slug: 'opening-hours', content: '' });
      expect(res.status).to.equal(409);
      expect(res.body.error.code).to.equal('conflict');
      expect((await create({ title: 'Opening hours' }, await createTenant(t, 'blog'))).slug).to.equal('opening-hours');
    });

    it('answers 400 naming each bad field', async () => {
      const res = await t.http.post(POSTS).set(as(tenant, 'editor')).send({ slug: 'Not A Slug', status: 'live', author: 'x' });
      expect(res.status).to.equal(400);
      expect(res.body.error.details.map((d: any) => d.path)).to.include.members(['/title', '/content', '/slug', '/status', '/author']);
    });

    it('answers 403 forbidden to a viewer', async () => {
      const res = await t.http.post(POSTS).set(as(tenant, 'viewer')).send({ title: 'X', content: '' });
      expect(res.status).to.equal(403);
    });
  });

  describe('GET and PATCH /api/v1/cms/posts/:id', () => {
    it('applies a merge patch, honours If-Match and answers 404 for another tenant\'s post', async () => {
      const post = await create({ title: 'Draft', metadata: { category: 'news', author: 'Ana' } });
      const res = await t.http.patch(`${POSTS}/${post.id}`).set(as(tenant, 'editor')).set('If-Match', '"1"')
        .send({ title: 'Final', metadata: { author: null } });
      expect(res.status).to.equal(200);
      expect(res.headers.etag).to.equal('"2"');
      expect(res.body.data).to.include({ title: 'Final', slug: 'draft', version: 2 });
      expect(res.body.data.metadata).to.deep.equal({ category: 'news' });
      const stale = await t.http.patch(`${POSTS}/${post.id}`).set(as(tenant, 'editor')).set('If-Match', '"1"').send({ title: 'Late' });
      expect(stale.status).to.equal(412);

      const other = await createTenant(t, 'blog');
      expect((await t.http.get(`${POSTS}/${post.id}`).set(as(other, 'viewer'))).status).to.equal(404);
      expect((await t.http.patch(`${POSTS}/${post.id}`).set(as(other, 'editor')).send({ title: 'Mine' })).status).to.equal(404);
    });

    it('answers 400 when the patched post breaks the schema', async () => {
      const post = await create({ title: 'Keep' });
      const res = await patch(post.id, { title: null, status: 'gone' });
      expect(res.status).to.equal(400);
      expect(res.body.error.details.map((d: any) => d.path)).to.include.members(['/title', '/status']);
    });
  });

  describe('the knowledge entry of a published post', () => {
    it('is found by the next public knowledge search, once, with sourceModule cms and the post\'s URL', async () => {
      const post = await create({ title: 'Travel vaccines', content: 'Yellow fever shots ten days before the trip.', status: 'published' });
      expect(post.publishedAt).to.be.a('string');
      const hits = await search('yellow fever');
      expect(hits).to.have.length(1);
      expect(hits[0]).to.include({ title: 'Travel vaccines', sourceModule: 'cms', url: '/blog/travel-vaccines' });
    });

    it('stays one entry per post, however long the post and however often it is saved again', async () => {
      const sections = Array.from({ length: 6 }, (_, i) => `## Part ${i}\n\n${'Quinoa harvest notes. '.repeat(150)}`).join('\n\n');
      const post = await create({ title: 'Quinoa guide', content: sections, status: 'published' });
      expect(await search('quinoa')).to.have.length(1);
      for (let i = 0; i < 3; i++) expect((await patch(post.id, { content: `${sections}\n\nRevision ${i} mentions amaranth.` })).status).to.equal(200);
      const hits = await search('quinoa');
      expect(hits).to.have.length(1);
      expect((await search('amaranth'))).to.have.length(1);
      const rows = await t.app.kernel.db.knex('knowledge_entries').where({ tenant_id: tenant, source_module: 'cms' });
      expect(rows).to.have.length(1);
    });

    it('follows republishing with new content and is removed on unpublishing', async () => {
      const post = await create({ title: 'Clinic news', content: 'The pharmacy opens on Sundays.', status: 'published' });
      await patch(post.id, { content: 'The laboratory opens on Saturdays.' }).expect(200);
      expect(await search('pharmacy')).to.have.length(0);
      expect(await search('laboratory')).to.have.length(1);

      await patch(post.id, { status: 'draft' }).expect(200);
      expect(await search('laboratory')).to.have.length(0);
      await patch(post.id, { status: 'published' }).expect(200);
      expect(await search('laboratory')).to.have.length(1);
      await patch(post.id, { status: 'archived' }).expect(200);
      expect(await search('laboratory')).to.have.length(0);
    });

    it('is never made for a draft, and is found only in its own tenant', async () => {
      await create({ title: 'Secret plans', content: 'Unannounced telemedicine launch.' });
      expect(await search('telemedicine')).to.have.length(0);
      const post = await create({ title: 'Public plans', content: 'Announced dermatology clinic.', status: 'published' });
      const other = await createTenant(t, 'blog');
      expect(await search('dermatology', other)).to.have.length(0);
      expect((await search('dermatology'))[0].url).to.equal(`/blog/${post.slug}`);
    });
  });
});
