import { expect } from 'chai';
import { mcpClient } from '../../helpers/mcp-client.js';
import { createTenant, sharedTestApp, type TestApp } from '../../helpers/test-app.js';
import { as } from '../../helpers/tokens.js';

type Json = Record<string, any>;

/**
 * Previews (CONTRACT.md 17.3): a token shows a release's (or some records') drafts on the public runtime, the
 * storefront and the public MCP, never anything else, with Cache-Control: no-store.
 */
describe('previews: POST /previews and ?preview= on the public runtime, storefront and public MCP', function () {
  this.timeout(30_000);
  let t: TestApp;
  let tenant: string;
  const editor = () => as(tenant, 'editor');
  const pub = (path: string) => `/api/v1/public/tenant/${tenant}${path}`;
  const page = (slug: string, extra: Json = {}) => t.http.get(pub('/content/page')).query({ slug, ...extra });

  /** A release with a page's new content, a draft-only post and a product's new price; a page draft outside it. */
  const campaign = async () => {
    const home = (await t.http.post('/api/v1/data/cms/page').set(editor()).send({ title: 'Home', slug: 'home', status: 'published', content: 'Welcome.' }).expect(201)).body.data.item;
    const about = (await t.http.post('/api/v1/data/cms/page').set(editor()).send({ title: 'About', slug: 'about', status: 'published', content: 'Us.' }).expect(201)).body.data.item;
    await t.http.put(`/api/v1/data/cms/page/${home.id}/draft`).set(editor()).send({ content: 'Winter sale.' }).expect(200);
    await t.http.put(`/api/v1/data/cms/page/${about.id}/draft`).set(editor()).send({ content: 'Not in the release.' }).expect(200);
    const post = (await t.http.post('/api/v1/data/cms/post?draft=true').set(editor()).send({ title: 'Sale post', slug: 'sale', status: 'published' }).expect(201)).body.data.item;
    const product = (await t.http.post('/api/v1/erp/products').set(editor()).send({ sku: 'MUG', name: 'Mug', priceCents: 1999, physicalStock: 5 }).expect(201)).body.data;
    await t.http.put(`/api/v1/data/erp/product/${product.id}/draft`).set(editor()).send({ priceCents: 1499 }).expect(200);
    const release = (await t.http.post('/api/v1/releases').set(editor()).send({ name: 'Winter' }).expect(201)).body.data;
    for (const [namespace, schema, id] of [['cms', 'page', home.id], ['cms', 'post', post.id], ['erp', 'product', product.id]]) {
      await t.http.post(`/api/v1/releases/${release.id}/items`).set(editor()).send({ namespace, schema, id }).expect(200);
    }
    return { home, about, post, product, release };
  };
  const preview = async (body: Json): Promise<Json> => {
    const res = await t.http.post('/api/v1/previews').set(editor()).send(body);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body.data;
  };

  before(async () => {
    t = await sharedTestApp();
  });

  beforeEach(async () => {
    tenant = await createTenant(t, 'pv', 'pro');
  });

  it('shows the release\'s drafts with no-store, and nothing outside it; without the token the live site, its caches untouched', async () => {
    const { release } = await campaign();
    const liveProduct = await t.http.get(pub('/products/MUG')).expect(200);
    const { token, expiresAt, id } = await preview({ releaseId: release.id });
    expect(token).to.match(/^[A-Za-z0-9_-]{43}$/);
    expect(id).to.be.a('string');
    expect(Date.parse(expiresAt) - Date.now()).to.be.closeTo(60 * 60_000, 60_000);

    const shown = await page('home', { preview: token }).expect(200);
    expect(shown.headers['cache-control']).to.equal('no-store');
    expect(shown.headers.etag).to.equal(undefined);
    expect(shown.body.data.items.map((p: Json) => p.content)).to.deep.equal(['Winter sale.']);
    const byHeader = await page('home').set('X-Preview-Token', token).expect(200);
    expect(byHeader.body.data.items.map((p: Json) => p.content)).to.deep.equal(['Winter sale.']);
    expect((await page('about', { preview: token }).expect(200)).body.data.items.map((p: Json) => p.content)).to.deep.equal(['Us.']);
    const posts = await t.http.get(pub('/content/post')).query({ preview: token }).expect(200);
    expect(posts.body.data.items.map((p: Json) => p.title)).to.deep.equal(['Sale post']);
    const product = await t.http.get(pub('/products/MUG')).query({ preview: token }).expect(200);
    expect(product.body.data.priceCents).to.equal(1499);
    expect(product.headers['cache-control']).to.equal('no-store');
    const list = await t.http.get(pub('/products')).set('X-Preview-Token', token).expect(200);
    expect(list.body.data.items.map((p: Json) => p.priceCents)).to.deep.equal([1499]);
    // Knowledge search ignores previews.
    expect((await t.http.get(pub('/knowledge')).query({ q: 'winter', preview: token }).expect(200)).body.data.items).to.deep.equal([]);

    // Without the token: the live site, and the storefront's kept answer as before.
    expect((await page('home').expect(200)).body.data.items.map((p: Json) => p.content)).to.deep.equal(['Welcome.']);
    expect((await t.http.get(pub('/content/post')).expect(200)).body.data.items).to.deep.equal([]);
    const again = await t.http.get(pub('/products/MUG')).expect(200);
    expect(again.body.data.priceCents).to.equal(1999);
    expect(again.headers.etag).to.equal(liveProduct.headers.etag);
  });

  it('shows the drafts on the public MCP with the token', async () => {
    const { release } = await campaign();
    const { token } = await preview({ releaseId: release.id });
    const read = async (headers: Record<string, string>) => {
      const client = await mcpClient(t, `/api/v1/public/tenant/${tenant}/mcp`, headers);
      try {
        const result = await client.callTool({ name: 'get_content', arguments: { contentType: 'page', slug: 'home' } });
        return JSON.stringify(result.structuredContent ?? result.content);
      } finally {
        await client.close();
      }
    };
    expect(await read({ 'X-Preview-Token': token })).to.include('Winter sale.');
    expect(await read({})).to.include('Welcome.').and.not.include('Winter sale.');
  });

  it('a preview of some items shows those alone', async () => {
    const { about } = await campaign();
    const { token } = await preview({ items: [{ namespace: 'cms', schema: 'page', id: about.id }] });
    expect((await page('about', { preview: token }).expect(200)).body.data.items.map((p: Json) => p.content)).to.deep.equal(['Not in the release.']);
    expect((await page('home', { preview: token }).expect(200)).body.data.items.map((p: Json) => p.content)).to.deep.equal(['Welcome.']);
    expect((await t.http.get(pub('/products/MUG')).query({ preview: token }).expect(200)).body.data.priceCents).to.equal(1999);
  });

  it('answers 404 for an unknown, revoked or expired token and for another tenant\'s', async () => {
    const { release } = await campaign();
    const expectGone = async (res: { status: number; body: Json }) => {
      expect(res.status).to.equal(404);
      expect(res.body.error.code).to.equal('not_found');
    };
    await expectGone(await page('home', { preview: 'no-such-token' }));
    const other = await createTenant(t, 'pv', 'pro');
    const { token, id } = await preview({ releaseId: release.id });
    await expectGone(await t.http.get(`/api/v1/public/tenant/${other}/content/page`).query({ preview: token }));
    await expectGone(await t.http.get(`/api/v1/public/tenant/${other}/products/MUG`).set('X-Preview-Token', token));
    await t.http.delete(`/api/v1/previews/${id}`).set(editor()).expect(200);
    await expectGone(await page('home', { preview: token }));
    expect((await t.http.delete(`/api/v1/previews/${id}`).set(editor())).status).to.equal(404);

    const short = await preview({ releaseId: release.id, expiresInMinutes: 0.05 });
    expect((await page('home', { preview: short.token })).status).to.equal(200);
    await new Promise((r) => setTimeout(r, 3200));
    await expectGone(await page('home', { preview: short.token }));
  });

  it('answers 400 for a body that names neither or both, or a lifetime out of range; a viewer may not create one', async () => {
    const { release, home } = await campaign();
    for (const body of [{}, { releaseId: release.id, items: [{ namespace: 'cms', schema: 'page', id: home.id }] }, { releaseId: release.id, expiresInMinutes: 0.01 }, { releaseId: release.id, expiresInMinutes: 10081 }]) {
      const res = await t.http.post('/api/v1/previews').set(editor()).send(body);
      expect(res.status, JSON.stringify(body)).to.equal(400);
    }
    expect((await t.http.post('/api/v1/previews').set(as(tenant, 'viewer')).send({ releaseId: release.id })).status).to.equal(403);
    expect((await t.http.post('/api/v1/previews').set(editor()).send({ releaseId: '0190aaaa-0000-7000-8000-000000000000' })).status).to.equal(404);
  });
});
