import { expect } from 'chai';
import { consoleSuite, screenshot, screensWithViolations, type ConsoleDriver } from '../helpers/browser.js';
import { createTenant, startTestApp, type TestApp } from '../helpers/test-app.js';
import { TEST_KEY, superadmin } from '../helpers/tokens.js';
import { waitUntil } from '../helpers/wait.js';

/**
 * The console's access screens over the APIs of CONTRACT 16 (headless Chromium, TEST_DB's engine): API tokens
 * (the secret shown once, revoked), the audit log with filters, and a record's revisions with their changes and
 * a restore.
 */
describe('admin console: API tokens, audit log and revisions (headless Chromium)', function () {
  this.timeout(120_000);
  const suite = consoleSuite('access', TEST_KEY, async () => {
    const app = await startTestApp();
    const tenant = await createTenant(app, 'access');
    await app.http.post('/api/v1/metadata/schemas').set(superadmin(tenant)).send({
      namespace: 'shop', name: 'item', schema: { type: 'object', required: ['title'], properties: { title: { type: 'string', title: 'Title' }, qty: { type: 'integer' } } },
    }).expect(201);
    return { app, tenant };
  });
  let t: TestApp;
  let c: ConsoleDriver;
  let tenant: string;
  beforeEach(() => ({ c, app: t, tenant } = suite));

  it('creates an API token whose secret is shown once and works, then revokes it', async () => {
    const { page } = c;
    await c.go('/api-tokens');
    await page.getByText('No tokens yet').waitFor();
    await page.locator('#token-name').fill('Warehouse sync');
    await page.locator('#token-role').click();
    await page.getByRole('option', { name: 'editor' }).click();
    await page.getByRole('button', { name: 'Create token' }).click();
    const secret = (await page.getByTestId('token-secret').innerText()).trim();
    expect(secret).to.match(/^pat_[0-9A-Za-z]{40}$/);
    await c.checkA11y('api-token-secret');
    await page.getByRole('button', { name: 'I have copied it' }).click();
    const row = page.getByTestId('token-row').filter({ hasText: 'Warehouse sync' });
    await row.waitFor();
    expect(await row.innerText()).to.contain('editor').and.contain(`pat_${secret.slice(4, 12)}…`).and.contain('active');
    expect(await page.locator('body').innerText()).not.to.contain(secret);
    await t.http.post('/api/v1/data/shop/item').set({ Authorization: `Bearer ${secret}` }).send({ title: 'By token' }).expect(201);
    await c.checkA11y('api-tokens');
    await screenshot(page, 'api-tokens');

    page.once('dialog', (dialog) => void dialog.accept());
    await row.getByRole('button', { name: 'Revoke' }).click();
    await row.filter({ hasText: 'revoked' }).waitFor();
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await t.http.get('/api/v1/data/shop/item').set({ Authorization: `Bearer ${secret}` }).expect(401);
  });

  it('shows a record\'s revisions with what each changed, and restores an older version', async () => {
    const { page } = c;
    const admin = superadmin(tenant);
    const item = (await t.http.post('/api/v1/data/shop/item').set(admin).send({ title: 'Lamp', qty: 1 }).expect(201)).body.data.item;
    await t.http.patch(`/api/v1/data/shop/item/${item.id}`).set(admin).send({ title: 'Desk lamp', qty: 2 }).expect(200);
    await c.go(`/shop.item/${item.id}/show`);
    const revisions = page.getByRole('region', { name: 'Revisions' });
    await revisions.getByTestId('revision-row').nth(1).waitFor();
    const rows = await revisions.getByTestId('revision-row').allInnerTexts();
    expect(rows[0]).to.match(/^2\s*current\s*update: title, qty/);
    expect(rows[1]).to.match(/^1\s*create: title, qty/);
    await revisions.getByTestId('revision-row').first().getByRole('button', { name: 'Changes' }).click();
    const diff = revisions.getByTestId('revision-diff');
    expect((await diff.getByRole('row').filter({ hasText: 'title' }).innerText()).replace(/\s+/g, ' ')).to.equal('title "Lamp" "Desk lamp"');
    await c.checkA11y('revisions');
    await screenshot(page, 'revisions');

    await revisions.getByTestId('revision-row').nth(1).getByRole('button', { name: 'Restore' }).click();
    await revisions.getByTestId('revision-row').filter({ hasText: /^3/ }).waitFor();
    const stored = (await t.http.get(`/api/v1/data/shop/item/${item.id}`).set(admin).expect(200)).body.data.item;
    expect(stored).to.include({ title: 'Lamp', qty: 1, version: 3 });
  });

  it('lists the audit log newest first and filters it by action', async () => {
    const { page } = c;
    await c.go('/audit-log');
    await page.getByTestId('audit-row').first().waitFor();
    const all = await page.getByTestId('audit-row').count();
    expect(all).to.be.at.least(4);
    await page.locator('#audit-action').fill('record.restored');
    await page.getByRole('button', { name: 'Filter' }).click();
    // The unfiltered list holds a record.restored row too: wait for the filtered answer to replace it.
    await waitUntil('the filtered audit log', async () => (await page.getByTestId('audit-row').count()) === 1);
    expect(await page.getByTestId('audit-row').first().textContent()).to.include('record.restored');
    await page.locator('#audit-action').fill('record.nothing');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByText('No entries match these filters.').waitFor();
    await page.getByRole('button', { name: 'Clear' }).click();
    await page.getByTestId('audit-row').nth(all - 1).waitFor();
    await c.checkA11y('audit-log');
    await screenshot(page, 'audit-log');
  });

  it('has no serious or critical accessibility violations on these screens (axe-core)', () => {
    expect(Object.keys(c.violations)).to.have.length(4);
    expect(screensWithViolations(c.violations)).to.deep.equal([]);
  });
});
