import { expect } from 'chai';
import { createTenant, sharedTestApp, type TestApp } from '../helpers/test-app.js';
import { superadmin } from '../helpers/tokens.js';

describe('Input hygiene (#17)', () => {
  let t: TestApp;
  let tenant: string;
  const notes = () => t.http.get('/api/v1/data/hyg/note').set(superadmin(tenant));
  const postRaw = (path: string, text: string) =>
    t.http.post(path).set(superadmin(tenant)).set('Content-Type', 'application/json').send(text);

  before(async () => {
    t = await sharedTestApp();
    tenant = await createTenant(t, 'hyg');
    await t.http.post('/api/v1/metadata/schemas').set(superadmin(tenant)).send({
      namespace: 'hyg', name: 'note',
      schema: { type: 'object', properties: { text: { type: 'string' }, meta: { type: 'object' } } },
    }).expect(201);
    await t.http.post('/api/v1/data/cms/page').set(superadmin(tenant)).send({ title: 'Home', slug: 'home', status: 'published' }).expect(201);
  });

  describe('a NUL or a lone surrogate in a JSON body', () => {
    it('answers 400 validation_failed naming the string, and stores nothing', async () => {
      const res = await t.http.post('/api/v1/data/hyg/note').set(superadmin(tenant)).send({ text: 'a\u0000b' });
      expect(res.status, JSON.stringify(res.body)).to.equal(400);
      expect(res.body.data.code).to.equal('validation_failed');
      expect(res.body.data.errors).to.deep.include({ path: '/text', message: 'must not contain a NUL character or a lone surrogate' });
      expect((await notes()).body.data.items).to.have.length(0);
    });

    it('answers 400 for a lone surrogate in a nested value and in a key', async () => {
      const value = await postRaw('/api/v1/data/hyg/note', '{"meta":{"list":["ok","x\\ud800y"]}}');
      expect(value.status).to.equal(400);
      expect(value.body.data.errors.map((e: any) => e.path)).to.deep.equal(['/meta/list/1']);
      const lowAlone = await postRaw('/api/v1/data/hyg/note', '{"text":"\\udc00"}');
      expect(lowAlone.status).to.equal(400);
      const key = await postRaw('/api/v1/data/hyg/note', '{"meta":{"k\\u0000":1}}');
      expect(key.status).to.equal(400);
      expect(key.body.data.errors[0].path).to.equal('/meta/k\uFFFD');
      // A surrogate pair is a well-formed character and is kept.
      const pair = await postRaw('/api/v1/data/hyg/note', '{"text":"\\ud83d\\ude00"}');
      expect(pair.status, JSON.stringify(pair.body)).to.equal(201);
      expect(pair.body.data.item.text).to.equal('\u{1F600}');
    });

    it('answers 400 on a public form submission in the BFF envelope', async () => {
      const res = await t.http.post(`/api/v1/public/tenant/${tenant}/forms/contact/submit`).send({ name: 'x\u0000' });
      expect(res.status).to.equal(400);
      expect(res.body.error.code).to.equal('validation_failed');
      expect(res.body.error.details[0].path).to.equal('/name');
    });
  });

  describe('a NUL in a query value or path segment', () => {
    it('answers 400 validation_failed naming the query parameter (resolve-host, filters)', async () => {
      const host = await t.http.get('/api/v1/public/resolve-host?host=a%00b');
      expect(host.status).to.equal(400);
      expect(host.body.error.code).to.equal('validation_failed');
      expect(host.body.error.details).to.deep.equal([{ path: 'query/host', message: 'must not contain a NUL character or a lone surrogate' }]);
      const filter = await t.http.get('/api/v1/data/hyg/note?filter[text]=a%00').set(superadmin(tenant));
      expect(filter.status).to.equal(400);
      expect(filter.body.data.errors[0].path).to.equal('query/filter[text]');
    });

    it('answers 400 invalid_identifier for a namespace, schema or content type', async () => {
      const ns = await t.http.get('/api/v1/data/hy%00g/note').set(superadmin(tenant));
      expect(ns.status).to.equal(400);
      expect(ns.body.data.code).to.equal('invalid_identifier');
      const schema = await t.http.post('/api/v1/data/hyg/no%00te').set(superadmin(tenant)).send({ text: 'x' });
      expect(schema.body.data.code).to.equal('invalid_identifier');
      const query = await t.http.get('/api/v1/metadata/schemas?namespace=hy%00g').set(superadmin(tenant));
      expect(query.status).to.equal(400);
      expect(query.body.data.code).to.equal('invalid_identifier');
      const content = await t.http.get(`/api/v1/public/tenant/${tenant}/content/pa%00ge`);
      expect(content.status).to.equal(400);
      expect(content.body.error.code).to.equal('invalid_identifier');
    });

    it('answers 400 validation_failed for another path segment (a record id)', async () => {
      const res = await t.http.get('/api/v1/data/hyg/note/ab%00cd').set(superadmin(tenant));
      expect(res.status).to.equal(400);
      expect(res.body.data.errors).to.deep.equal([{ path: 'path/id', message: 'must not contain a NUL character or a lone surrogate' }]);
    });
  });

  describe('deeply nested JSON', () => {
    it('answers 400 invalid_json past 64 levels (5,000 levels included) and takes 64', async () => {
      const nest = (levels: number) => '{"meta":' + '{"a":'.repeat(levels - 1) + '1' + '}'.repeat(levels);
      for (const levels of [65, 5000]) {
        const res = await postRaw('/api/v1/data/hyg/note', nest(levels));
        expect(res.status, `${levels} levels`).to.equal(400);
        expect(res.body.data.code).to.equal('invalid_json');
      }
      const deepArray = await postRaw('/api/v1/data/hyg/note', '{"meta":{"a":' + '['.repeat(5000) + ']'.repeat(5000) + '}}');
      expect(deepArray.status).to.equal(400);
      expect(deepArray.body.data.code).to.equal('invalid_json');
      // Brackets inside strings do not count.
      const inString = await t.http.post('/api/v1/data/hyg/note').set(superadmin(tenant)).send({ text: '{['.repeat(200) });
      expect(inString.status).to.equal(201);
      const ok = await postRaw('/api/v1/data/hyg/note', nest(64));
      expect(ok.status, JSON.stringify(ok.body)).to.equal(201);
    });
  });
});
