import { mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { chromium, type Browser } from 'playwright-core';
import { sharedTestApp, type TestApp } from '../helpers/test-app.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARTIFACTS = join(process.cwd(), 'test-artifacts');

describe('GET /docs', () => {
  let t: TestApp;

  before(async () => {
    t = await sharedTestApp();
  });

  it('answers the API reference page, which loads only files the service serves itself', async () => {
    const res = await t.http.get('/docs');
    expect(res.status).to.equal(200);
    expect(res.headers['content-type']).to.match(/^text\/html/);
    const sources = [...res.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    expect(sources.length).to.be.greaterThan(0);
    for (const source of sources) {
      expect(source.startsWith('/docs/'), source).to.equal(true);
      expect((await t.http.get(source)).status, source).to.equal(200);
    }
    const initializer = await t.http.get('/docs/initializer.js');
    expect(initializer.text).to.contain('/api/v1/openapi.json').and.contain('validatorUrl: null');
  });

  it('serves swagger-ui-dist files with their content type, and nothing else (404)', async () => {
    const bundle = await t.http.get('/docs/swagger-ui-bundle.js');
    expect(bundle.status).to.equal(200);
    expect(bundle.headers['content-type']).to.match(/^text\/javascript/);
    expect((await t.http.get('/docs/package.json')).status).to.equal(404);
    expect((await t.http.get('/docs/..%2F..%2Fpackage.json')).status).to.equal(404);
  });

  describe('in headless Chromium', function () {
    this.timeout(90_000);
    let browser: Browser;

    before(async () => {
      browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
      });
    });

    after(async () => {
      await browser?.close();
    });

    it('shows the data API\'s operations, with no request leaving the service', async () => {
      const page = await browser.newPage({ viewport: { width: 1280, height: 2000 } });
      const foreign: string[] = [];
      page.on('request', (request) => {
        if (!request.url().startsWith(t.baseUrl) && !request.url().startsWith('data:')) foreign.push(request.url());
      });
      await page.goto(`${t.baseUrl}/docs`, { waitUntil: 'load' });
      // The document lists more than 150 tags and operations, which Swagger UI shows in a virtual list; its filter
      // box narrows them to the data API's tags (data, metadata), which it shows as tag sections.
      await page.locator('.operation-filter-input').fill('data');
      await page.waitForSelector('.opblock-tag-section', { timeout: 30_000 });
      const dataSection = page.locator('.opblock-tag-section', { has: page.locator('[data-tag="data"]') });
      await dataSection.waitFor();
      const operations = await dataSection.locator('.opblock-summary-path').allInnerTexts();
      const paths = operations.map((text) => text.replace(/\u200b/g, '').trim());
      expect(paths).to.include.members(['/api/v1/data/{ns}/{schema}', '/api/v1/data/{ns}/{schema}/{id}']);
      const methods = (await dataSection.locator('.opblock-summary-method').allInnerTexts()).map((m) => m.trim());
      expect(methods).to.include.members(['GET', 'POST', 'PATCH', 'DELETE']);
      expect(await page.locator('.info .title').innerText()).to.contain('Headless platform API');

      mkdirSync(ARTIFACTS, { recursive: true });
      const file = join(ARTIFACTS, 'docs-page.png');
      await page.screenshot({ path: file, fullPage: false });
      expect(statSync(file).size).to.be.greaterThan(10_000);
      expect(foreign).to.deep.equal([]);
      await page.close();
    });
  });
});
