import { expect } from 'chai';
import { createTenant, sharedTestApp, type TestApp } from '../../helpers/test-app.js';
import { as } from '../../helpers/tokens.js';

type Json = Record<string, any>;

/**
 * The packs' own endpoints take `?locale=` like /data (CONTRACT.md 17.2, "every endpoint that takes ?locale="):
 * the lists of /cms/pages, /cms/posts, /tenant/{id}/content/{type} and /erp/products read a locale (falling back, fallback=false, `*`), their
 * writes set a locale's values, and a locale the site lacks is 400 at /locale.
 */
describe('pack endpoints with ?locale=: /cms/pages, /cms/posts, /erp/products', () => {
  let t: TestApp;
  let tenant: string;
  const editor = () => as(tenant, 'editor');
  const viewer = () => as(tenant, 'viewer');

  before(async () => {
    t = await sharedTestApp();
  });

  beforeEach(async () => {
    tenant = await createTenant(t, 'ploc', 'pro');
    await t.http.patch(`/api/v1/tenants/${tenant}/site-config`).set(as(tenant, 'admin')).send({ defaultLocale: 'en', locales: ['en', 'es', 'de'] }).expect(200);
  });

  const expectLocale400 = (res: { status: number; body: Json }) => {
    expect(res.status, JSON.stringify(res.body)).to.equal(400);
    expect(res.body.error.code).to.equal('validation_failed');
    expect(res.body.error.details[0].path).to.equal('/locale');
  };

  it('lists /cms/pages and /cms/posts in a locale, falling back, fallback=false and *', async () => {
    const page = (await t.http.post('/api/v1/data/cms/page').set(editor()).send({ title: 'About', content: 'Bread.', status: 'published' }).expect(201)).body.data.item;
    await t.http.patch(`/api/v1/cms/pages/${page.id}`).query({ locale: 'es' }).set(editor()).send({ title: 'Sobre' }).expect(200);
    const post = await t.http.post('/api/v1/cms/posts').query({ locale: 'es' }).set(editor()).send({ title: 'Noticias', content: 'Frescas' });
    expect(post.status, JSON.stringify(post.body)).to.equal(201);
    expect(post.body.data).to.include({ title: 'Noticias' });
    await t.http.patch(`/api/v1/cms/posts/${post.body.data.id}`).set(editor()).send({ title: 'News' }).expect(200);

    const pages = (query: Json) => t.http.get('/api/v1/cms/pages').query(query).set(viewer());
    expect((await pages({})).body.data.items[0]).to.include({ title: 'About', content: 'Bread.' });
    expect((await pages({ locale: 'es' })).body.data.items[0]).to.include({ title: 'Sobre', content: 'Bread.' });
    expect((await pages({ locale: 'es', fallback: 'false' })).body.data.items[0]).to.include({ title: 'Sobre', content: null });
    const all = (await pages({ locale: '*', fields: 'title' })).body.data.items[0];
    expect(all.title).to.deep.equal({ en: 'About', es: 'Sobre', de: null });
    expect(all).to.not.have.property('$locales');

    const posts = (query: Json) => t.http.get('/api/v1/cms/posts').query(query).set(viewer());
    expect((await posts({})).body.data.items[0]).to.include({ title: 'News' });
    expect((await posts({ locale: 'es' })).body.data.items[0]).to.include({ title: 'Noticias', content: 'Frescas' });
    expect((await posts({ locale: 'de', fallback: 'false' })).body.data.items[0]).to.include({ title: null });

    const content = await t.http.get(`/api/v1/tenant/${tenant}/content/page`).query({ locale: 'es' }).set(viewer()).expect(200);
    expect(content.body.data.items[0]).to.include({ title: 'Sobre' });
    expectLocale400(await t.http.get(`/api/v1/tenant/${tenant}/content/page`).query({ locale: 'fr' }).set(viewer()));

    const one = await t.http.get(`/api/v1/cms/pages/${page.id}`).query({ locale: '*' }).set(viewer()).expect(200);
    expect(one.body.data.title).to.deep.equal({ en: 'About', es: 'Sobre', de: null });

    for (const res of [await pages({ locale: 'fr' }), await posts({ locale: 'fr' }), await posts({ fallback: 'maybe' })]) {
      expect(res.status).to.equal(400);
    }
    expectLocale400(await pages({ locale: 'fr' }));
    expectLocale400(await t.http.post('/api/v1/cms/posts').query({ locale: '*' }).set(editor()).send({ title: 'X', content: 'Y' }));
  });

  it('reads and writes /erp/products in a locale: list, item, create and patch', async () => {
    const created = await t.http.post('/api/v1/erp/products').query({ locale: 'de' }).set(editor()).send({ sku: 'MUG', name: 'Tasse', priceCents: 1999, physicalStock: 5 });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const id = created.body.data.id;
    const patched = await t.http.patch(`/api/v1/erp/products/${id}`).query({ locale: 'es' }).set(editor()).send({ name: 'Taza', description: 'Una taza.' });
    expect(patched.status, JSON.stringify(patched.body)).to.equal(200);
    expect(patched.body.data).to.include({ name: 'Taza', description: 'Una taza.', physicalStock: 5 });
    await t.http.patch(`/api/v1/erp/products/${id}`).set(editor()).send({ name: 'Mug' }).expect(200);

    const list = (query: Json) => t.http.get('/api/v1/erp/products').query(query).set(viewer());
    expect((await list({})).body.data.items[0]).to.include({ name: 'Mug' });
    expect((await list({ locale: 'es' })).body.data.items[0]).to.include({ name: 'Taza', description: 'Una taza.' });
    expect((await list({ locale: 'de', fallback: 'false' })).body.data.items[0]).to.include({ name: 'Tasse', description: null });
    expect((await list({ locale: '*' })).body.data.items[0].name).to.deep.equal({ en: 'Mug', es: 'Taza', de: 'Tasse' });

    const item = (query: Json) => t.http.get(`/api/v1/erp/products/${id}`).query(query).set(viewer());
    expect((await item({})).body.data).to.include({ name: 'Mug' });
    expect((await item({ locale: 'es' })).body.data).to.include({ name: 'Taza' });
    const number = (await item({})).body.data.number;
    expect((await t.http.get(`/api/v1/erp/products/${number}`).query({ locale: 'de' }).set(viewer())).body.data).to.include({ name: 'Tasse' });

    expectLocale400(await list({ locale: 'fr' }));
    expectLocale400(await item({ locale: 'fr' }));
    expectLocale400(await t.http.patch(`/api/v1/erp/products/${id}`).query({ locale: 'fr' }).set(editor()).send({ name: 'Tasse' }));
    expectLocale400(await t.http.post('/api/v1/erp/products').query({ locale: '*' }).set(editor()).send({ sku: 'B', name: 'B', priceCents: 1 }));
    // Nothing was written by the refused requests.
    expect((await item({ locale: '*' })).body.data.name).to.deep.equal({ en: 'Mug', es: 'Taza', de: 'Tasse' });
    expect((await list({})).body.data.items).to.have.length(1);
  });
});
