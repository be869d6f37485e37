import { expect } from 'chai';
import { HttpReceiver } from '../../helpers/http-receiver.js';
import { createTenant, startTestApp, type TestApp } from '../../helpers/test-app.js';
import { as } from '../../helpers/tokens.js';
import { FOOTER_WORD, startTestSite, testSitePages, useSiteFixture } from './test-site.js';

describe('POST /api/v1/ai/ingest-web', () => {
  const fx = useSiteFixture('ing');

  const ingest = (body: Record<string, unknown>, role: 'editor' | 'viewer' = 'editor') =>
    fx.t.http.post('/api/v1/ai/ingest-web').set(as(fx.tenant, role)).send(body);
  const search = async (q: string) => (await fx.t.http.get(`/api/v1/public/tenant/${fx.tenant}/knowledge`).query({ q })).body.data;

  it('answers 400 validation_failed for HTML that yields no content, such as "0" (#17)', async () => {
    for (const html of ['0', '<p></p>']) {
      const res = await ingest({ html });
      expect(res.status, `${html}: ${JSON.stringify(res.body)}`).to.equal(400);
      expect(res.body.error.code).to.equal('validation_failed');
      expect(res.body.error.details[0].path).to.equal('/html');
    }
  });

  it('keeps the article and drops navigation, header and footer (html given)', async () => {
    const html = testSitePages()['/'] as string;
    const res = await ingest({ html, url: 'https://acme.example/' });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    expect(res.body.data.entries.length).to.be.greaterThan(0);
    expect(res.body.data.entries[0].title).to.match(/^Acme Roasters/);
    const hits = await search('Yirgacheffe');
    expect(hits.items).to.have.length(1);
    expect(hits.items[0]).to.include({ sourceModule: 'web', url: 'https://acme.example/' });
    expect(hits.items[0].snippet).to.contain('<mark>Yirgacheffe</mark>');
    expect((await search(FOOTER_WORD)).items).to.have.length(0);
    expect((await search('Members')).items).to.have.length(0);
    // The site was not fetched: html was given.
    expect(fx.site.requests.filter((r) => r.path === '/')).to.have.length(0);
  });

  it('fetches a URL, and ingesting it again replaces its entries', async () => {
    const first = await ingest({ url: `${fx.site.url}/blog/first-post` });
    expect(first.status, JSON.stringify(first.body)).to.equal(201);
    expect((await search('hillsides')).items).to.have.length(1);

    fx.site.serve(testSitePages({ '/blog/first-post': (testSitePages()['/blog/first-post'] as string).replace('steep hillsides', 'misty valleys') }));
    const second = await ingest({ url: `${fx.site.url}/blog/first-post` });
    expect(second.status).to.equal(201);
    expect(second.body.data.entries.map((e: any) => e.id)).to.not.deep.equal(first.body.data.entries.map((e: any) => e.id));
    expect((await search('hillsides')).items).to.have.length(0);
    const valleys = await search('valleys');
    expect(valleys.items).to.have.length(1);
    expect((await search('harvest')).pagination.total).to.equal(1);
  });

  it('splits long content into chunks on headings', async () => {
    const section = (n: number) => `<h2>Section ${n}</h2><p>${'Roasting notes about caramel sweetness. '.repeat(40)}</p>`;
    const html = `<html><head><title>Guide</title></head><body><article><h1>Guide</h1>${[1, 2, 3].map(section).join('')}</article></body></html>`;
    const res = await ingest({ html });
    expect(res.status).to.equal(201);
    expect(res.body.data.entries.map((e: any) => e.title)).to.deep.equal(['Guide — Section 1', 'Guide — Section 2', 'Guide — Section 3']);
  });

  it('answers 400 without html and url, 403 for a viewer and 400 for a non-HTML URL', async () => {
    const empty = await ingest({ title: 'x' });
    expect(empty.status).to.equal(400);
    expect(empty.body.error.code).to.equal('validation_failed');
    expect((await ingest({ html: '<p>x</p>' }, 'viewer')).status).to.equal(403);
    const png = await ingest({ url: `${fx.site.url}/logo.png` });
    expect(png.status).to.equal(400);
  });
});

describe('SSRF guard on imports and ingestion (ALLOW_PRIVATE_NETWORK_FETCH off)', () => {
  let t: TestApp;
  let tenant: string;
  let site: HttpReceiver;

  before(async () => {
    t = await startTestApp({ env: { ALLOW_PRIVATE_NETWORK_FETCH: 'false' } });
    site = await startTestSite();
    tenant = await createTenant(t, 'ssrf');
  });

  after(async () => {
    await site.stop();
    await t.close();
  });

  for (const [label, path, body] of [
    ['POST /api/v1/cms/import-url', '/api/v1/cms/import-url', (url: string) => ({ url, depth: 1 })],
    ['POST /api/v1/ai/ingest-web', '/api/v1/ai/ingest-web', (url: string) => ({ url })],
    ['POST /api/v1/migration/competitor-import', '/api/v1/migration/competitor-import', (url: string) => ({ sourcePlatform: 'website', url })],
  ] as const) {
    it(`${label} answers 400 url_not_allowed for loopback, private and metadata addresses`, async () => {
      for (const url of [`${site.url}/`, 'http://localhost/', 'http://10.0.0.8/', 'http://169.254.169.254/latest/meta-data/']) {
        const res = await t.http.post(path).set(as(tenant, 'editor')).send(body(url));
        expect(res.status, `${url}: ${JSON.stringify(res.body)}`).to.equal(400);
        expect(res.body.error.code).to.equal('url_not_allowed');
      }
      expect(site.requests).to.have.length(0);
    });
  }
});

describe('POST /api/v1/cms/import-url with use_ai (OpenAI-compatible server on loopback)', () => {
  let t: TestApp;
  let tenant: string;
  let site: HttpReceiver;
  let llm: HttpReceiver;

  before(async () => {
    site = await startTestSite();
    llm = await new HttpReceiver().start();
    llm.responder = (req, res) => {
      const request = JSON.parse(req.body) as { model: string; messages: Array<{ role: string; content: string }> };
      const input = JSON.parse(request.messages.find((m) => m.role === 'user')!.content) as { pages: Array<{ url: string; title: string }> };
      const answer = {
        pages: input.pages.map((p) => ({ url: p.url, title: `Better ${p.title}`, description: `AI summary of ${new URL(p.url).pathname}` })),
        suggestions: [{ url: input.pages[0]!.url, message: 'Add a call to action' }],
      };
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ id: 'c1', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: JSON.stringify(answer) }, finish_reason: 'stop' }] }));
    };
    t = await startTestApp({ env: { LLM_BASE_URL: `${llm.url}/v1`, LLM_MODEL: 'test-model', LLM_API_KEY: 'llm-key' } });
    tenant = await createTenant(t, 'ai');
  });

  after(async () => {
    await site.stop();
    await llm.stop();
    await t.close();
  });

  it('asks the LLM and applies its titles and descriptions with apply_suggestions', async () => {
    const res = await t.http.post('/api/v1/cms/import-url').set(as(tenant, 'editor'))
      .send({ url: `${site.url}/`, depth: 1, use_ai: true, apply_suggestions: true });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.data.ai).to.equal('used');
    expect(res.body.data.suggestions).to.deep.include({ type: 'ai', url: `${site.url}/`, message: 'Add a call to action' });
    const call = llm.requests[0]!;
    expect(call.path).to.equal('/v1/chat/completions');
    expect(call.headers.authorization).to.equal('Bearer llm-key');
    expect(JSON.parse(call.body).model).to.equal('test-model');
    const stored = await t.http.get('/api/v1/cms/pages').query({ 'filter[slug]': 'about' }).set(as(tenant, 'viewer'));
    expect(stored.body.data.items[0]).to.deep.include({ title: 'Better About Acme' });
    expect(stored.body.data.items[0].seo.description).to.equal('AI summary of /about');
  });

  it('says "failed" and still imports when the LLM answers with an error', async () => {
    const responder = llm.responder;
    llm.responder = (_req, res) => { res.writeHead(500); res.end('boom'); };
    try {
      const res = await t.http.post('/api/v1/cms/import-url').set(as(tenant, 'editor')).send({ url: `${site.url}/`, depth: 0, use_ai: true, dry_run: true });
      expect(res.status).to.equal(200);
      expect(res.body.data.ai).to.equal('failed');
      expect(res.body.data.pages).to.have.length(1);
    } finally {
      llm.responder = responder;
    }
  });
});
