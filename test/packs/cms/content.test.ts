import { expect } from 'chai';
import { createTenant, sharedTestApp, type TestApp } from '../../helpers/test-app.js';
import { as, superadmin } from '../../helpers/tokens.js';

describe('CMS content', () => {
  let t: TestApp;
  let tenant: string;

  before(async () => {
    t = await sharedTestApp();
  });

  beforeEach(async () => {
    tenant = await createTenant(t, 'cms');
  });

  const createPage = async (body: Record<string, unknown>) => {
    const res = await t.http.post(`/api/v1/tenant/${tenant}/content/page`).set(as(tenant, 'editor')).send(body);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body.data;
  };

  const search = (q: string, id = tenant) => t.http.get(`/api/v1/public/tenant/${id}/knowledge`).query({ q });

  describe('POST /api/v1/tenant/:tenantId/content/:contentType', () => {
    it('creates a draft with a slug generated from the title', async () => {
      const page = await createPage({ title: 'About Our Café', content: '# About\n\nWe roast beans.' });
      expect(page).to.include({ title: 'About Our Café', slug: 'about-our-cafe', status: 'draft' });
      expect(page.publishedAt).to.equal(undefined);
    });

    it('makes generated slugs unique per tenant and type', async () => {
      await createPage({ title: 'Contact' });
      const second = await createPage({ title: 'Contact' });
      expect(second.slug).to.equal('contact-2');
      const post = await t.http.post(`/api/v1/tenant/${tenant}/content/post`).set(as(tenant, 'editor')).send({ title: 'Contact' });
      expect(post.body.data.slug).to.equal('contact');
    });

    it('answers 409 conflict for a slug given twice', async () => {
      await createPage({ title: 'One', slug: 'same' });
      const res = await t.http.post(`/api/v1/tenant/${tenant}/content/page`).set(as(tenant, 'editor')).send({ title: 'Two', slug: 'same' });
      expect(res.status).to.equal(409);
      expect(res.body.error.code).to.equal('conflict');
    });

    it('answers 400 validation_failed for an invalid status', async () => {
      const res = await t.http.post(`/api/v1/tenant/${tenant}/content/page`).set(as(tenant, 'editor')).send({ title: 'X', status: 'live' });
      expect(res.status).to.equal(400);
      expect(res.body.error.code).to.equal('validation_failed');
    });

    it('answers 403 for a viewer and for another tenant', async () => {
      const viewer = await t.http.post(`/api/v1/tenant/${tenant}/content/page`).set(as(tenant, 'viewer')).send({ title: 'X' });
      expect(viewer.status).to.equal(403);
      const other = await createTenant(t, 'cms');
      const foreign = await t.http.get(`/api/v1/tenant/${tenant}/content/page`).set(as(other, 'admin'));
      expect(foreign.status).to.equal(403);
      expect(foreign.body.error.code).to.equal('forbidden');
    });

    it('gives a tenant-registered content type slug and status', async () => {
      const reg = await t.http.post('/api/v1/metadata/schemas').set(as(tenant, 'admin')).send({
        namespace: 'cms', name: 'recipe',
        schema: { type: 'object', additionalProperties: false, required: ['title'], properties: { title: { type: 'string' }, content: { type: 'string' } } },
      });
      expect(reg.status, JSON.stringify(reg.body)).to.equal(201);
      expect(reg.body.data.item.unique).to.deep.include(['slug']);
      const res = await t.http.post(`/api/v1/tenant/${tenant}/content/recipe`).set(as(tenant, 'editor'))
        .send({ title: 'Lemon Tart', content: 'Zesty lemon custard in shortcrust.', status: 'published' });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      expect(res.body.data).to.include({ slug: 'lemon-tart', status: 'published' });
      expect(res.body.data.publishedAt).to.be.a('string');
      const found = await search('custard');
      expect(found.body.data.items.map((i: any) => i.url)).to.deep.equal(['/recipe/lemon-tart']);
    });
  });

  describe('GET /api/v1/tenant/:tenantId/content/:contentType', () => {
    it('lists with the data API query language', async () => {
      await createPage({ title: 'A', status: 'published' });
      await createPage({ title: 'B' });
      const res = await t.http.get(`/api/v1/tenant/${tenant}/content/page`).query({ 'filter[status]': 'draft' }).set(as(tenant, 'viewer'));
      expect(res.status).to.equal(200);
      expect(res.body.status).to.equal('success');
      expect(res.body.data.items.map((p: any) => p.title)).to.deep.equal(['B']);
      expect(res.body.data.pagination.total).to.equal(1);
    });

    it('answers 404 schema_not_found for an unknown content type', async () => {
      const res = await t.http.get(`/api/v1/tenant/${tenant}/content/nothing`).set(as(tenant, 'viewer'));
      expect(res.status).to.equal(404);
      expect(res.body.error.code).to.equal('schema_not_found');
    });
  });

  describe('GET/PATCH /api/v1/cms/pages/:pageId', () => {
    it('publishes a page: publishedAt set once, searchable at once, public at once', async () => {
      const page = await createPage({ title: 'Opening hours', content: '## Hours\n\nOpen on weekdays from nine.' });
      expect((await search('weekdays')).body.data.items).to.have.length(0);
      const pub = await t.http.get(`/api/v1/public/tenant/${tenant}/content/page`).query({ slug: 'opening-hours' });
      expect(pub.body.data.items).to.have.length(0);

      const patched = await t.http.patch(`/api/v1/cms/pages/${page.id}`).set(as(tenant, 'editor')).send({ status: 'published' });
      expect(patched.status, JSON.stringify(patched.body)).to.equal(200);
      const publishedAt = patched.body.data.publishedAt;
      expect(publishedAt).to.be.a('string');

      const found = await search('weekdays');
      expect(found.body.data.items).to.have.length(1);
      expect(found.body.data.items[0]).to.include({ sourceModule: 'cms', url: '/opening-hours' });
      expect(found.body.data.items[0].snippet).to.contain('<mark>weekdays</mark>');
      const pub2 = await t.http.get(`/api/v1/public/tenant/${tenant}/content/page`).query({ slug: 'opening-hours' });
      expect(pub2.body.data.items.map((p: any) => p.id)).to.deep.equal([page.id]);

      const edited = await t.http.patch(`/api/v1/cms/pages/${page.id}`).set(as(tenant, 'editor')).send({ content: 'Open on weekends only.' });
      expect(edited.body.data.publishedAt).to.equal(publishedAt);
      expect((await search('weekdays')).body.data.items).to.have.length(0);
      expect((await search('weekends')).body.data.items).to.have.length(1);

      const unpublished = await t.http.patch(`/api/v1/cms/pages/${page.id}`).set(as(tenant, 'editor')).send({ status: 'archived' });
      expect(unpublished.status).to.equal(200);
      expect((await search('weekends')).body.data.items).to.have.length(0);
    });

    it('removes the knowledge entry when published content is deleted', async () => {
      const page = await createPage({ title: 'Returns', content: 'Refunds within thirty days.', status: 'published' });
      expect((await search('refunds')).body.data.items).to.have.length(1);
      const del = await t.http.delete(`/api/v1/data/cms/page/${page.id}`).set(as(tenant, 'editor'));
      expect(del.status).to.equal(200);
      expect((await search('refunds')).body.data.items).to.have.length(0);
    });

    it('reads a page and answers 404 for another tenant\'s page', async () => {
      const page = await createPage({ title: 'Mine' });
      const own = await t.http.get(`/api/v1/cms/pages/${page.id}`).set(as(tenant, 'viewer'));
      expect(own.status).to.equal(200);
      expect(own.body.data.title).to.equal('Mine');
      const other = await createTenant(t, 'cms');
      const foreign = await t.http.get(`/api/v1/cms/pages/${page.id}`).set(as(other, 'admin'));
      expect(foreign.status).to.equal(404);
      const listed = await t.http.get('/api/v1/cms/pages').set(superadmin(other));
      expect(listed.body.data.items).to.have.length(0);
    });
  });

  describe('GET /api/v1/public/tenant/:tenantId/knowledge', () => {
    it('ranks title matches first and keeps tenants apart', async () => {
      await createPage({ title: 'Shipping', content: 'We send parcels worldwide.', status: 'published' });
      await createPage({ title: 'Parcels', content: 'Parcels are tracked. Every parcel gets a number.', status: 'published' });
      const res = await search('parcels');
      expect(res.status).to.equal(200);
      expect(res.body.data.items.map((i: any) => i.title)).to.deep.equal(['Parcels', 'Shipping']);
      expect(res.body.data.items[0].score).to.be.greaterThan(res.body.data.items[1].score);
      expect(res.body.data.pagination).to.include({ total: 2, hasMore: false });
      const other = await createTenant(t, 'cms');
      expect((await search('parcels', other)).body.data.items).to.have.length(0);
    });

    it('escapes HTML in snippets', async () => {
      await createPage({ title: 'Markup', content: 'Use <script>alert(1)</script> with care: zebra & lion.', status: 'published' });
      const res = await search('zebra');
      expect(res.body.data.items[0].snippet).to.contain('<mark>zebra</mark> &amp; lion').and.not.contain('<script>');
    });

    it('answers 404 tenant_not_found for an unknown tenant and 400 without q', async () => {
      const unknown = await search('x', 'no-such-tenant');
      expect(unknown.status).to.equal(404);
      expect(unknown.body.error.code).to.equal('tenant_not_found');
      const noQ = await t.http.get(`/api/v1/public/tenant/${tenant}/knowledge`);
      expect(noQ.status).to.equal(400);
    });
  });

  describe('GET /api/v1/public/tenant/:tenantId/content/:contentType', () => {
    it('serves published items only, with Cache-Control and an ETag honoured by If-None-Match', async () => {
      await createPage({ title: 'Public', status: 'published' });
      await createPage({ title: 'Secret draft' });
      const res = await t.http.get(`/api/v1/public/tenant/${tenant}/content/page`);
      expect(res.status).to.equal(200);
      expect(res.body.data.items.map((p: any) => p.title)).to.deep.equal(['Public']);
      expect(res.headers['cache-control']).to.match(/public, max-age=\d+/);
      const etag = res.headers.etag;
      expect(etag).to.be.a('string');
      const again = await t.http.get(`/api/v1/public/tenant/${tenant}/content/page`).set('If-None-Match', etag);
      expect(again.status).to.equal(304);
    });

    it('pages with limit and offset', async () => {
      for (const title of ['P1', 'P2', 'P3']) await createPage({ title, status: 'published' });
      const res = await t.http.get(`/api/v1/public/tenant/${tenant}/content/page`).query({ limit: 2, offset: 2 });
      expect(res.body.data.items).to.have.length(1);
      expect(res.body.data.pagination).to.include({ limit: 2, offset: 2, total: 3, hasMore: false });
    });

    it('hides form submissions', async () => {
      const res = await t.http.get(`/api/v1/public/tenant/${tenant}/content/form_submission`);
      expect(res.status).to.equal(404);
    });
  });
});
