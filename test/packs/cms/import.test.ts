import { expect } from 'chai';
import type { HttpReceiver } from '../../helpers/http-receiver.js';
import { createTenant, sharedTestApp, type TestApp } from '../../helpers/test-app.js';
import { as } from '../../helpers/tokens.js';
import { fetchedPaths, FOOTER_WORD, startTestSite, testSitePages, useSiteFixture } from './test-site.js';

describe('POST /api/v1/cms/import-url', () => {
  let t: TestApp;
  let tenant: string;
  let site: HttpReceiver;

  before(async () => {
    t = await sharedTestApp();
  });

  beforeEach(async () => {
    tenant = await createTenant(t, 'imp');
    site = await startTestSite();
  });

  afterEach(async () => {
    await site.stop();
  });

  const importUrl = (body: Record<string, unknown>, role: 'admin' | 'editor' | 'viewer' = 'editor') =>
    t.http.post('/api/v1/cms/import-url').set(as(tenant, role)).send({ url: `${site.url}/`, ...body });
  const pages = async () => (await t.http.get('/api/v1/cms/pages').query({ limit: 100, sort: 'sourceUrl' }).set(as(tenant, 'viewer'))).body.data;
  const search = async (q: string) => (await t.http.get(`/api/v1/public/tenant/${tenant}/knowledge`).query({ q })).body.data.items;
  const siteConfig = async () => (await t.http.get(`/api/v1/tenants/${tenant}/site-config`).set(as(tenant, 'admin'))).body.data;
  const branding = async () => (await t.http.get(`/api/v1/tenants/${tenant}/branding`).set(as(tenant, 'admin'))).body.data;

  it('dry_run returns the plan and writes nothing', async () => {
    const res = await importUrl({ depth: 2, dry_run: true, apply_navigation: true, apply_branding: true, publish: true });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const data = res.body.data;
    expect(data.dryRun).to.equal(true);
    expect(data.pages.map((p: any) => p.action)).to.deep.equal(['create', 'create', 'create', 'create']);
    expect(data.pages.every((p: any) => p.id === null)).to.equal(true);
    expect(data.navigation.map((n: any) => n.label)).to.deep.equal(['Home', 'About us', 'Blog', 'Members']);
    expect((await pages()).pagination.total).to.equal(0);
    expect((await siteConfig()).navigation).to.deep.equal([]);
    expect(await branding()).to.deep.equal({});
    expect(await search('Yirgacheffe')).to.have.length(0);
  });

  it('creates drafts with clean content, respects robots.txt and fetches each page once', async () => {
    const res = await importUrl({ depth: 2 });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const data = res.body.data;
    expect(data.pages.map((p: any) => [new URL(p.url).pathname, p.slug, p.action, p.status])).to.deep.equal([
      ['/', 'home', 'create', 'draft'],
      ['/about', 'about', 'create', 'draft'],
      ['/blog', 'blog', 'create', 'draft'],
      ['/blog/first-post', 'blog-first-post', 'create', 'draft'],
    ]);
    expect(data.excluded).to.deep.include({ url: `${site.url}/private`, reason: 'robots_txt' });
    expect(data.ai).to.equal('off');
    const paths = fetchedPaths(site);
    expect(paths).to.not.include('/private');
    expect(paths).to.not.include('/imprint.pdf');
    expect(paths.filter((p) => p.startsWith('/about'))).to.have.length(1);

    const stored = (await pages()).items;
    expect(stored).to.have.length(4);
    const home = stored.find((p: any) => p.slug === 'home');
    expect(home.content).to.contain('single-origin coffee beans').and.contain('## Our beans');
    expect(home.content).to.not.contain(FOOTER_WORD).and.not.contain('About us');
    expect(home.seo).to.deep.equal({ title: 'Acme Roasters', description: 'Fresh coffee roasted daily in Lisbon.' });
    expect(stored.every((p: any) => p.status === 'draft' && !p.content.includes(FOOTER_WORD))).to.equal(true);

    // Drafts reach neither the public runtime nor the knowledge search.
    const pub = await t.http.get(`/api/v1/public/tenant/${tenant}/content/page`);
    expect(pub.body.data.items).to.have.length(0);
    expect(await search('Yirgacheffe')).to.have.length(0);
  });

  it('updates on re-import instead of duplicating, and skips unchanged pages', async () => {
    const first = await importUrl({ depth: 2 });
    const ids = first.body.data.pages.map((p: any) => p.id);
    const again = await importUrl({ depth: 2 });
    expect(again.body.data.pages.map((p: any) => p.action)).to.deep.equal(['skip', 'skip', 'skip', 'skip']);
    expect(again.body.data.pages.map((p: any) => p.id)).to.deep.equal(ids);

    site.serve(testSitePages({ '/about': testSitePages()['/about']!.toString().replace('founded in 2015', 'founded in 2016') }));
    const changed = await importUrl({ depth: 2 });
    expect(changed.body.data.pages.map((p: any) => p.action)).to.deep.equal(['skip', 'update', 'skip', 'skip']);
    expect(changed.body.data.stats).to.include({ created: 0, updated: 1, skipped: 3 });
    const stored = await pages();
    expect(stored.pagination.total).to.equal(4);
    expect(stored.items.find((p: any) => p.slug === 'about').content).to.contain('founded in 2016');
  });

  it('writes the new pages together through the bulk path, with free slugs, a fixed number of statements for the lookups', async () => {
    const site40: Record<string, string> = {
      '/': `<html><head><title>Index</title></head><body><main><p>Many.</p>${Array.from({ length: 40 }, (_, i) => `<a href="/p${i % 20}${i >= 20 ? '.html' : ''}">P${i}</a>`).join(' ')}</main></body></html>`,
    };
    // /p3 and /p3.html both ask for the slug p3; a stored page holds p5 already.
    for (let i = 0; i < 20; i++) {
      site40[`/p${i}`] = `<html><head><title>P${i}</title></head><body><p>Page ${i}.</p></body></html>`;
      site40[`/p${i}.html`] = `<html><head><title>P${i} again</title></head><body><p>Page ${i}, again.</p></body></html>`;
    }
    site.serve(site40);
    await t.http.post(`/api/v1/tenant/${tenant}/content/page`).set(as(tenant, 'editor')).send({ title: 'Mine', slug: 'p5', content: 'x' }).expect(201);
    const res = await importUrl({ depth: 1 });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.data.stats).to.include({ created: 41, updated: 0, skipped: 0 });
    const bySource = new Map<string, string>(res.body.data.pages.map((p: any) => [new URL(p.url).pathname, p.slug]));
    expect(bySource.get('/p3')).to.equal('p3');
    expect(bySource.get('/p3.html')).to.equal('p3-2');
    expect(bySource.get('/p5')).to.equal('p5-2');
    expect(bySource.get('/p5.html')).to.equal('p5-3');
    expect(new Set(bySource.values()).size).to.equal(41);
    const stored = await pages();
    expect(stored.pagination.total).to.equal(42);
    for (const page of res.body.data.pages) expect(stored.items.find((p: any) => p.id === page.id)?.slug).to.equal(page.slug);
    // The statements the request runs (X-Query-Count) do not grow with the pages: one lookup by sourceUrl,
    // one of the slugs, the new pages as multi-row inserts at commit (page by page it was 104 for 41 pages, 9 for 4).
    const small = await startTestSite();
    try {
      const other = await createTenant(t, 'imp');
      const four = await t.http.post('/api/v1/cms/import-url').set(as(other, 'editor')).send({ url: `${small.url}/`, depth: 2 });
      expect(four.status).to.equal(200);
      expect(four.body.data.stats.created).to.equal(4);
      const perPage = (Number(res.headers['x-query-count']) - Number(four.headers['x-query-count'])) / (41 - 4);
      expect(perPage, `${res.headers['x-query-count']} statements for 41 pages, ${four.headers['x-query-count']} for 4`).to.be.below(0.5);
    } finally {
      await small.stop();
    }
  });

  it('follows links only to the requested depth', async () => {
    const zero = await importUrl({ depth: 0, dry_run: true });
    expect(zero.body.data.pages.map((p: any) => new URL(p.url).pathname)).to.deep.equal(['/']);
    const one = await importUrl({ depth: 1, dry_run: true });
    expect(one.body.data.pages.map((p: any) => new URL(p.url).pathname)).to.deep.equal(['/', '/about', '/blog']);
  });

  it('stops at 50 pages and skips non-HTML answers', async () => {
    const many: Record<string, string | { type: string; body: string }> = {
      '/': `<html><head><title>Index</title></head><body><main><p>Many pages.</p><a href="/data">data</a>${Array.from({ length: 60 }, (_, i) => `<a href="/p${i}">P${i}</a>`).join(' ')}</main></body></html>`,
      '/data': { type: 'application/json', body: '{}' },
    };
    for (let i = 0; i < 60; i++) many[`/p${i}`] = `<html><head><title>P${i}</title></head><body><p>Page ${i}.</p></body></html>`;
    site.serve(many);
    const res = await importUrl({ depth: 1, dry_run: true });
    // 50 fetches: the start page, /data (not HTML) and /p0../p47; /p48../p59 are over the limit.
    expect(res.body.data.pages).to.have.length(49);
    expect(res.body.data.excluded).to.deep.include({ url: `${site.url}/data`, reason: 'not_html' });
    expect(res.body.data.excluded.filter((e: any) => e.reason === 'page_limit')).to.have.length(12);
    expect(fetchedPaths(site).filter((p) => p !== '/robots.txt')).to.have.length(50);
    expect(fetchedPaths(site)).to.not.include('/p48');
  });

  it('publish makes the pages public and searchable at once, without the footer', async () => {
    const res = await importUrl({ depth: 2, publish: true });
    expect(res.body.data.pages.every((p: any) => p.status === 'published')).to.equal(true);
    expect(res.body.data.applied.published).to.equal(4);
    const pub = await t.http.get(`/api/v1/public/tenant/${tenant}/content/page`).query({ slug: 'about' });
    expect(pub.body.data.items).to.have.length(1);
    const hits = await search('Yirgacheffe');
    expect(hits).to.have.length(1);
    expect(hits[0]).to.include({ sourceModule: 'cms', url: '/home' });
    expect(await search(FOOTER_WORD)).to.have.length(0);
  });

  it('apply_navigation and apply_branding write the site config and branding', async () => {
    const plain = await importUrl({ depth: 0 });
    expect(plain.body.data.applied).to.include({ navigation: false, branding: false });
    expect((await siteConfig()).navigation).to.deep.equal([]);
    expect(await branding()).to.deep.equal({});

    // Writing the site config and branding is an admin's right, also through an import (review finding).
    const byEditor = await importUrl({ depth: 0, apply_navigation: true }, 'editor');
    expect(byEditor.status).to.equal(403);
    expect(byEditor.body.error.code).to.equal('forbidden');
    expect((await siteConfig()).navigation).to.deep.equal([]);

    const res = await importUrl({ depth: 0, apply_navigation: true, apply_branding: true }, 'admin');
    expect(res.body.data.applied).to.include({ navigation: true, branding: true });
    const config = await siteConfig();
    expect(config.navigation).to.deep.equal([
      { label: 'Home', href: '/' }, { label: 'About us', href: '/about' }, { label: 'Blog', href: '/blog' }, { label: 'Members', href: '/private' },
    ]);
    expect(config.siteName).to.equal(`Tenant ${tenant}`);
    expect(await branding()).to.deep.equal({
      logoUrl: `${site.url}/logo.png`, faviconUrl: `${site.url}/favicon.png`, colors: { primary: '#0a7cff', accent: '#ff7800' },
    });
    // The answer reports what the site declares, including colours the branding cannot hold.
    expect(res.body.data.branding).to.deep.include({ themeColor: '#0a7cff' });
    expect(res.body.data.branding.colors).to.deep.equal({ 'brand-primary': '#0a7cff', 'brand-accent': '#ff7800', shadow: 'rgb(0, 0, 0)' });
  });

  it('apply_navigation skips links the site config refuses (javascript:) and still imports', async () => {
    await site.stop();
    const evilNav = '<nav><a href="/">Home</a> <a href=" javascript:alert(1)">Evil</a> <a href="java\tscript:alert(2)">Tabbed</a> <a href="/about">About us</a></nav>';
    const home = String(testSitePages()['/']).replace(/<nav>.*?<\/nav>/s, evilNav);
    site = await startTestSite({ '/': home });
    const res = await importUrl({ depth: 0, apply_navigation: true }, 'admin');
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.data.applied).to.include({ navigation: true });
    expect((await siteConfig()).navigation).to.deep.equal([{ label: 'Home', href: '/' }, { label: 'About us', href: '/about' }]);
    expect((await pages()).items).to.have.length(1);
  });

  it('suggests fixes and apply_suggestions applies them', async () => {
    const dry = await importUrl({ depth: 2, dry_run: true });
    const suggestions = dry.body.data.suggestions;
    const about = `${site.url}/about`;
    const blog = `${site.url}/blog`;
    expect(suggestions.filter((s: any) => s.type === 'missing_description').map((s: any) => s.url)).to.deep.equal([about]);
    expect(suggestions.filter((s: any) => s.type === 'duplicate_title').map((s: any) => s.url)).to.deep.equal([blog]);
    expect(suggestions.filter((s: any) => s.type === 'thin_page').map((s: any) => s.url)).to.include(blog);

    await importUrl({ depth: 2 });
    const before = (await pages()).items;
    expect(before.find((p: any) => p.slug === 'about').seo.description).to.equal(undefined);

    const res = await importUrl({ depth: 2, apply_suggestions: true });
    expect(res.body.data.applied.suggestions).to.equal(2);
    const after = (await pages()).items;
    expect(after.find((p: any) => p.slug === 'about').seo.description).to.match(/^Acme Roasters was founded in 2015/);
    expect(after.find((p: any) => p.slug === 'blog').title).to.equal('Blog | Acme Roasters');
  });

  it('use_ai without a configured LLM says "unavailable" and still imports', async () => {
    const res = await importUrl({ depth: 0, use_ai: true });
    expect(res.status).to.equal(200);
    expect(res.body.data.ai).to.equal('unavailable');
    expect(res.body.data.pages).to.have.length(1);
  });

  it('answers 403 for a viewer and 400 for a depth above 3', async () => {
    expect((await importUrl({}, 'viewer')).status).to.equal(403);
    const deep = await importUrl({ depth: 4 });
    expect(deep.status).to.equal(400);
    expect(deep.body.error.details[0].path).to.equal('/depth');
  });

  it('answers 403 when X-Tenant-Id names another tenant than the token', async () => {
    const other = await createTenant(t, 'imp');
    for (const path of ['/api/v1/cms/import-url', '/api/v1/ai/ingest-web', '/api/v1/migration/competitor-import']) {
      const res = await t.http.post(path).set(as(tenant, 'admin')).set('X-Tenant-Id', other)
        .send({ url: `${site.url}/`, ...(path.includes('migration') ? { sourcePlatform: 'website' } : {}) });
      expect(res.status, path).to.equal(403);
    }
    expect((await t.http.get('/api/v1/cms/pages').set(as(other, 'admin'))).body.data.pagination.total).to.equal(0);
  });

  it('answers 502 upstream_failed when the start page cannot be fetched', async () => {
    const res = await t.http.post('/api/v1/cms/import-url').set(as(tenant, 'editor')).send({ url: `${site.url}/missing` });
    expect(res.status).to.equal(502);
    expect(res.body.error.code).to.equal('upstream_failed');
  });
});

describe('POST /api/v1/migration/competitor-import', () => {
  const fx = useSiteFixture('mig');

  it('imports a website and returns a migration report', async () => {
    const res = await fx.t.http.post('/api/v1/migration/competitor-import').set(as(fx.tenant, 'editor'))
      .send({ sourcePlatform: 'website', url: `${fx.site.url}/`, depth: 2 });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.data.sourcePlatform).to.equal('website');
    expect(res.body.data.report).to.include({ pagesFound: 4, pagesImported: 4, pagesUpdated: 0, navigationItems: 4, brandingFound: true });
    expect(res.body.data.report.warnings.some((w: string) => w.includes('/private') && w.includes('robots_txt'))).to.equal(true);
    const stored = await fx.t.http.get('/api/v1/cms/pages').set(as(fx.tenant, 'viewer'));
    expect(stored.body.data.pagination.total).to.equal(4);
  });

  it('answers 400 listing the supported platforms for another platform', async () => {
    const res = await fx.t.http.post('/api/v1/migration/competitor-import').set(as(fx.tenant, 'editor'))
      .send({ sourcePlatform: 'wix', url: `${fx.site.url}/` });
    expect(res.status).to.equal(400);
    expect(res.body.error.code).to.equal('validation_failed');
    expect(res.body.error.details).to.deep.equal([{ path: '/sourcePlatform', message: 'must be one of: website' }]);
  });
});
