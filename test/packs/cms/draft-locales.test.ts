import { expect } from 'chai';
import { createTenant, sharedTestApp, type TestApp } from '../../helpers/test-app.js';
import { as } from '../../helpers/tokens.js';

type Json = Record<string, any>;

const PAGES = '/api/v1/data/cms/page';
const PRODUCTS = '/api/v1/data/erp/product';

/**
 * Drafts hold every locale (CONTRACT.md 17.1 × 17.2): a draft saved with `?locale=` carries that locale's values,
 * reads of a draft take `?locale=` and `*`, publishing it (alone or in a release) publishes its translations, and
 * a rebase keeps them; a product's draft changes its localised name and description, never its stock.
 */
describe('drafts × locales: a draft holds every locale\'s values', function () {
  this.timeout(30_000);
  let t: TestApp;
  let tenant: string;
  const editor = () => as(tenant, 'editor');
  const createPage = async (body: Json, query: Json = {}): Promise<Json> => {
    const res = await t.http.post(PAGES).query(query).set(editor()).send(body);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body.data.item;
  };
  const saveDraft = async (path: string, patch: Json, query: Json = {}): Promise<Json> => {
    const res = await t.http.put(`${path}/draft`).query(query).set(editor()).send(patch);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body.data;
  };
  const readDraft = async (path: string, query: Json = {}): Promise<Json> => {
    const res = await t.http.get(`${path}/draft`).query(query).set(as(tenant, 'viewer'));
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body.data.item;
  };
  const readLive = async (path: string, query: Json = {}): Promise<Json> => {
    const res = await t.http.get(path).query(query).set(as(tenant, 'viewer'));
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body.data.item;
  };
  const publish = async (path: string): Promise<Json> => {
    const res = await t.http.post(`${path}/draft/publish`).set(editor()).send({});
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body.data.item;
  };

  before(async () => {
    t = await sharedTestApp();
  });

  beforeEach(async () => {
    tenant = await createTenant(t, 'dloc', 'pro');
    await t.http.patch(`/api/v1/tenants/${tenant}/site-config`).set(as(tenant, 'admin')).send({ defaultLocale: 'en', locales: ['en', 'es', 'de'] }).expect(200);
  });

  it('saves a locale\'s values into the draft, keeps the live translations in it, and reads it per locale, * and fallback=false', async () => {
    const page = await createPage({ title: 'Home', content: 'Welcome.', status: 'published' });
    const path = `${PAGES}/${page.id}`;
    await t.http.patch(path).query({ locale: 'es' }).set(editor()).send({ title: 'Inicio' }).expect(200);

    const saved = await saveDraft(path, { content: 'Willkommen.' }, { locale: 'de' });
    // The answer is in the write's locale; the draft never shows $locales.
    expect(saved.item).to.include({ title: 'Home', content: 'Willkommen.' });
    expect(saved.item).to.not.have.property('$locales');
    expect(saved.draft).to.include({ baseVersion: 2, revision: 1 });
    await saveDraft(path, { title: 'Start' }, { locale: 'de' });

    expect(await readDraft(path)).to.include({ title: 'Home', content: 'Welcome.' });
    expect(await readDraft(path, { locale: 'es' })).to.include({ title: 'Inicio', content: 'Welcome.' });
    expect(await readDraft(path, { locale: 'de' })).to.include({ title: 'Start', content: 'Willkommen.' });
    const es = await readDraft(path, { locale: 'es', fallback: 'false' });
    expect(es.title).to.equal('Inicio');
    expect(es.content).to.equal(null);
    const all = await readDraft(path, { locale: '*' });
    expect(all.title).to.deep.equal({ en: 'Home', es: 'Inicio', de: 'Start' });
    expect(all.content).to.deep.equal({ en: 'Welcome.', es: null, de: 'Willkommen.' });

    // Nothing live changed: no German values.
    const liveDe = await readLive(path, { locale: 'de', fallback: 'false' });
    expect(liveDe.title).to.equal(null);
    expect(liveDe.version).to.equal(2);

    // Published: every locale's values of the draft go live, the live Spanish title with them.
    const published = await publish(path);
    expect(published.version).to.equal(3);
    const liveAll = await readLive(path, { locale: '*' });
    expect(liveAll.title).to.deep.equal({ en: 'Home', es: 'Inicio', de: 'Start' });
    expect(liveAll.content).to.deep.equal({ en: 'Welcome.', es: null, de: 'Willkommen.' });
  });

  it('answers 400 for a locale the tenant does not have, for * on a save, for $locales in the body, and for a translation that does not fit', async () => {
    const page = await createPage({ title: 'Home', status: 'published' });
    const path = `${PAGES}/${page.id}`;
    for (const [query, body, where] of [
      [{ locale: 'fr' }, { title: 'Accueil' }, '/locale'],
      [{ locale: '*' }, { title: 'x' }, '/locale'],
      [{}, { $locales: { es: { title: 'Inicio' } } }, '/$locales'],
      [{ locale: 'es' }, { title: '' }, '/title'],
    ] as const) {
      const res = await t.http.put(`${path}/draft`).query(query).set(editor()).send(body);
      expect(res.status, JSON.stringify(query)).to.equal(400);
      expect(res.body.data.code).to.equal('validation_failed');
      expect(res.body.data.errors.map((d: Json) => d.path)).to.deep.equal([where]);
    }
    expect((await t.http.get(`${path}/draft`).query({ locale: 'fr' }).set(editor())).status).to.equal(400);
    expect((await t.http.get(`${path}/draft`).set(editor())).status).to.equal(404);
  });

  it('creates a draft-only record in a locale and publishes it with its translations as version 1', async () => {
    const created = await t.http.post(PAGES).query({ draft: 'true', locale: 'es' }).set(editor()).send({ title: 'Ofertas', status: 'published' });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const path = `${PAGES}/${created.body.data.item.id}`;
    await saveDraft(path, { title: 'Sale' });
    await saveDraft(path, { title: 'Angebote' }, { locale: 'de' });
    const published = await publish(path);
    expect(published).to.include({ version: 1, title: 'Sale' });
    const all = await readLive(path, { locale: '*' });
    expect(all.title).to.deep.equal({ en: 'Sale', es: 'Ofertas', de: 'Angebote' });
  });

  it('keeps the draft\'s translations through a rebase and shows them in lists with drafts', async () => {
    const page = await createPage({ title: 'Home', status: 'published' });
    const path = `${PAGES}/${page.id}`;
    await saveDraft(path, { title: 'Inicio' }, { locale: 'es' });
    await t.http.patch(path).set(editor()).send({ content: 'Edited live.' }).expect(200);
    expect((await t.http.post(`${path}/draft/publish`).set(editor()).send({})).status).to.equal(409);
    const rebased = await saveDraft(path, {}, { rebase: 'true' });
    expect(rebased.draft.baseVersion).to.equal(2);
    expect((await readDraft(path, { locale: 'es' })).title).to.equal('Inicio');

    const include = await t.http.get(PAGES).query({ drafts: 'include', locale: 'es' }).set(editor()).expect(200);
    expect(include.body.data.items.find((i: Json) => i.id === page.id)).to.include({ title: 'Inicio', hasDraft: true });
    const only = await t.http.get(PAGES).query({ drafts: 'only', locale: '*' }).set(editor()).expect(200);
    expect(only.body.data.items[0].title).to.deep.equal({ en: 'Home', es: 'Inicio', de: null });
    expect(only.body.data.items[0]).to.not.have.property('$locales');

    await publish(path);
    expect((await readLive(path, { locale: 'es' })).title).to.equal('Inicio');
  });

  it('publishes a release that carries a translation only, and rolls it back', async () => {
    const page = await createPage({ title: 'Home', content: 'Welcome.', status: 'published' });
    const path = `${PAGES}/${page.id}`;
    await saveDraft(path, { title: 'Inicio', content: 'Bienvenido.' }, { locale: 'es' });
    const release = (await t.http.post('/api/v1/releases').set(editor()).send({ name: 'Spanish' }).expect(201)).body.data;
    await t.http.post(`/api/v1/releases/${release.id}/items`).set(editor()).send({ namespace: 'cms', schema: 'page', id: page.id }).expect(200);
    const published = await t.http.post(`/api/v1/releases/${release.id}/publish`).set(as(tenant, 'admin')).send({});
    expect(published.status, JSON.stringify(published.body)).to.equal(200);
    expect(await readLive(path)).to.include({ title: 'Home', content: 'Welcome.', version: 2 });
    expect(await readLive(path, { locale: 'es' })).to.include({ title: 'Inicio', content: 'Bienvenido.' });

    await t.http.post(`/api/v1/releases/${release.id}/rollback`).set(as(tenant, 'admin')).send({}).expect(200);
    const back = await readLive(path, { locale: 'es', fallback: 'false' });
    expect(back).to.include({ title: null, version: 3 });
  });

  it('shows a previewed draft\'s translation on the public runtime in that locale only', async () => {
    const page = await createPage({ title: 'Home', slug: 'home', content: 'Welcome.', status: 'published' });
    await saveDraft(`${PAGES}/${page.id}`, { content: 'Bienvenido.' }, { locale: 'es' });
    const preview = (await t.http.post('/api/v1/previews').set(editor()).send({ items: [{ namespace: 'cms', schema: 'page', id: page.id }] }).expect(201)).body.data;
    const pub = (query: Json) => t.http.get(`/api/v1/public/tenant/${tenant}/content/page`).query({ slug: 'home', ...query });
    const es = await pub({ locale: 'es', preview: preview.token }).expect(200);
    expect(JSON.stringify(es.body.data)).to.include('Bienvenido.').and.not.include('$locales');
    const en = await pub({ preview: preview.token }).expect(200);
    expect(JSON.stringify(en.body.data)).to.include('Welcome.').and.not.include('Bienvenido.');
    const live = await pub({ locale: 'es' }).expect(200);
    expect(JSON.stringify(live.body.data)).to.not.include('Bienvenido.');
  });

  it('drafts a product\'s localised name and description, never its stock, and publishes them over the stock of the moment', async () => {
    const product = (await t.http.post('/api/v1/erp/products').set(editor()).send({ sku: 'MUG', name: 'Mug', description: 'A mug.', priceCents: 1999, physicalStock: 5 }).expect(201)).body.data;
    const path = `${PRODUCTS}/${product.id}`;
    const saved = await saveDraft(path, { name: 'Taza', description: 'Una taza.', priceCents: 1499 }, { locale: 'es' });
    expect(saved.item).to.include({ name: 'Taza', priceCents: 1499, physicalStock: 5 });
    const stock = await t.http.put(`${path}/draft`).query({ locale: 'es' }).set(editor()).send({ physicalStock: 50 });
    expect(stock.status).to.equal(400);
    expect(stock.body.data.errors.map((d: Json) => d.path)).to.deep.equal(['/physicalStock']);

    const live = await publish(path);
    expect(live).to.include({ name: 'Mug', priceCents: 1499, physicalStock: 5 });
    expect(await readLive(path, { locale: 'es' })).to.include({ name: 'Taza', description: 'Una taza.' });
    const storefront = await t.http.get(`/api/v1/public/tenant/${tenant}/products/MUG`).query({ locale: 'es' }).expect(200);
    expect(storefront.body.data).to.include({ name: 'Taza', priceCents: 1499 });
  });
});
