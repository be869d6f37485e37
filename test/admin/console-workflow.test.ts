import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { consoleSuite, screenshot } from '../helpers/browser.js';
import { createTenant, startTestApp, type TestApp } from '../helpers/test-app.js';
import { superadmin, TEST_KEY } from '../helpers/tokens.js';
import { waitUntil } from '../helpers/wait.js';

/**
 * The content workflow in the console (issue 31, CONTRACT.md 17.1 and 17.3), in headless Chromium against the real
 * app on TEST_DB's engine: the draft bar of a CMS page (save a draft, see it and its diff, publish, see the live
 * value) and the Releases screen (two drafts published together), asserted as a person sees them.
 */
describe('admin console: drafts and releases (headless Chromium)', function () {
  this.timeout(120_000);
  const suite = consoleSuite('workflow', TEST_KEY, async () => {
    const app = await startTestApp();
    return { app, tenant: await createTenant(app, 'workflow') };
  });
  let t: TestApp;
  let page: Page;
  let tenant: string;
  let violations: Record<string, string[]>;
  const go = (path: string) => suite.c.go(path);
  const checkA11y = (screen: string) => suite.c.checkA11y(screen);
  /** Waits until the record's draft has been saved `revision` times (the console's save is asynchronous). */
  const waitForRevision = async (id: string, revision: number) => {
    for (let i = 0; i < 100; i++) {
      const res = await t.http.get(`/api/v1/data/cms/page/${id}/draft`).set(superadmin(tenant));
      if (res.body.data?.draft?.revision >= revision) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`the draft of ${id} never reached revision ${revision}`);
  };
  const newPage = async (title: string, content: string) =>
    (await t.http.post('/api/v1/data/cms/page').set(superadmin(tenant))
      .send({ title, slug: title.toLowerCase().replace(/\W+/g, '-'), status: 'published', content }).expect(201)).body.data.item;

  before(() => {
    ({ app: t, tenant } = suite);
    ({ page, violations } = suite.c);
  });

  it('saves a draft of a page from its form, shows "Draft" and the diff, and publishes it live', async () => {
    const home = await newPage('Home', 'Welcome.');
    await go(`/cms.page/${home.id}`);
    const bar = page.getByRole('region', { name: 'Draft' });
    await bar.getByTestId('draft-state').filter({ hasText: 'Live' }).waitFor();
    await page.locator('#content').fill('Winter sale.');
    await bar.getByRole('button', { name: 'Save draft' }).click();
    await bar.getByTestId('draft-state').filter({ hasText: 'Draft' }).waitFor();
    await bar.getByRole('button', { name: 'Diff' }).click();
    const change = bar.getByTestId('draft-change');
    await change.filter({ hasText: 'Winter sale.' }).waitFor();
    expect((await change.allInnerTexts()).map((row) => row.split('\t').map((cell) => cell.trim()))).to.deep.equal([['Content', 'Welcome.', 'Winter sale.']]);
    // Nothing is live yet.
    const live = await t.http.get(`/api/v1/data/cms/page/${home.id}`).set(superadmin(tenant)).expect(200);
    expect([live.body.data.item.content, live.body.data.item.version]).to.deep.equal(['Welcome.', 1]);
    await checkA11y('draft-bar');
    await screenshot(page, 'draft-bar');

    await bar.getByRole('button', { name: 'Publish', exact: true }).click();
    await bar.getByTestId('draft-state').filter({ hasText: 'Live' }).waitFor();
    await bar.getByTestId('draft-summary').filter({ hasText: 'Live version 2, no draft' }).waitFor();
    // The form takes the published record once its read answers (the summary can show first).
    await page.waitForFunction("document.querySelector('#content')?.value === 'Winter sale.'", null, { timeout: 5000 })
      .catch(() => undefined);
    expect(await page.locator('#content').inputValue()).to.equal('Winter sale.');
    const published = await t.http.get(`/api/v1/data/cms/page/${home.id}`).set(superadmin(tenant)).expect(200);
    expect([published.body.data.item.content, published.body.data.item.version]).to.deep.equal(['Winter sale.', 2]);
  });

  it('loads the draft\'s values into the form, saves the form back to the draft, and shows the live values on Diff', async () => {
    const news = await newPage('News', 'Live news.');
    await t.http.put(`/api/v1/data/cms/page/${news.id}/draft`).set(superadmin(tenant)).send({ content: 'Draft news.' }).expect(200);
    await go(`/cms.page/${news.id}`);
    const bar = page.getByRole('region', { name: 'Draft' });
    await bar.getByTestId('draft-state').filter({ hasText: 'Draft' }).waitFor();
    // The form edits the draft: its content, not the live one.
    const content = page.locator('#content');
    await waitUntil('the draft\'s content in the form', async () => (await content.inputValue()) === 'Draft news.');
    await page.locator('#title').fill('Latest news');
    await bar.getByRole('button', { name: 'Save draft' }).click();
    await waitForRevision(news.id, 2);
    const draft = (await t.http.get(`/api/v1/data/cms/page/${news.id}/draft`).set(superadmin(tenant)).expect(200)).body.data;
    expect([draft.item.title, draft.item.content, draft.draft.revision]).to.deep.equal(['Latest news', 'Draft news.', 2]);
    const live = (await t.http.get(`/api/v1/data/cms/page/${news.id}`).set(superadmin(tenant)).expect(200)).body.data.item;
    expect([live.title, live.content, live.version]).to.deep.equal(['News', 'Live news.', 1]);

    const diff = bar.getByRole('button', { name: 'Diff' });
    await diff.click();
    const change = bar.getByTestId('draft-change');
    await change.filter({ hasText: 'Latest news' }).waitFor();
    expect((await change.allInnerTexts()).map((row) => row.split('\t').map((cell) => cell.trim()))).to.deep.equal([
      ['title', 'News', 'Latest news'], ['Content', 'Live news.', 'Draft news.'],
    ]);
    expect(await diff.getAttribute('aria-pressed')).to.equal('true');
    await checkA11y('draft-form');
    await diff.click();
    await change.first().waitFor({ state: 'detached' });
  });

  it('schedules a draft\'s publish, unschedules it and discards the draft', async () => {
    const about = await newPage('About', 'Us.');
    await t.http.put(`/api/v1/data/cms/page/${about.id}/draft`).set(superadmin(tenant)).send({ content: 'Us, since 1990.' }).expect(200);
    await go(`/cms.page/${about.id}`);
    const bar = page.getByRole('region', { name: 'Draft' });
    await bar.getByTestId('draft-state').filter({ hasText: 'Draft' }).waitFor();
    await bar.getByLabel('Publish at').fill('2099-01-01T09:00');
    await bar.getByRole('button', { name: 'Schedule' }).click();
    await bar.getByTestId('draft-state').filter({ hasText: 'Scheduled' }).waitFor();
    const draft = await t.http.get(`/api/v1/data/cms/page/${about.id}/draft`).set(superadmin(tenant)).expect(200);
    expect(draft.body.data.draft.scheduledAt).to.match(/^2099-01-01T/);
    await bar.getByRole('button', { name: 'Unschedule' }).click();
    await bar.getByTestId('draft-state').filter({ hasText: /^Draft$/ }).waitFor();
    await bar.getByRole('button', { name: 'Discard draft' }).click();
    await bar.getByTestId('draft-state').filter({ hasText: 'Live' }).waitFor();
    await t.http.get(`/api/v1/data/cms/page/${about.id}/draft`).set(superadmin(tenant)).expect(404);
  });

  it('creates a release, adds two drafts, publishes it from the screen and shows a preview link', async () => {
    const pages = [await newPage('Sale', 'Soon.'), await newPage('Shipping', 'Five days.')];
    for (const [p, content] of [[pages[0], 'Now on.'], [pages[1], 'Free shipping.']] as const) {
      await t.http.put(`/api/v1/data/cms/page/${p.id}/draft`).set(superadmin(tenant)).send({ content }).expect(200);
    }
    await go('/');
    await page.locator('nav[aria-label="Console"] a[href="/admin/releases"]').click();
    await page.locator('#release-name').fill('Winter sale');
    await page.getByRole('button', { name: 'Create release' }).click();
    await page.getByRole('heading', { name: 'Winter sale', exact: true }).waitFor();
    await page.getByTestId('release-status').filter({ hasText: 'open' }).waitFor();
    for (const p of pages) {
      await page.locator('#item-namespace').fill('cms');
      await page.locator('#item-schema').fill('page');
      await page.locator('#item-id').fill(p.id);
      await page.getByRole('button', { name: 'Add item' }).click();
      await page.getByTestId('release-item').filter({ hasText: p.id }).waitFor();
    }
    await checkA11y('release-page');
    await screenshot(page, 'release-page');

    await page.getByRole('button', { name: 'Preview link' }).click();
    const token = await page.getByTestId('preview-token').innerText();
    await page.locator('#preview-base').fill(`${t.baseUrl}/api/v1/public/tenant/${tenant}/content/page`);
    const href = await page.getByTestId('preview-link').getAttribute('href');
    expect(href).to.equal(`${t.baseUrl}/api/v1/public/tenant/${tenant}/content/page?preview=${token}`);
    const previewed = await t.http.get(new URL(href!).pathname + new URL(href!).search).expect(200);
    expect(previewed.body.data.items.map((i: { content: string }) => i.content)).to.include.members(['Now on.', 'Free shipping.']);

    await page.getByRole('button', { name: 'Publish now' }).click();
    await page.getByTestId('release-status').filter({ hasText: 'published' }).waitFor();
    expect(await page.getByTestId('release-item').allInnerTexts()).to.have.length(2);
    for (const [p, content] of [[pages[0], 'Now on.'], [pages[1], 'Free shipping.']] as const) {
      const live = await t.http.get(`/api/v1/data/cms/page/${p.id}`).set(superadmin(tenant)).expect(200);
      expect([live.body.data.item.content, live.body.data.item.version]).to.deep.equal([content, 2]);
    }

    // An item edited since the publish: the rollback asks to force it.
    await t.http.patch(`/api/v1/data/cms/page/${pages[0].id}`).set(superadmin(tenant)).send({ content: 'Edited.' }).expect(200);
    await page.getByRole('button', { name: 'Roll back' }).click();
    const dialog = page.getByRole('dialog', { name: 'Roll back anyway?' });
    await dialog.getByText(pages[0].id).waitFor();
    await dialog.getByRole('button', { name: 'Roll back anyway' }).click();
    await page.getByTestId('release-status').filter({ hasText: 'rolled back' }).waitFor();
    const back = await t.http.get(`/api/v1/data/cms/page/${pages[0].id}`).set(superadmin(tenant)).expect(200);
    expect(back.body.data.item.content).to.equal('Soon.');

    await page.locator('nav[aria-label="Console"] a[href="/admin/releases"]').click();
    await page.getByTestId('release-row').filter({ hasText: 'Winter sale' }).getByTestId('release-status').filter({ hasText: 'rolled back' }).waitFor();
    await checkA11y('releases');
  });

  it('has no serious or critical accessibility violations on the screens it visited', () => {
    expect(violations).to.deep.equal(Object.fromEntries(Object.keys(violations).map((screen) => [screen, []])));
  });
});
