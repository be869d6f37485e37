import { expect } from 'chai';
import { createTenant, sharedTestApp, type TestApp } from '../helpers/test-app.js';
import { as, bearer, signToken } from '../helpers/tokens.js';

type Json = Record<string, any>;

const postSchema = {
  namespace: 'rb', name: 'post',
  schema: {
    type: 'object', required: ['title', 'authorId'],
    properties: { title: { type: 'string' }, authorId: { type: 'string' }, status: { type: 'string' }, views: { type: 'integer' }, slug: { type: 'string' } },
  },
  unique: [['slug']],
};
const productSchema = {
  namespace: 'rb', name: 'product',
  schema: {
    type: 'object', required: ['name'],
    properties: { name: { type: 'string' }, priceCents: { type: 'integer' }, costCents: { type: 'integer' }, featuredPost: { type: 'string', 'x-ref': 'rb.post', 'x-on-delete': 'set_null' } },
  },
};

/** Custom roles and their policies (CONTRACT.md 16.1), through HTTP. */
describe('custom roles: /api/v1/tenants/:id/roles and their policies', () => {
  let t: TestApp;
  let tenant: string;
  const admin = () => as(tenant, 'admin', { sub: 'the-admin' });
  const roles = (name = '') => `/api/v1/tenants/${tenant}/roles${name ? `/${name}` : ''}`;
  const author = (sub: string) => bearer(signToken({ tenantId: tenant, roles: ['role:author'], sub, email: `${sub}@example.com` }));
  const createRole = async (body: Json) => {
    const res = await t.http.post(roles()).set(admin()).send(body);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body.data;
  };
  const tokenOf = async (role: string) => {
    const res = await t.http.post(`/api/v1/tenants/${tenant}/api-tokens`).set(admin()).send({ name: `token of ${role}`, role });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body.data;
  };
  const ownPosts = { resource: 'rb.post', actions: ['read', 'create', 'update', 'delete'], filter: { authorId: '$user.sub' } };
  const partner = { resource: 'rb.product', actions: ['read'], fields: { read: ['name', 'priceCents'] } };

  before(async () => {
    t = await sharedTestApp();
  });

  beforeEach(async () => {
    tenant = await createTenant(t, 'rb');
    await t.http.post('/api/v1/metadata/schemas').set(admin()).send(postSchema).expect(201);
    await t.http.post('/api/v1/metadata/schemas').set(admin()).send(productSchema).expect(201);
  });

  describe('the roles API', () => {
    it('POST answers 201; GET lists the built-in roles first, then the custom ones; GET one with its ETag', async () => {
      const created = await createRole({ name: 'author', description: 'Writes own posts', policies: [ownPosts] });
      expect(created).to.include({ name: 'author', description: 'Writes own posts', builtIn: false, version: 1 });
      expect(created.policies).to.deep.equal([ownPosts]);
      const list = (await t.http.get(roles()).set(admin()).expect(200)).body.data;
      expect(list.map((r: Json) => [r.name, r.builtIn])).to.deep.equal([['admin', true], ['editor', true], ['viewer', true], ['author', false]]);
      expect(list[0].policies).to.deep.equal([]);
      const one = await t.http.get(roles('author')).set(admin()).expect(200);
      expect(one.headers.etag).to.equal('"1"');
      expect(one.body.data).to.deep.equal(created);
      expect((await t.http.get(roles('nobody')).set(admin())).status).to.equal(404);
    });

    it('refuses reserved and malformed names (400) and a second role of one name (409)', async () => {
      for (const name of ['admin', 'viewer', 'superadmin', 'A', 'x', '1abc', 'a'.repeat(41)]) {
        const res = await t.http.post(roles()).set(admin()).send({ name, policies: [] });
        expect(res.status, name).to.equal(400);
        expect(res.body.error.code).to.equal('validation_failed');
      }
      await createRole({ name: 'twice', policies: [] });
      expect((await t.http.post(roles()).set(admin()).send({ name: 'twice', policies: [] })).status).to.equal(409);
    });

    it('checks policies against the tenant\'s schemas: 400 validation_failed naming the path', async () => {
      const cases: Array<[Json, string]> = [
        [{ resource: 'rb.nothing', actions: ['read'] }, '/policies/0/resource'],
        [{ resource: 'zz.*', actions: ['read'] }, '/policies/0/resource'],
        [{ resource: 'rb.post', actions: ['read'], filter: { nope: 'x' } }, '/policies/0/filter/nope'],
        [{ resource: 'rb.post', actions: ['read'], filter: { views: { near: 3 } } }, '/policies/0/filter/views/near'],
        [{ resource: 'rb.post', actions: ['read'], filter: { views: 'many' } }, '/policies/0/filter/views'],
        [{ resource: 'rb.post', actions: ['read'], filter: { views: { in: 3 } } }, '/policies/0/filter/views/in'],
        [{ resource: 'rb.*', actions: ['read'], filter: { title: 'x' } }, '/policies/0/filter'],
        [{ resource: 'rb.post', actions: ['read'], fields: { read: ['title', 'secret'] } }, '/policies/0/fields/read/1'],
        [{ resource: 'rb.post', actions: ['fly'] }, '/policies/0/actions/0'],
      ];
      for (const [policy, path] of cases) {
        const res = await t.http.post(roles()).set(admin()).send({ name: 'bad', policies: [policy] });
        expect(res.status, JSON.stringify(policy)).to.equal(400);
        expect(res.body.error.code).to.equal('validation_failed');
        expect(res.body.error.details.map((d: Json) => d.path), JSON.stringify(policy)).to.include(path);
      }
      // $user values stand for any single value, in `in` lists too.
      await createRole({ name: 'good', policies: [{ resource: 'rb.post', actions: ['read'], filter: { authorId: { in: ['$user.sub', '$user.email'] }, views: { gte: 1 } } }] });
    });

    it('a policy naming another tenant\'s schema is refused (400)', async () => {
      const other = await createTenant(t, 'rb-other');
      await t.http.post('/api/v1/metadata/schemas').set(as(other, 'admin')).send({ ...postSchema, namespace: 'only', name: 'theirs' }).expect(201);
      const res = await t.http.post(roles()).set(admin()).send({ name: 'snoop', policies: [{ resource: 'only.theirs', actions: ['read'] }] });
      expect(res.status).to.equal(400);
      expect(res.body.error.details[0].path).to.equal('/policies/0/resource');
    });

    it('PUT replaces with If-Match (412 when stale); DELETE removes; both land in the audit log', async () => {
      await createRole({ name: 'author', policies: [ownPosts] });
      const stale = await t.http.put(roles('author')).set(admin()).set('If-Match', '"7"').send({ policies: [] });
      expect(stale.status).to.equal(412);
      const put = await t.http.put(roles('author')).set(admin()).set('If-Match', '"1"').send({ description: 'None', policies: [] });
      expect(put.status, JSON.stringify(put.body)).to.equal(200);
      expect(put.body.data).to.include({ version: 2, description: 'None' });
      expect((await t.http.put(roles('viewer')).set(admin()).send({ policies: [] })).status).to.equal(400);
      await t.http.delete(roles('author')).set(admin()).expect(200);
      expect((await t.http.get(roles('author')).set(admin())).status).to.equal(404);
      const log = (await t.http.get(`/api/v1/tenants/${tenant}/audit-log?target=role/author`).set(admin()).expect(200)).body.data.items;
      expect(log.map((e: Json) => e.action)).to.deep.equal(['role.deleted', 'role.updated', 'role.created']);
      expect(log[0].actor).to.include({ type: 'user', id: 'the-admin' });
    });

    it('DELETE answers 409 while an unrevoked API token holds the role, and deletes it once revoked', async () => {
      await createRole({ name: 'partner', policies: [partner] });
      const token = await tokenOf('partner');
      const held = await t.http.delete(roles('partner')).set(admin());
      expect(held.status).to.equal(409);
      expect(held.body.error.code).to.equal('conflict');
      await t.http.delete(`/api/v1/tenants/${tenant}/api-tokens/${token.id}`).set(admin()).expect(200);
      await t.http.delete(roles('partner')).set(admin()).expect(200);
      const log = (await t.http.get(`/api/v1/tenants/${tenant}/audit-log?target=api_token/${token.id}`).set(admin()).expect(200)).body.data.items;
      expect(log.map((e: Json) => e.action)).to.deep.equal(['api_token.revoked', 'api_token.created']);
    });

    it('a custom role may not create roles or tokens, nor reach tenant administration or pack endpoints (403)', async () => {
      await createRole({ name: 'partner', policies: [{ resource: '*', actions: ['read', 'create', 'update', 'delete'] }] });
      const token = bearer((await tokenOf('partner')).token);
      const jwt = bearer(signToken({ tenantId: tenant, roles: ['role:partner'] }));
      for (const who of [token, jwt]) {
        expect((await t.http.post(roles()).set(who).send({ name: 'mine', policies: [] })).status).to.equal(403);
        expect((await t.http.get(roles()).set(who)).status).to.equal(403);
        expect((await t.http.post(`/api/v1/tenants/${tenant}/api-tokens`).set(who).send({ name: 'x', role: 'admin' })).status).to.equal(403);
        expect((await t.http.get(`/api/v1/tenants/${tenant}/audit-log`).set(who)).status).to.equal(403);
        expect((await t.http.get(`/api/v1/tenants/${tenant}/members`).set(who)).status).to.equal(403);
        expect((await t.http.post('/api/v1/metadata/schemas').set(who).send({ ...postSchema, name: 'mine' })).status).to.equal(403);
        // The data API it reaches.
        expect((await t.http.get('/api/v1/data/rb/post').set(who)).status).to.equal(200);
      }
    });
  });

  describe('holding a role', () => {
    it('a JWT naming role:<name> the tenant lacks grants nothing: 403 when it is its only role, never viewer', async () => {
      const unknown = bearer(signToken({ tenantId: tenant, roles: ['role:ghost'] }));
      const res = await t.http.get('/api/v1/data/rb/post').set(unknown);
      expect(res.status).to.equal(403);
      expect(res.body.data.code).to.equal('forbidden');
      // Beside a built-in role it is ignored.
      const withViewer = bearer(signToken({ tenantId: tenant, roles: ['viewer', 'role:ghost'] }));
      expect((await t.http.get('/api/v1/data/rb/post').set(withViewer)).status).to.equal(200);
    });

    it('an API token may hold a custom role; a token of an unknown role is refused at creation (400)', async () => {
      const bad = await t.http.post(`/api/v1/tenants/${tenant}/api-tokens`).set(admin()).send({ name: 'x', role: 'ghost' });
      expect(bad.status).to.equal(400);
      await createRole({ name: 'partner', policies: [partner] });
      const created = await tokenOf('partner');
      expect(created.role).to.equal('partner');
    });

    it('an invitation may carry a custom role; an unknown one is refused (400 at /role)', async () => {
      await createRole({ name: 'author', policies: [ownPosts] });
      const invited = await t.http.post(`/api/v1/tenants/${tenant}/invitations`).set(admin()).send({ email: 'writer@example.com', role: 'author' });
      expect(invited.status, JSON.stringify(invited.body)).to.equal(201);
      expect(invited.body.data.role).to.equal('author');
      const bad = await t.http.post(`/api/v1/tenants/${tenant}/invitations`).set(admin()).send({ email: 'w2@example.com', role: 'ghost' });
      expect(bad.status).to.equal(400);
      expect(bad.body.error.details[0].path).to.equal('/role');
      // The pending invitation holds the role.
      expect((await t.http.delete(roles('author')).set(admin())).status).to.equal(409);
      const log = (await t.http.get(`/api/v1/tenants/${tenant}/audit-log?action=member.invited`).set(admin()).expect(200)).body.data.items;
      expect(log).to.have.length(1);
      expect(log[0].target).to.equal(`invitation/${invited.body.data.id}`);
      // A role name of the longest kind (40 characters) fits a membership's and an invitation's role on both engines.
      const long = `a${'b'.repeat(39)}`;
      await createRole({ name: long, policies: [ownPosts] });
      const longInvite = await t.http.post(`/api/v1/tenants/${tenant}/invitations`).set(admin()).send({ email: 'long@example.com', role: long });
      expect(longInvite.status, JSON.stringify(longInvite.body)).to.equal(201);
      expect(longInvite.body.data.role).to.equal(long);
    });
  });

  describe('an editor of rb.post limited to their own posts', () => {
    beforeEach(async () => {
      await createRole({ name: 'author', policies: [ownPosts] });
      const editor = as(tenant, 'editor');
      for (const [title, authorId] of [['A1', 'ann'], ['A2', 'ann'], ['B1', 'bob']]) {
        await t.http.post('/api/v1/data/rb/post').set(editor).send({ title, authorId }).expect(201);
      }
    });

    it('lists and counts only their own posts, and reads another\'s as 404', async () => {
      const list = (await t.http.get('/api/v1/data/rb/post?sort=title').set(author('ann')).expect(200)).body.data;
      expect(list.items.map((p: Json) => p.title)).to.deep.equal(['A1', 'A2']);
      // A policy that narrows rows only shows each of them whole (its JSON as stored).
      expect(list.items[0]).to.include({ title: 'A1', authorId: 'ann', version: 1 }).and.to.have.keys('id', 'title', 'authorId', 'createdAt', 'updatedAt', 'version');
      expect(list.pagination.total).to.equal(2);
      const bobs = (await t.http.get('/api/v1/data/rb/post').set(author('bob')).expect(200)).body.data.items;
      expect(bobs.map((p: Json) => p.title)).to.deep.equal(['B1']);
      const read = await t.http.get(`/api/v1/data/rb/post/${bobs[0].id}`).set(author('ann'));
      expect(read.status).to.equal(404);
      expect(read.body.data.code).to.equal('not_found');
      expect((await t.http.get(`/api/v1/data/rb/post/${bobs[0].id}`).set(author('bob'))).status).to.equal(200);
      // Another schema, which no policy names, is absent.
      const product = await t.http.get('/api/v1/data/rb/product').set(author('ann'));
      expect(product.status).to.equal(404);
      expect(product.body.data.code).to.equal('schema_not_found');
    });

    it('creates with authorId filled from the policy; another author\'s id is 403', async () => {
      const created = await t.http.post('/api/v1/data/rb/post').set(author('ann')).send({ title: 'Mine' });
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      expect(created.body.data.item.authorId).to.equal('ann');
      const forged = await t.http.post('/api/v1/data/rb/post').set(author('ann')).send({ title: 'Theirs', authorId: 'bob' });
      expect(forged.status).to.equal(403);
      expect(forged.body.data.code).to.equal('forbidden');
      const total = (await t.http.get('/api/v1/data/rb/post').set(as(tenant, 'viewer')).expect(200)).body.data.pagination.total;
      expect(total).to.equal(4);
    });

    it('updates and deletes their own posts only; moving a post to another author is 403', async () => {
      const all = (await t.http.get('/api/v1/data/rb/post?sort=title').set(as(tenant, 'viewer')).expect(200)).body.data.items;
      const [a1, , b1] = all;
      await t.http.patch(`/api/v1/data/rb/post/${a1.id}`).set(author('ann')).send({ title: 'A1 edited' }).expect(200);
      expect((await t.http.patch(`/api/v1/data/rb/post/${b1.id}`).set(author('ann')).send({ title: 'no' })).status).to.equal(404);
      const moved = await t.http.patch(`/api/v1/data/rb/post/${a1.id}`).set(author('ann')).send({ authorId: 'bob' });
      expect(moved.status).to.equal(403);
      expect((await t.http.delete(`/api/v1/data/rb/post/${b1.id}`).set(author('ann'))).status).to.equal(404);
      await t.http.delete(`/api/v1/data/rb/post/${a1.id}`).set(author('ann')).expect(200);
      expect((await t.http.get(`/api/v1/data/rb/post/${b1.id}`).set(as(tenant, 'viewer'))).body.data.item.title).to.equal('B1');
    });

    it('a role change applies to the next requests (within 1 s)', async () => {
      expect((await t.http.get('/api/v1/data/rb/post').set(author('ann')).expect(200)).body.data.items).to.have.length(2);
      await t.http.put(roles('author')).set(admin()).send({ policies: [{ resource: 'rb.post', actions: ['read'] }] }).expect(200);
      expect((await t.http.get('/api/v1/data/rb/post').set(author('ann')).expect(200)).body.data.items).to.have.length(3);
      expect((await t.http.post('/api/v1/data/rb/post').set(author('ann')).send({ title: 'x', authorId: 'ann' })).status).to.equal(403);
    });
  });

  describe('bulk, import and export under a policy', () => {
    const text = (res: import('superagent').Response, callback: (err: Error | null, body: string) => void) => {
      const stream = res as unknown as NodeJS.ReadableStream;
      let body = '';
      stream.on('data', (c: Buffer) => { body += c.toString(); });
      stream.on('end', () => callback(null, body));
    };

    beforeEach(async () => {
      await createRole({ name: 'author', policies: [ownPosts] });
      await createRole({ name: 'partner', policies: [partner] });
      const editor = as(tenant, 'editor');
      await t.http.post('/api/v1/data/rb/post/bulk').set(editor).send({ items: [{ title: 'A1', authorId: 'ann' }, { title: 'B1', authorId: 'bob' }] }).expect(201);
      await t.http.post('/api/v1/data/rb/product').set(editor).send({ name: 'Mug', priceCents: 900, costCents: 300 }).expect(201);
    });

    it('bulk: one refused item refuses the whole call (403 naming /items/<i>), nothing written; allowed items fill authorId', async () => {
      const refused = await t.http.post('/api/v1/data/rb/post/bulk').set(author('ann')).send({ items: [{ title: 'ok' }, { title: 'no', authorId: 'bob' }] });
      expect(refused.status).to.equal(403);
      expect(refused.body.data.code).to.equal('forbidden');
      expect(refused.body.data.errors.map((d: Json) => d.path)).to.deep.equal(['/items/1']);
      expect((await t.http.get('/api/v1/data/rb/post').set(as(tenant, 'viewer')).expect(200)).body.data.pagination.total).to.equal(2);
      const ok = await t.http.post('/api/v1/data/rb/post/bulk').set(author('ann')).send({ items: [{ title: 'A2' }, { title: 'A3' }] });
      expect(ok.status, JSON.stringify(ok.body)).to.equal(201);
      expect(ok.body.data.items.map((p: Json) => p.authorId)).to.deep.equal(['ann', 'ann']);
    });

    it('import: a refused line is failed with code forbidden, the others written', async () => {
      const body = [{ title: 'I1', authorId: 'ann' }, { title: 'I2', authorId: 'bob' }].map((l) => JSON.stringify(l)).join('\n');
      const res = await t.http.post('/api/v1/data/rb/post/import').set(author('ann')).set('Content-Type', 'application/x-ndjson').send(body);
      expect(res.status, JSON.stringify(res.body)).to.be.within(200, 201);
      expect(res.body.data).to.include({ created: 1, failed: 1 });
      expect(res.body.data.errors).to.have.length(1);
      expect(res.body.data.errors[0]).to.include({ line: 2, code: 'forbidden' });
    });

    it('bulk upsert and import fill the fields the policy fixes on create, as a single create does; an update is not refilled', async () => {
      const editor = as(tenant, 'editor');
      await t.http.post('/api/v1/data/rb/post').set(editor).send({ title: 'Old', authorId: 'ann', slug: 'old' }).expect(201);
      const upserted = await t.http.post('/api/v1/data/rb/post/bulk?upsert=slug').set(author('ann'))
        .send({ items: [{ slug: 'old', title: 'Old, renamed' }, { slug: 'new', title: 'New' }] });
      expect(upserted.status, JSON.stringify(upserted.body)).to.equal(200);
      expect(upserted.body.data).to.include({ created: 1, updated: 1 });
      expect(upserted.body.data.items.map((p: Json) => [p.slug, p.title, p.authorId])).to.deep.equal([['old', 'Old, renamed', 'ann'], ['new', 'New', 'ann']]);
      // One item outside the policy (another author's record, or setting another author) refuses the whole call.
      await t.http.post('/api/v1/data/rb/post').set(editor).send({ title: 'Bob\'s', authorId: 'bob', slug: 'bobs' }).expect(201);
      const refused = await t.http.post('/api/v1/data/rb/post/bulk?upsert=slug').set(author('ann')).send({ items: [{ slug: 'x1', title: 'X' }, { slug: 'bobs', title: 'Mine now' }] });
      expect(refused.status).to.equal(403);
      expect(refused.body.data.errors.map((d: Json) => d.path)).to.deep.equal(['/items/1']);

      for (const [format, body] of [
        ['ndjson', [{ title: 'I1' }, { title: 'I2', authorId: 'ann' }].map((l) => JSON.stringify(l)).join('\n')],
        ['csv', 'title\nC1\nC2\n'],
      ]) {
        const res = await t.http.post(`/api/v1/data/rb/post/import?format=${format}`).set(author('ann')).set('Content-Type', format === 'csv' ? 'text/csv' : 'application/x-ndjson').send(body);
        expect(res.status, JSON.stringify(res.body)).to.be.within(200, 201);
        expect(res.body.data, `${format} ${JSON.stringify(res.body)}`).to.include({ created: 2, failed: 0 });
      }
      const upsertImport = await t.http.post('/api/v1/data/rb/post/import?upsert=slug').set(author('ann')).set('Content-Type', 'application/x-ndjson')
        .send([{ slug: 'u1', title: 'U1' }, { slug: 'new', title: 'New again' }].map((l) => JSON.stringify(l)).join('\n'));
      expect(upsertImport.body.data, JSON.stringify(upsertImport.body)).to.include({ created: 1, updated: 1, failed: 0 });
      const mine = (await t.http.get('/api/v1/data/rb/post?sort=title&limit=100').set(as(tenant, 'viewer')).expect(200)).body.data.items;
      expect(mine.filter((p: Json) => p.authorId === 'ann').map((p: Json) => p.title))
        .to.deep.equal(['A1', 'C1', 'C2', 'I1', 'I2', 'New again', 'Old, renamed', 'U1']);
    });

    it('export: only readable records and fields, the CSV header included', async () => {
      const nd = await t.http.get('/api/v1/data/rb/post/export').set(author('ann')).buffer(true).parse(text).expect(200);
      const lines = String(nd.body).trim().split('\n').map((l) => JSON.parse(l));
      expect(lines.map((l) => l.title)).to.deep.equal(['A1']);
      const csv = await t.http.get('/api/v1/data/rb/product/export?format=csv').set(bearer((await tokenOf('partner')).token)).buffer(true).parse(text).expect(200);
      const [header, row] = String(csv.body).trim().split('\n');
      expect(header).to.equal('id,name,priceCents,createdAt,updatedAt,version');
      // The row's cells: the name and price, never the cost (a substring test would trip on a timestamp's .300).
      const cells = row.split(',');
      expect(cells.slice(1, 3)).to.deep.equal(['Mug', '900']);
      expect(cells).to.have.length(6).and.not.include('300');
      expect((await t.http.get('/api/v1/data/rb/product/export?filter[costCents][gt]=1').set(bearer((await tokenOf('partner')).token))).status).to.equal(400);
    });
  });

  describe('a partner token reading rb.product without its cost', () => {
    let token: Record<string, string>;
    let productId: string;

    beforeEach(async () => {
      await createRole({ name: 'partner', policies: [partner] });
      token = bearer((await tokenOf('partner')).token);
      const post = await t.http.post('/api/v1/data/rb/post').set(as(tenant, 'editor')).send({ title: 'P', authorId: 'x' }).expect(201);
      const made = await t.http.post('/api/v1/data/rb/product').set(as(tenant, 'editor'))
        .send({ name: 'Mug', priceCents: 900, costCents: 300, featuredPost: post.body.data.item.id }).expect(201);
      productId = made.body.data.item.id;
    });

    it('lists and reads products without costCents', async () => {
      const list = (await t.http.get('/api/v1/data/rb/product').set(token).expect(200)).body.data;
      expect(list.items).to.have.length(1);
      expect(list.items[0]).to.have.keys(['id', 'name', 'priceCents', 'createdAt', 'updatedAt', 'version']);
      const one = (await t.http.get(`/api/v1/data/rb/product/${productId}`).set(token).expect(200)).body.data.item;
      expect(one).to.not.have.property('costCents');
      expect(one.name).to.equal('Mug');
    });

    it('a filter, sort, fields or expand on a field it never reads is 400 invalid_filter', async () => {
      for (const query of ['filter[costCents][gt]=1', 'sort=costCents', 'fields=name,costCents', 'expand=featuredPost']) {
        const res = await t.http.get(`/api/v1/data/rb/product?${query}`).set(token);
        expect(res.status, query).to.equal(400);
        expect(res.body.data.code, query).to.equal('invalid_filter');
      }
      expect((await t.http.get('/api/v1/data/rb/product?filter[priceCents][gt]=1&sort=-name&fields=name').set(token)).status).to.equal(200);
    });

    it('may not write (403), and sees only rb.product with its readable properties in /metadata/schemas', async () => {
      const write = await t.http.patch(`/api/v1/data/rb/product/${productId}`).set(token).send({ name: 'Cup' });
      expect(write.status).to.equal(403);
      expect(write.body.data.code).to.equal('forbidden');
      const schemas = (await t.http.get('/api/v1/metadata/schemas').set(token).expect(200)).body.data.items;
      expect(schemas.map((s: Json) => `${s.namespace}.${s.name}`)).to.deep.equal(['rb.product']);
      expect(Object.keys(schemas[0].schema.properties)).to.deep.equal(['name', 'priceCents']);
      const post = await t.http.get('/api/v1/metadata/schemas/rb/post').set(token);
      expect(post.status).to.equal(404);
      expect(post.body.data.code).to.equal('schema_not_found');
      expect((await t.http.get('/api/v1/data/rb/post').set(token)).status).to.equal(404);
    });
  });

  it('fields.write: a field outside it is 403 naming the path; the answer and the revisions show readable fields only', async () => {
    await createRole({ name: 'pricer', policies: [{ resource: 'rb.product', actions: ['read', 'update'], fields: { read: ['name', 'priceCents'], write: ['priceCents'] } }] });
    const pricer = bearer(signToken({ tenantId: tenant, roles: ['role:pricer'], sub: 'pricer' }));
    const made = (await t.http.post('/api/v1/data/rb/product').set(as(tenant, 'editor')).send({ name: 'Mug', priceCents: 900, costCents: 300 }).expect(201)).body.data.item;
    const renamed = await t.http.patch(`/api/v1/data/rb/product/${made.id}`).set(pricer).send({ name: 'Cup' });
    expect(renamed.status).to.equal(403);
    expect(renamed.body.data.code).to.equal('forbidden');
    expect(renamed.body.data.errors[0].path).to.equal('/name');
    const priced = await t.http.patch(`/api/v1/data/rb/product/${made.id}`).set(pricer).send({ priceCents: 950 });
    expect(priced.status, JSON.stringify(priced.body)).to.equal(200);
    expect(priced.body.data.item).to.include({ priceCents: 950, version: 2 }).and.not.have.property('costCents');
    const revisions = (await t.http.get(`/api/v1/data/rb/product/${made.id}/revisions`).set(pricer).expect(200)).body.data.items;
    expect(revisions.map((r: Json) => r.version)).to.deep.equal([2, 1]);
    for (const r of revisions) expect(r.data).to.not.have.property('costCents');
    expect((await t.http.get(`/api/v1/data/rb/product/${made.id}`).set(as(tenant, 'viewer')).expect(200)).body.data.item.costCents).to.equal(300);
  });

  it('an expansion shows per record: one the role may read narrowed to its readable fields, one it may not read null', async () => {
    await createRole({
      name: 'shop', policies: [
        { resource: 'rb.product', actions: ['read'] },
        { resource: 'rb.post', actions: ['read'], filter: { status: 'published' }, fields: { read: ['title'] } },
        { resource: 'rb.post', actions: ['read'], filter: { status: 'featured' }, fields: { read: ['title', 'views'] } },
      ],
    });
    const editor = as(tenant, 'editor');
    const post = async (title: string, status: string) => (await t.http.post('/api/v1/data/rb/post').set(editor)
      .send({ title, authorId: 'x', status, views: 7 }).expect(201)).body.data.item;
    const draft = await post('D', 'draft');
    const published = await post('P', 'published');
    const featured = await post('F', 'featured');
    for (const [name, ref] of [['A draft', draft], ['B published', published], ['C featured', featured]]) {
      await t.http.post('/api/v1/data/rb/product').set(editor).send({ name, featuredPost: ref.id }).expect(201);
    }
    const shop = bearer(signToken({ tenantId: tenant, roles: ['role:shop'] }));
    const list = (await t.http.get('/api/v1/data/rb/product?expand=featuredPost&sort=name').set(shop).expect(200)).body.data.items;
    expect(list.map((p: Json) => p.featuredPost)).to.deep.equal([
      null,
      { id: published.id, title: 'P', createdAt: published.createdAt, updatedAt: published.updatedAt, version: 1 },
      { id: featured.id, title: 'F', views: 7, createdAt: featured.createdAt, updatedAt: featured.updatedAt, version: 1 },
    ]);
    // A read by id expands the same way.
    const one = (await t.http.get(`/api/v1/data/rb/product/${list[1].id}?expand=featuredPost`).set(shop).expect(200)).body.data.item;
    expect(one.featuredPost).to.deep.equal(list[1].featuredPost);
    const hidden = (await t.http.get(`/api/v1/data/rb/product/${list[0].id}?expand=featuredPost`).set(shop).expect(200)).body.data.item;
    expect(hidden.featuredPost).to.equal(null);
    // An editor sees every referenced record whole.
    const full = (await t.http.get('/api/v1/data/rb/product?expand=featuredPost&sort=name').set(editor).expect(200)).body.data.items;
    expect(full.map((p: Json) => [p.featuredPost.title, p.featuredPost.status])).to.deep.equal([['D', 'draft'], ['P', 'published'], ['F', 'featured']]);
  });
});
