import { expect } from 'chai';
import { createTenant, sharedTestApp, type TestApp } from '../helpers/test-app.js';
import { as } from '../helpers/tokens.js';

const PAGES = '/api/v1/data/cms/page';

/** Localised fields through the data API (CONTRACT.md 17.2), on cms.page (title, content, seo) and tenant schemas. */
describe('Locales: localised fields of /data (CONTRACT.md 17.2)', () => {
  let t: TestApp;
  let tenant: string;

  before(async () => {
    t = await sharedTestApp();
  });

  beforeEach(async () => {
    tenant = await createTenant(t, 'loc', 'pro');
    const res = await t.http.patch(`/api/v1/tenants/${tenant}/site-config`).set(as(tenant, 'admin')).send({ defaultLocale: 'en', locales: ['en', 'es', 'de'] });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
  });

  const createPage = async (body: Record<string, unknown>, query: Record<string, string> = {}) => {
    const res = await t.http.post(PAGES).query(query).set(as(tenant, 'editor')).send(body);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body.data.item as Record<string, any>;
  };
  const patchPage = (id: string, body: Record<string, unknown>, query: Record<string, string> = {}) =>
    t.http.patch(`${PAGES}/${id}`).query(query).set(as(tenant, 'editor')).send(body);
  const getPage = (id: string, query: Record<string, string> = {}) => t.http.get(`${PAGES}/${id}`).query(query).set(as(tenant, 'viewer'));
  const listPages = (query: Record<string, string> = {}) => t.http.get(PAGES).query(query).set(as(tenant, 'viewer'));

  describe('PATCH /api/v1/tenants/{id}/site-config', () => {
    it('answers 400 validation_failed at /defaultLocale when the default locale is not one of locales', async () => {
      const res = await t.http.patch(`/api/v1/tenants/${tenant}/site-config`).set(as(tenant, 'admin')).send({ defaultLocale: 'fr' });
      expect(res.status).to.equal(400);
      expect(res.body.error.code).to.equal('validation_failed');
      expect(res.body.error.details).to.deep.include({ path: '/defaultLocale', message: 'must be one of locales (en, es, de)' });
      const kept = await t.http.get(`/api/v1/tenants/${tenant}/site-config`).set(as(tenant, 'viewer'));
      expect(kept.body.data).to.include({ defaultLocale: 'en' });
    });
  });

  describe('writes and reads with ?locale=', () => {
    it('keeps the default locale\'s values in plain reads and sets another locale\'s with ?locale=es', async () => {
      const page = await createPage({ title: 'Hello', content: 'English text', seo: { title: 'Hello SEO', description: 'About' } });
      const es = await patchPage(page.id, { title: 'Hola', seo: { title: 'Hola SEO' }, status: 'archived' }, { locale: 'es' });
      expect(es.status, JSON.stringify(es.body)).to.equal(200);
      // The write answers in its locale; the other fields changed as usual.
      expect(es.body.data.item).to.include({ title: 'Hola', content: 'English text', status: 'archived' });
      expect(es.body.data.item).to.not.have.property('$locales');

      const plain = await getPage(page.id);
      expect(plain.body.data.item).to.include({ title: 'Hello', content: 'English text', status: 'archived' });
      expect(plain.body.data.item.seo).to.deep.equal({ title: 'Hello SEO', description: 'About' });
      expect(plain.body.data.item).to.not.have.property('$locales');

      const spanish = await getPage(page.id, { locale: 'es' });
      expect(spanish.body.data.item).to.include({ title: 'Hola', content: 'English text' });
      expect(spanish.body.data.item.seo).to.deep.equal({ title: 'Hola SEO' });

      const strict = await getPage(page.id, { locale: 'es', fallback: 'false' });
      expect(strict.body.data.item).to.include({ title: 'Hola', content: null });
      const german = await getPage(page.id, { locale: 'de', fallback: 'false' });
      expect(german.body.data.item).to.include({ title: null, content: null, seo: null, slug: page.slug });

      const all = await getPage(page.id, { locale: '*' });
      expect(all.body.data.item.title).to.deep.equal({ en: 'Hello', es: 'Hola', de: null });
      expect(all.body.data.item.content).to.deep.equal({ en: 'English text', es: null, de: null });
      expect(all.body.data.item.slug).to.equal(page.slug);

      // ?locale= of the default locale is a plain read.
      expect((await getPage(page.id, { locale: 'en' })).body.data.item).to.deep.equal(plain.body.data.item);
    });

    it('lists in a locale with fallback, and without a locale as before (default values, plain strings)', async () => {
      const a = await createPage({ title: 'Apple' });
      const b = await createPage({ title: 'Banana' });
      expect((await patchPage(a.id, { title: 'Manzana' }, { locale: 'es' })).status).to.equal(200);
      const plain = await listPages({ sort: 'title' });
      expect(plain.body.data.items.map((p: any) => p.title)).to.deep.equal(['Apple', 'Banana']);
      expect(plain.body.data.items[0]).to.not.have.property('$locales');
      const es = await listPages({ sort: 'title', locale: 'es' });
      expect(es.body.data.items.map((p: any) => p.title)).to.deep.equal(['Manzana', 'Banana']);
      const strict = await listPages({ sort: 'title', locale: 'es', fallback: 'false', fields: 'title' });
      expect(strict.body.data.items).to.deep.equal([{ id: a.id, title: 'Manzana' }, { id: b.id, title: null }]);
      const all = await listPages({ sort: 'title', locale: '*', fields: 'title' });
      expect(all.body.data.items[0].title).to.deep.equal({ en: 'Apple', es: 'Manzana', de: null });
      // Filters and sorts use the default locale's values, whatever the locale read.
      const filtered = await listPages({ 'filter[title]': 'Apple', locale: 'es' });
      expect(filtered.body.data.items.map((p: any) => p.id)).to.deep.equal([a.id]);
      expect((await listPages({ 'filter[title]': 'Manzana' })).body.data.items).to.have.length(0);
    });

    it('lists each record in a locale as its own read answers it, whatever its text holds (quotes, braces, "$locales" in values)', async () => {
      const tricky = await createPage({ title: 'Say "{$locales}" \\ ok', content: '"$locales": {', seo: { title: 'Plain', description: '}' } });
      expect((await patchPage(tricky.id, { title: 'Sag "}" ü', seo: { title: 'Schlicht "," ' } }, { locale: 'de' })).status).to.equal(200);
      const plain = await createPage({ title: 'Only English' });
      const spanish = await createPage({ title: 'Inglés', content: 'Texto' });
      expect((await patchPage(spanish.id, { content: 'Texto es' }, { locale: 'es' })).status).to.equal(200);
      for (const query of [{} as Record<string, string>, { locale: 'de' }, { locale: 'de', fallback: 'false' }, { locale: 'es', fallback: 'false' }, { locale: 'es' }]) {
        const listed = await listPages({ ...query, sort: 'createdAt' });
        expect(listed.status, JSON.stringify(listed.body)).to.equal(200);
        const read = await Promise.all([tricky, plain, spanish].map(async (p) => (await getPage(p.id, query)).body.data.item));
        expect(listed.body.data.items, JSON.stringify(query)).to.deep.equal(read);
      }
      const german = (await listPages({ locale: 'de', fallback: 'false', sort: 'createdAt' })).body.data.items;
      expect(german[0]).to.include({ title: 'Sag "}" ü', content: null });
      expect(german[0].seo).to.deep.equal({ title: 'Schlicht "," ' });
      expect(german[1]).to.include({ title: null, slug: plain.slug });
      expect((await listPages({ sort: 'createdAt' })).body.data.items[0]).to.include({ title: 'Say "{$locales}" \\ ok', content: '"$locales": {' });
    });

    it('removes a locale\'s value with null (reads fall back again) and validates each locale\'s values', async () => {
      const page = await createPage({ title: 'Hello' });
      expect((await patchPage(page.id, { title: 'Hola' }, { locale: 'es' })).status).to.equal(200);
      const bad = await patchPage(page.id, { title: 'x'.repeat(301) }, { locale: 'es' });
      expect(bad.status).to.equal(400);
      expect(bad.body.data.code).to.equal('validation_failed');
      expect(bad.body.data.errors[0].path).to.equal('/title');
      expect(bad.body.data.errors[0].message).to.contain('locale es');
      const empty = await patchPage(page.id, { title: '' }, { locale: 'es' });
      expect(empty.status).to.equal(400);
      expect((await getPage(page.id, { locale: 'es' })).body.data.item.title).to.equal('Hola');
      expect((await patchPage(page.id, { title: null }, { locale: 'es' })).status).to.equal(200);
      expect((await getPage(page.id, { locale: 'es' })).body.data.item.title).to.equal('Hello');
      expect((await getPage(page.id, { locale: 'es', fallback: 'false' })).body.data.item.title).to.equal(null);
      // The default locale's value is required as before.
      expect((await patchPage(page.id, { title: null })).status).to.equal(400);
    });

    it('creates with ?locale=es: the values are that locale\'s and the record\'s first (default) values', async () => {
      const page = await createPage({ title: 'Hola', content: 'Texto' }, { locale: 'es' });
      expect(page).to.include({ title: 'Hola', content: 'Texto' });
      expect((await patchPage(page.id, { title: 'Hello' })).status).to.equal(200);
      expect((await getPage(page.id)).body.data.item.title).to.equal('Hello');
      expect((await getPage(page.id, { locale: 'es', fallback: 'false' })).body.data.item).to.include({ title: 'Hola', content: 'Texto' });
    });

    it('answers 400 validation_failed at /locale for a locale the tenant does not have, on every read and write', async () => {
      const page = await createPage({ title: 'Hello' });
      const answers = [
        await getPage(page.id, { locale: 'fr' }),
        await listPages({ locale: 'fr' }),
        await patchPage(page.id, { title: 'Bonjour' }, { locale: 'fr' }),
        await t.http.post(PAGES).query({ locale: 'fr' }).set(as(tenant, 'editor')).send({ title: 'Bonjour' }),
        await patchPage(page.id, { title: 'Alle' }, { locale: '*' }),
        await getPage(page.id, { locale: 'es', fallback: 'maybe' }),
      ];
      for (const res of answers) {
        expect(res.status, JSON.stringify(res.body)).to.equal(400);
        expect(res.body.data.code).to.equal('validation_failed');
      }
      expect(answers[0].body.data.errors[0].path).to.equal('/locale');
      expect(answers[5].body.data.errors[0].path).to.equal('/fallback');
      expect((await getPage(page.id)).body.data.item.title).to.equal('Hello');
      // A tenant without a site config has English alone.
      const other = await createTenant(t, 'loc');
      const res = await t.http.get(PAGES).query({ locale: 'es' }).set(as(other, 'viewer'));
      expect(res.status).to.equal(400);
      expect(res.body.data.errors[0].path).to.equal('/locale');
    });

    it('takes a locale added to the site config at once, and refuses one taken away', async () => {
      const page = await createPage({ title: 'Hello' });
      expect((await getPage(page.id, { locale: 'fr' })).status).to.equal(400);
      const site = (patch: Record<string, unknown>) => t.http.patch(`/api/v1/tenants/${tenant}/site-config`).set(as(tenant, 'admin')).send(patch);
      expect((await site({ locales: ['en', 'es', 'de', 'fr'] })).status).to.equal(200);
      expect((await patchPage(page.id, { title: 'Bonjour' }, { locale: 'fr' })).status).to.equal(200);
      expect((await getPage(page.id, { locale: 'fr' })).body.data.item.title).to.equal('Bonjour');
      expect((await site({ locales: ['en', 'es'] })).status).to.equal(200);
      expect((await getPage(page.id, { locale: 'fr' })).status).to.equal(400);
    });

    it('answers 400 at /$locales for a body that sets the stored translations itself', async () => {
      const res = await t.http.post(PAGES).set(as(tenant, 'editor')).send({ title: 'Hello', $locales: { es: { title: 'Hola' } } });
      expect(res.status).to.equal(400);
      expect(res.body.data.errors[0].path).to.equal('/$locales');
    });

    it('keeps every locale\'s values in revisions: a restore brings the translations back', async () => {
      const page = await createPage({ title: 'Hello' });
      await patchPage(page.id, { title: 'Hola' }, { locale: 'es' });
      await patchPage(page.id, { title: null }, { locale: 'es' });
      const restored = await t.http.post(`${PAGES}/${page.id}/revisions/2/restore`).set(as(tenant, 'editor'));
      expect(restored.status, JSON.stringify(restored.body)).to.equal(200);
      expect(restored.body.data.item).to.not.have.property('$locales');
      expect((await getPage(page.id, { locale: 'es', fallback: 'false' })).body.data.item.title).to.equal('Hola');
    });
  });

  describe('GET …/export and POST …/import', () => {
    it('exports the stored translations with each record, and an import into another tenant brings them back', async () => {
      const page = await createPage({ title: 'Hello', content: 'Text' });
      await patchPage(page.id, { title: 'Hola' }, { locale: 'es' });
      const exported = await t.http.get(`${PAGES}/export`).set(as(tenant, 'viewer')).buffer(true)
        .parse((res, done) => {
          let text = '';
          res.on('data', (c: Buffer) => { text += c.toString(); });
          res.on('end', () => done(null, text));
        }).expect(200);
      const line = JSON.parse((exported.body as string).trim());
      expect(line.$locales).to.deep.equal({ es: { title: 'Hola' } });
      const other = await createTenant(t, 'loc', 'pro');
      await t.http.patch(`/api/v1/tenants/${other}/site-config`).set(as(other, 'admin')).send({ locales: ['en', 'es'] }).expect(200);
      const imported = await t.http.post(`${PAGES}/import`).set(as(other, 'editor')).set('Content-Type', 'application/x-ndjson').send(exported.body as string);
      expect(imported.status, JSON.stringify(imported.body)).to.equal(200);
      // An import makes new records (new ids): found by the slug.
      const read = await t.http.get(PAGES).query({ 'filter[slug]': page.slug, locale: 'es' }).set(as(other, 'viewer'));
      expect(read.body.data.items[0]).to.include({ title: 'Hola', content: 'Text' });
      expect((await t.http.get(PAGES).query({ 'filter[slug]': page.slug }).set(as(other, 'viewer'))).body.data.items[0].title).to.equal('Hello');
    });
  });

  describe('POST /api/v1/metadata/schemas with workflow.locales', () => {
    it('localises a tenant schema\'s marked string and object-of-strings fields and shows workflow on the schema item', async () => {
      const res = await t.http.post('/api/v1/metadata/schemas').set(as(tenant, 'admin')).send({
        namespace: 'shop', name: 'banner', workflow: { locales: true },
        schema: {
          type: 'object', additionalProperties: false, required: ['headline'],
          properties: {
            headline: { type: 'string', minLength: 1, 'x-localized': true },
            cta: { type: 'object', additionalProperties: false, 'x-localized': true, properties: { label: { type: 'string' }, href: { type: 'string' } } },
            priority: { type: 'integer' },
          },
        },
      });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      expect(res.body.data.item.workflow).to.deep.equal({ locales: true });
      const created = await t.http.post('/api/v1/data/shop/banner').set(as(tenant, 'editor')).send({ headline: 'Sale', cta: { label: 'Buy' }, priority: 1 });
      const id = created.body.data.item.id;
      const es = await t.http.patch(`/api/v1/data/shop/banner/${id}`).query({ locale: 'de' }).set(as(tenant, 'editor')).send({ headline: 'Ausverkauf', cta: { label: 'Kaufen' }, priority: 2 });
      expect(es.status, JSON.stringify(es.body)).to.equal(200);
      const read = await t.http.get(`/api/v1/data/shop/banner/${id}`).query({ locale: '*' }).set(as(tenant, 'viewer'));
      expect(read.body.data.item).to.deep.include({ headline: { en: 'Sale', es: null, de: 'Ausverkauf' }, cta: { en: { label: 'Buy' }, es: null, de: { label: 'Kaufen' } }, priority: 2 });
      const pageSchema = await t.http.get('/api/v1/metadata/schemas/cms/page').set(as(tenant, 'viewer'));
      expect(pageSchema.body.data.item.workflow).to.deep.equal({ drafts: true, locales: true });
    });

    it('answers 400 for x-localized without workflow.locales, on a number, and for an unknown workflow option', async () => {
      const register = (body: Record<string, unknown>) => t.http.post('/api/v1/metadata/schemas').set(as(tenant, 'admin')).send({ namespace: 'shop', name: 'bad', ...body });
      const noWorkflow = await register({ schema: { type: 'object', properties: { a: { type: 'string', 'x-localized': true } } } });
      expect(noWorkflow.status).to.equal(400);
      expect(noWorkflow.body.data.code).to.equal('invalid_schema');
      const number = await register({ workflow: { locales: true }, schema: { type: 'object', properties: { a: { type: 'integer', 'x-localized': true } } } });
      expect(number.status).to.equal(400);
      expect(number.body.data.code).to.equal('invalid_schema');
      const unknown = await register({ workflow: { translate: true }, schema: { type: 'object', properties: {} } });
      expect(unknown.status).to.equal(400);
      expect(unknown.body.data.code).to.equal('validation_failed');
    });
  });
});
