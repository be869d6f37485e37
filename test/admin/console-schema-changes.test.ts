import { expect } from 'chai';
import { consoleSuite, screenshot, screensWithViolations, type ConsoleDriver } from '../helpers/browser.js';
import { createTenant, startTestApp, type TestApp } from '../helpers/test-app.js';
import { TEST_KEY, superadmin } from '../helpers/tokens.js';

/**
 * Schema changes from the console (issue 32; CONTRACT 12.1), in headless Chromium on TEST_DB's engine: a change
 * made with the builder, an incompatible one shown with the records it breaks and run with `migrate`, a stale
 * page refused (If-Match), a schema deleted after typing its name.
 */
describe('admin console: changing and deleting a schema (headless Chromium)', function () {
  this.timeout(120_000);
  const suite = consoleSuite('schema-changes', TEST_KEY, async () => {
    const app = await startTestApp();
    const tenant = await createTenant(app, 'schemas');
    const admin = superadmin(tenant);
    await app.http.post('/api/v1/metadata/schemas').set(admin).send({
      namespace: 'shop', name: 'book', title: 'Book', schema: { type: 'object', required: ['title'], properties: { title: { type: 'string' } } },
    }).expect(201);
    for (const title of ['Dune', 'Emma']) await app.http.post('/api/v1/data/shop/book').set(admin).send({ title }).expect(201);
    return { app, tenant };
  });
  let t: TestApp;
  let c: ConsoleDriver;
  let tenant: string;
  beforeEach(() => ({ c, app: t, tenant } = suite));

  const schemaOf = async () => (await t.http.get('/api/v1/metadata/schemas/shop/book').set(superadmin(tenant)).expect(200)).body.data.item;

  it('adds a required field with the builder: shown incompatible with the records it breaks, then run with migrate', async () => {
    const { page } = c;
    await c.go('/schemas/shop.book/show');
    await page.getByRole('link', { name: 'Change schema' }).click();
    await page.getByRole('heading', { name: 'Change shop.book (version 1)' }).waitFor();
    await page.getByRole('button', { name: 'Add field' }).click();
    const row = page.getByTestId('field-row-1');
    await row.locator('#field-1-name').fill('status');
    await row.getByLabel('Required').check();
    await page.getByRole('button', { name: 'Save the change' }).click();
    const incompatible = page.getByRole('region', { name: 'Incompatible change' });
    await incompatible.getByTestId('incompatible-record').nth(1).waitFor();
    expect(await incompatible.getByTestId('incompatible-record').count()).to.equal(2);
    expect((await schemaOf()).version, 'nothing changed yet').to.equal(1);
    await c.checkA11y('schema-incompatible');
    await screenshot(page, 'schema-incompatible');

    await page.locator('#migrate-set').fill('{ "status": "draft" }');
    await page.getByRole('button', { name: 'Change and migrate the records' }).click();
    await page.waitForURL(c.url('/schemas/shop.book/show'));
    await page.getByText('version 2').first().waitFor();
    const books = (await t.http.get('/api/v1/data/shop/book').set(superadmin(tenant)).expect(200)).body.data.items;
    expect(books.map((b: { status: string }) => b.status)).to.deep.equal(['draft', 'draft']);
    expect((await schemaOf()).schema.required).to.deep.equal(['title', 'status']);
  });

  it('applies a compatible change at once, and refuses one made on a stale page (412) without changing anything', async () => {
    const { page } = c;
    await c.go('/schemas/shop.book');
    await page.getByRole('heading', { name: 'Change shop.book (version 2)' }).waitFor();
    await page.getByRole('button', { name: 'Add field' }).click();
    await page.locator('#field-2-name').fill('pages');
    await page.getByRole('button', { name: 'Save the change' }).click();
    await page.waitForURL(c.url('/schemas/shop.book/show'));
    expect((await schemaOf()).version).to.equal(3);

    await c.go('/schemas/shop.book');
    await page.getByRole('heading', { name: 'Change shop.book (version 3)' }).waitFor();
    // Someone else changes it meanwhile.
    const current = await schemaOf();
    await t.http.put('/api/v1/metadata/schemas/shop/book').set(superadmin(tenant)).set('If-Match', '"3"')
      .send({ schema: { ...current.schema, properties: { ...current.schema.properties, isbn: { type: 'string' } } } }).expect(200);
    await page.getByRole('textbox', { name: 'Title', exact: true }).fill('Books');
    await page.getByRole('button', { name: 'Save the change' }).click();
    await page.getByRole('alert').filter({ hasText: 'someone changed this schema since you opened it' }).waitFor();
    expect(await schemaOf()).to.include({ version: 4, title: 'Book' });
  });

  it('deletes a schema with its records only once its name is typed', async () => {
    const { page } = c;
    await c.go('/schemas/shop.book/show');
    await page.getByRole('button', { name: 'Delete schema' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete shop.book?' });
    const confirm = dialog.getByRole('button', { name: 'Delete schema and records' });
    expect(await confirm.isDisabled()).to.equal(true);
    await dialog.getByLabel('Type shop.book to confirm').fill('shop.boo');
    expect(await confirm.isDisabled()).to.equal(true);
    await dialog.getByLabel('Type shop.book to confirm').fill('shop.book');
    await c.checkA11y('schema-delete');
    await confirm.click();
    await page.waitForURL(c.url('/schemas'));
    await t.http.get('/api/v1/metadata/schemas/shop/book').set(superadmin(tenant)).expect(404);
  });

  it('has no serious or critical accessibility violations on these screens (axe-core)', () => {
    expect(Object.keys(c.violations)).to.have.length(2);
    expect(screensWithViolations(c.violations)).to.deep.equal([]);
  });
});
