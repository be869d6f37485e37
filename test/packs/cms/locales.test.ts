import { expect } from 'chai';
import { createTenant, sharedTestApp, type TestApp } from '../../helpers/test-app.js';
import { as } from '../../helpers/tokens.js';
import { Shop } from '../erp/shop.js';

/** The public runtime, knowledge and the storefront per locale (CONTRACT.md 17.2). */
describe('Locales on the public runtime, knowledge and the storefront (CONTRACT.md 17.2)', () => {
  let t: TestApp;
  let tenant: string;

  before(async () => {
    t = await sharedTestApp();
  });

  beforeEach(async () => {
    tenant = await createTenant(t, 'publoc', 'pro');
    const res = await t.http.patch(`/api/v1/tenants/${tenant}/site-config`).set(as(tenant, 'admin')).send({ defaultLocale: 'en', locales: ['en', 'es', 'de'] });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
  });

  const page = async (body: Record<string, unknown>) => {
    const res = await t.http.post('/api/v1/data/cms/page').set(as(tenant, 'editor')).send(body);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body.data.item as Record<string, any>;
  };
  const translate = async (schema: string, id: string, locale: string, body: Record<string, unknown>) => {
    const res = await t.http.patch(`/api/v1/data/cms/${schema}/${id}`).query({ locale }).set(as(tenant, 'editor')).send(body);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
  };
  const search = async (q: string, query: Record<string, string> = {}) => {
    const res = await t.http.get(`/api/v1/public/tenant/${tenant}/knowledge`).query({ q, ...query });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body.data.items as Array<Record<string, any>>;
  };

  describe('GET /public/tenant/{tenantId}/content/{contentType}', () => {
    it('answers the site\'s default locale by default, another locale with ?locale= (falling back), 400 at /locale for one the site lacks', async () => {
      const about = await page({ title: 'About us', content: 'We bake bread.', status: 'published' });
      await translate('page', about.id, 'es', { title: 'Sobre nosotros' });
      const base = `/api/v1/public/tenant/${tenant}/content/page`;
      const plain = await t.http.get(base);
      expect(plain.status).to.equal(200);
      expect(plain.body.data.items[0]).to.include({ title: 'About us', content: 'We bake bread.' });
      expect(plain.body.data.items[0]).to.not.have.property('$locales');
      const es = await t.http.get(base).query({ locale: 'es' });
      expect(es.body.data.items[0]).to.include({ title: 'Sobre nosotros', content: 'We bake bread.' });
      expect(es.headers.etag).to.not.equal(plain.headers.etag);
      const strict = await t.http.get(base).query({ locale: 'es', fallback: 'false' });
      expect(strict.body.data.items[0]).to.include({ title: 'Sobre nosotros', content: null });
      expect((await t.http.get(base).query({ locale: 'en' })).body.data).to.deep.equal(plain.body.data);
      const unknown = await t.http.get(base).query({ locale: 'fr' });
      expect(unknown.status).to.equal(400);
      expect(unknown.body.error.code).to.equal('validation_failed');
      expect(unknown.body.error.details[0].path).to.equal('/locale');
    });
  });

  describe('GET and PATCH /cms/pages/{pageId}, /cms/posts/{postId} with ?locale=', () => {
    it('reads and writes a locale\'s values, and answers 400 at /locale for a locale the site lacks', async () => {
      const about = await page({ title: 'About us', content: 'We bake bread.' });
      const patched = await t.http.patch(`/api/v1/cms/pages/${about.id}`).query({ locale: 'de' }).set(as(tenant, 'editor')).send({ title: 'Über uns' });
      expect(patched.status, JSON.stringify(patched.body)).to.equal(200);
      expect(patched.body.data).to.include({ title: 'Über uns', content: 'We bake bread.' });
      expect((await t.http.get(`/api/v1/cms/pages/${about.id}`).set(as(tenant, 'viewer'))).body.data.title).to.equal('About us');
      const de = await t.http.get(`/api/v1/cms/pages/${about.id}`).query({ locale: 'de', fallback: 'false' }).set(as(tenant, 'viewer'));
      expect(de.body.data).to.include({ title: 'Über uns', content: null });
      const post = await t.http.post('/api/v1/cms/posts').set(as(tenant, 'editor')).send({ title: 'News', content: 'Fresh' });
      for (const res of [
        await t.http.get(`/api/v1/cms/posts/${post.body.data.id}`).query({ locale: 'fr' }).set(as(tenant, 'viewer')),
        await t.http.patch(`/api/v1/cms/posts/${post.body.data.id}`).query({ locale: 'fr' }).set(as(tenant, 'editor')).send({ title: 'Nouvelles' }),
      ]) {
        expect(res.status).to.equal(400);
        expect(res.body.error.details[0].path).to.equal('/locale');
      }
    });
  });

  describe('GET /public/tenant/{tenantId}/knowledge', () => {
    it('keeps one entry per locale with values of its own, each with its locale; ?locale= filters, without it every locale is searched', async () => {
      const post = await t.http.post('/api/v1/data/cms/post').set(as(tenant, 'editor')).send({ title: 'Sourdough', content: 'Flour water salt', status: 'published' });
      expect(post.status).to.equal(201);
      const id = post.body.data.item.id;
      expect((await search('sourdough')).map((h) => h.locale)).to.deep.equal(['en']);
      await translate('post', id, 'es', { title: 'Masa madre', content: 'Harina agua sal' });
      const harina = await search('harina');
      expect(harina).to.have.length(1);
      expect(harina[0]).to.include({ locale: 'es', title: 'Masa madre', sourceModule: 'cms' });
      expect(await search('harina', { locale: 'en' })).to.have.length(0);
      expect((await search('harina', { locale: 'es' })).map((h) => h.locale)).to.deep.equal(['es']);
      // The Spanish entry falls back to the default locale's values it has none of: none here, both translated.
      expect((await search('flour', { locale: 'en' })).map((h) => h.locale)).to.deep.equal(['en']);
      expect(await search('flour', { locale: 'es' })).to.have.length(0);
      // German has no values of its own: no entry.
      expect(await search('sourdough', { locale: 'de' })).to.have.length(0);
      const unknown = await t.http.get(`/api/v1/public/tenant/${tenant}/knowledge`).query({ q: 'harina', locale: 'fr' });
      expect(unknown.status).to.equal(400);
      expect(unknown.body.error.details[0].path).to.equal('/locale');
      // A translation taken away takes its entry with it; unpublishing takes every locale's.
      await translate('post', id, 'es', { title: null, content: null });
      expect(await search('harina')).to.have.length(0);
      await translate('post', id, 'es', { content: 'Harina agua sal' });
      expect((await search('harina')).map((h) => h.title)).to.deep.equal(['Sourdough']);
      const archived = await t.http.patch(`/api/v1/data/cms/post/${id}`).set(as(tenant, 'editor')).send({ status: 'archived' });
      expect(archived.status).to.equal(200);
      expect(await search('harina')).to.have.length(0);
      expect(await search('sourdough')).to.have.length(0);
    });
  });

  describe('GET /public/tenant/{tenantId}/products', () => {
    it('shows name and description in ?locale= (falling back), with its own ETag, and 400 at /locale for one the site lacks', async () => {
      const shop = new Shop(t, tenant);
      const mug = await shop.product({ sku: 'MUG', name: 'Mug', description: 'Blue', priceCents: 1000 });
      const changed = await t.http.patch(`/api/v1/data/erp/product/${mug.id}`).query({ locale: 'de' }).set(as(tenant, 'editor')).send({ name: 'Becher' });
      expect(changed.status, JSON.stringify(changed.body)).to.equal(200);
      const base = `/api/v1/public/tenant/${tenant}/products`;
      const plain = await t.http.get(`${base}/MUG`);
      expect(plain.body.data).to.include({ name: 'Mug', description: 'Blue' });
      const de = await t.http.get(`${base}/MUG`).query({ locale: 'de' });
      expect(de.status).to.equal(200);
      expect(de.body.data).to.include({ name: 'Becher', description: 'Blue', priceCents: 1000 });
      expect(de.headers.etag).to.not.equal(plain.headers.etag);
      expect((await t.http.get(`${base}/MUG`).query({ locale: 'de' }).set('If-None-Match', de.headers.etag)).status).to.equal(304);
      // Kept answers are per locale: the default one is unchanged after the German one.
      expect((await t.http.get(`${base}/MUG`)).body.data.name).to.equal('Mug');
      expect((await t.http.get(base).query({ locale: 'de' })).body.data.items.map((p: any) => p.name)).to.deep.equal(['Becher']);
      expect((await t.http.get(base).query({ locale: 'es' })).body.data.items.map((p: any) => p.name)).to.deep.equal(['Mug']);
      // The erp's own product answers show the default locale's values as before.
      expect((await shop.get(mug.id)).name).to.equal('Mug');
      for (const res of [await t.http.get(`${base}/MUG`).query({ locale: 'fr' }), await t.http.get(base).query({ locale: '*' })]) {
        expect(res.status).to.equal(400);
        expect(res.body.error.code).to.equal('validation_failed');
        expect(res.body.error.details[0].path).to.equal('/locale');
      }
    });
  });
});
