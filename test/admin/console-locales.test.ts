import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { ensureConsoleBuilt, launchBrowser, screenshot } from '../helpers/browser.js';
import { createTenant, startTestApp, type TestApp } from '../helpers/test-app.js';
import { TEST_KEY, superadmin } from '../helpers/tokens.js';
import { waitUntil } from '../helpers/wait.js';

/** The locale switcher of a localised schema's form (CONTRACT.md 17.2), in headless Chromium against the real app. */
describe('admin console: the locale switcher of localised records (headless Chromium)', function () {
  this.timeout(120_000);
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  let tenant: string;

  const url = (path: string) => `${t.baseUrl}/admin${path}`;
  const go = async (path: string) => {
    await page.goto(url(path));
    await page.waitForLoadState('networkidle');
  };

  before(async function () {
    this.timeout(180_000);
    ensureConsoleBuilt();
    t = await startTestApp();
    tenant = await createTenant(t, 'consoleloc');
    await t.http.patch(`/api/v1/tenants/${tenant}/site-config`).set(superadmin(tenant)).send({ defaultLocale: 'en', locales: ['en', 'de'] }).expect(200);
    browser = await launchBrowser();
    page = await (await browser.newContext({ viewport: { width: 1280, height: 860 } })).newPage();
    page.setDefaultTimeout(20_000);
    await go('/');
    await page.locator('#token').fill(TEST_KEY);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.locator('#tenant-picker').fill(tenant);
    await page.locator('#tenant-picker').press('Enter');
    await page.getByTestId('dashboard-tenant').filter({ hasText: tenant }).waitFor();
  });

  afterEach(async function () {
    if (this.currentTest?.state === 'failed' && page) await screenshot(page, `locales-failed-${this.currentTest.title.slice(0, 40).replace(/\W+/g, '-')}`);
  });

  after(async () => {
    await browser?.close();
    await t?.close();
  });

  it('edits a product\'s name in German through the locale switcher, leaving the default locale\'s as it was', async () => {
    const created = await t.http.post('/api/v1/erp/products').set(superadmin(tenant))
      .send({ sku: 'MUG-DE', name: 'Blue mug', description: 'A mug', priceCents: 1250 }).expect(201);
    const id = created.body.data.id;
    await go(`/erp.product/${id}`);
    const name = page.getByRole('textbox', { name: /^Name\b/ });
    await waitUntil('the default locale\'s name', async () => (await name.inputValue()) === 'Blue mug', 10_000);
    await page.locator('#record-locale').click();
    await page.getByRole('option', { name: 'de', exact: true }).click();
    // German has no values of its own yet: the localised fields are empty, the others as they are.
    await page.locator('#record-locale-helper-text').filter({ hasText: 'default locale\'s values' }).waitFor();
    await waitUntil('German values of its own: none yet', async () => (await name.inputValue()) === '', 10_000);
    expect(await page.getByRole('textbox', { name: /^SKU\b/ }).inputValue()).to.equal('MUG-DE');
    await screenshot(page, 'product-edit-locale-de');
    await name.fill('Blauer Becher');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.waitForURL(url('/erp.product'));

    const german = await t.http.get(`/api/v1/data/erp/product/${id}`).query({ locale: 'de', fallback: 'false' }).set(superadmin(tenant)).expect(200);
    expect(german.body.data.item).to.include({ name: 'Blauer Becher', description: null, sku: 'MUG-DE', priceCents: 1250 });
    const english = await t.http.get(`/api/v1/data/erp/product/${id}`).set(superadmin(tenant)).expect(200);
    expect(english.body.data.item).to.include({ name: 'Blue mug', description: 'A mug' });
  });

  it('saves a page\'s German title as a draft through the locale switcher and publishes it, the English title as it was', async () => {
    const created = await t.http.post('/api/v1/data/cms/page').set(superadmin(tenant))
      .send({ title: 'Winter sale', slug: 'winter-sale', status: 'published', content: 'Everything half price.' }).expect(201);
    const id = created.body.data.item.id;
    await go(`/cms.page/${id}`);
    const title = page.locator('#title');
    await waitUntil('the default locale\'s title', async () => (await title.inputValue()) === 'Winter sale', 10_000);
    await page.locator('#record-locale').click();
    await page.getByRole('option', { name: 'de', exact: true }).click();
    await waitUntil('German values of its own: none yet', async () => (await title.inputValue()) === '', 10_000);
    expect(await page.locator('#slug').inputValue()).to.equal('winter-sale');
    await title.fill('Winterschlussverkauf');
    const bar = page.getByRole('region', { name: 'Draft' });
    await bar.getByRole('button', { name: 'Save draft' }).click();
    await bar.getByTestId('draft-state').filter({ hasText: 'Draft' }).waitFor();
    // A draft: nothing live yet, in either locale.
    const before = await t.http.get(`/api/v1/data/cms/page/${id}`).query({ locale: 'de', fallback: 'false' }).set(superadmin(tenant)).expect(200);
    expect(before.body.data.item).to.include({ title: null, version: 1 });
    await screenshot(page, 'page-draft-locale-de');
    await bar.getByRole('button', { name: 'Publish', exact: true }).click();
    await bar.getByTestId('draft-state').filter({ hasText: 'Live' }).waitFor();

    const german = await t.http.get(`/api/v1/data/cms/page/${id}`).query({ locale: 'de' }).set(superadmin(tenant)).expect(200);
    expect(german.body.data.item).to.include({ title: 'Winterschlussverkauf', content: 'Everything half price.', slug: 'winter-sale', version: 2 });
    const english = await t.http.get(`/api/v1/data/cms/page/${id}`).set(superadmin(tenant)).expect(200);
    expect(english.body.data.item).to.include({ title: 'Winter sale', content: 'Everything half price.' });
    const listed = await t.http.get('/api/v1/data/cms/page').query({ locale: 'de', 'filter[slug]': 'winter-sale' }).set(superadmin(tenant)).expect(200);
    expect(listed.body.data.items.map((p: { title: string }) => p.title)).to.deep.equal(['Winterschlussverkauf']);
  });
});
