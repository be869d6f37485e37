import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { openConsole, screenshot, screensWithViolations, type ConsoleDriver } from '../helpers/browser.js';
import { createTenant, startTestApp, type TestApp } from '../helpers/test-app.js';
import { TEST_KEY, superadmin } from '../helpers/tokens.js';
import { waitUntil } from '../helpers/wait.js';

/**
 * The console as a product (issue 32), in headless Chromium against the real app on TEST_DB's engine: labels and
 * formats from the schemas' metadata (titles, x-money, x-percent-basis-points, dates in the user's locale, the
 * server's fields beside the form), asserted as a person sees them.
 */
describe('admin console: labels, formats and errors from metadata (headless Chromium)', function () {
  this.timeout(120_000);
  let t: TestApp;
  let c: ConsoleDriver;
  let page: Page;
  let tenant: string;

  const url = (path: string) => c.url(path);
  const go = (path: string) => c.go(path);
  const checkA11y = (screen: string) => c.checkA11y(screen);
  /** What the user's locale makes of a time, as the console formats it. */
  const localTime = (iso: string) =>
    page.evaluate((at) => new Intl.DateTimeFormat(undefined, { dateStyle: 'short', timeStyle: 'medium' }).format(new Date(at)), iso);

  before(async function () {
    this.timeout(180_000);
    t = await startTestApp();
    tenant = await createTenant(t, 'product');
    c = await openConsole(t.baseUrl);
    page = c.page;
    await c.signIn(TEST_KEY, tenant);
  });

  afterEach(async function () {
    await c?.keepFailure(this.currentTest, 'product');
  });

  after(async () => {
    await c?.close();
    await t?.close();
  });

  it('labels columns by title, shows prices as money and rates as percent, and filters by an amount', async () => {
    for (const [sku, name, priceCents] of [['LAMP-1', 'Desk lamp', 1999], ['DESK-1', 'Oak desk', 24900]] as const) {
      await t.http.post('/api/v1/erp/products').set(superadmin(tenant)).send({ sku, name, priceCents, physicalStock: 3 }).expect(201);
    }
    await go('/erp.product');
    const headers = await page.getByRole('columnheader').allInnerTexts();
    // x-list-columns picks the columns, titles label them: no raw field names.
    expect(headers.map((h) => h.trim()).filter(Boolean)).to.deep.equal(['SKU', 'Name', 'Price', 'Stock', 'Tax rate', 'Status']);
    const lamp = page.getByRole('row').filter({ hasText: 'LAMP-1' });
    await lamp.getByRole('cell', { name: '€19.99', exact: true }).waitFor();
    await lamp.getByRole('cell', { name: '19%', exact: true }).waitFor();
    await page.getByRole('row').filter({ hasText: 'DESK-1' }).getByRole('cell', { name: '€249.00', exact: true }).waitFor();
    await checkA11y('product-list');
    await screenshot(page, 'product-list');

    // A filter typed as money: Price ≥ 20 (€) asks for priceCents ≥ 2000.
    await page.getByRole('button', { name: 'Add filter' }).click();
    await page.getByRole('menu').getByText('Price ≥', { exact: true }).click();
    await page.getByLabel('Price ≥', { exact: true }).fill('20');
    await waitUntil('the filtered table', async () => (await page.getByRole('row').filter({ hasText: 'LAMP-1' }).count()) === 0, 10_000);
    await page.getByRole('row').filter({ hasText: 'DESK-1' }).waitFor();
    expect(decodeURIComponent(page.url())).to.contain('"priceCents|gte":2000');
  });

  it('edits a price as money (19.99 stored as 1999) with its help text, the server\'s fields quiet beside the form', async () => {
    const created = await t.http.post('/api/v1/erp/products').set(superadmin(tenant))
      .send({ sku: 'MUG-1', name: 'Blue mug', priceCents: 1250, physicalStock: 1 }).expect(201);
    const product = created.body.data;
    await go(`/erp.product/${product.id}`);
    // The title names the record by its display field.
    await page.getByText('Product: Blue mug').first().waitFor();
    // Required: its label reads "Price *".
    const price = page.getByRole('textbox', { name: /^Price\b/ });
    expect(await price.inputValue()).to.equal('12.50');
    await page.locator('#priceCents-helper-text').filter({ hasText: 'Net of VAT' }).waitFor();
    expect(await page.getByLabel('Tax rate', { exact: true }).inputValue()).to.equal('19');
    // The server's fields: in the side panel, with the creation time in the user's locale, not as form inputs.
    const details = page.getByRole('complementary', { name: 'Record details' });
    await details.getByText(product.id).waitFor();
    await details.getByText(product.id).waitFor();
    expect(await details.innerText()).to.contain(`Created\n${await localTime(product.createdAt)}`).and.contain('Version\n1');
    expect(await page.locator('form').getByText(product.id).count()).to.equal(0);
    const inputValues = await page.locator('form input').evaluateAll((inputs) => inputs.map((i) => (i as unknown as { value: string }).value));
    expect(inputValues).not.to.include(product.id).and.not.to.include(product.createdAt);
    await checkA11y('product-edit');
    await screenshot(page, 'product-edit');

    await price.fill('19.99');
    await page.getByLabel('Tax rate', { exact: true }).fill('7');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.waitForURL(url('/erp.product'));
    const saved = await t.http.get(`/api/v1/data/erp/product/${product.id}`).set(superadmin(tenant)).expect(200);
    expect(saved.body.data.item).to.include({ priceCents: 1999, taxRateBasisPoints: 700 });
    await page.getByRole('row').filter({ hasText: 'MUG-1' }).getByRole('cell', { name: '7%', exact: true }).waitFor();
  });

  it('refuses an amount that is not a number at its field, before asking the server', async () => {
    const created = await t.http.post('/api/v1/erp/products').set(superadmin(tenant))
      .send({ sku: 'PEN-1', name: 'Pen', priceCents: 150 }).expect(201);
    await go(`/erp.product/${created.body.data.id}`);
    await page.getByRole('textbox', { name: /^Price\b/ }).fill('twelve');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.locator('#priceCents-helper-text').filter({ hasText: 'Enter a number, such as 19.99' }).waitFor();
    const stored = await t.http.get(`/api/v1/data/erp/product/${created.body.data.id}`).set(superadmin(tenant)).expect(200);
    expect(stored.body.data.item.priceCents).to.equal(150);
  });

  it('marks the fields a 409 unique conflict names, on create and on edit, instead of only a toast', async () => {
    await t.http.post('/api/v1/metadata/schemas').set(superadmin(tenant)).send({
      namespace: 'shop', name: 'member', unique: [['email']],
      schema: { type: 'object', required: ['email'], properties: { email: { type: 'string', title: 'E-mail' }, name: { type: 'string' } } },
    }).expect(201);
    await t.http.post('/api/v1/data/shop/member').set(superadmin(tenant)).send({ email: 'ana@example.com', name: 'Ana' }).expect(201);
    const other = (await t.http.post('/api/v1/data/shop/member').set(superadmin(tenant)).send({ email: 'bob@example.com' }).expect(201)).body.data.item;

    await go('/shop.member/create');
    await page.getByRole('textbox', { name: /^E-mail/ }).fill('ana@example.com');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.locator('#email-helper-text').filter({ hasText: 'is taken by another record' }).waitFor();
    expect(await page.getByRole('textbox', { name: /^E-mail/ }).getAttribute('aria-invalid')).to.equal('true');
    await checkA11y('unique-conflict-create');
    await screenshot(page, 'unique-conflict');

    await go(`/shop.member/${other.id}`);
    await page.getByRole('textbox', { name: /^E-mail/ }).fill('ana@example.com');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.locator('#email-helper-text').filter({ hasText: 'is taken by another record' }).waitFor();
    const stored = await t.http.get(`/api/v1/data/shop/member/${other.id}`).set(superadmin(tenant)).expect(200);
    expect(stored.body.data.item.email).to.equal('bob@example.com');
  });

  it('picks a reference (x-ref) by the referenced record\'s display field, and shows it by that field', async () => {
    const admin = superadmin(tenant);
    await t.http.post('/api/v1/metadata/schemas').set(admin).send({
      namespace: 'shop', name: 'supplier', schema: { type: 'object', required: ['name'], properties: { name: { type: 'string', title: 'Name' } } },
    }).expect(201);
    await t.http.post('/api/v1/metadata/schemas').set(admin).send({
      namespace: 'shop', name: 'part', schema: {
        type: 'object', required: ['title'],
        properties: { title: { type: 'string', title: 'Title' }, supplierId: { type: 'string', title: 'Supplier', 'x-ref': 'shop.supplier' } },
      },
    }).expect(201);
    const acme = (await t.http.post('/api/v1/data/shop/supplier').set(admin).send({ name: 'Acme Tools' }).expect(201)).body.data.item;
    await t.http.post('/api/v1/data/shop/supplier').set(admin).send({ name: 'Brisk Parts' }).expect(201);

    await go('/shop.part/create');
    await page.getByRole('textbox', { name: /^Title/ }).fill('Hinge');
    const supplier = page.getByRole('combobox', { name: 'Supplier' });
    await supplier.fill('Acme');
    await page.getByRole('option', { name: 'Acme Tools' }).click();
    await checkA11y('reference-picker');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.waitForURL(url('/shop.part'));
    const listed = await t.http.get('/api/v1/data/shop/part').set(admin).expect(200);
    const hinge = listed.body.data.items[0];
    expect(hinge).to.include({ title: 'Hinge', supplierId: acme.id });
    await go(`/shop.part/${hinge.id}/show`);
    await page.getByRole('link', { name: 'Acme Tools' }).waitFor();
    await screenshot(page, 'reference-show');
  });

  it('gives curl snippets that work pasted into a shell: export TOKEN=... first, headers in double quotes', async () => {
    await t.http.post('/api/v1/metadata/schemas').set(superadmin(tenant)).send({
      namespace: 'shop', name: 'note', schema: { type: 'object', required: ['text'], properties: { text: { type: 'string' } } },
    }).expect(201);
    await go('/schemas/shop.note/show');
    const snippet = await page.getByRole('region', { name: 'curl' }).locator('pre').innerText();
    const lines = snippet.split('\n');
    expect(lines[0]).to.match(/^export TOKEN="<your token>"/);
    expect(snippet).to.contain('-H "Authorization: Bearer $TOKEN"').and.not.contain("'Authorization");
    await checkA11y('schema-show');
    // Pasted as shown, with the placeholder replaced by a token: the record is created, then listed.
    const pasted = [`export TOKEN="${TEST_KEY}"`, ...lines.slice(1)].join('\n');
    // Asynchronously: the app answering curl runs in this process.
    const { stdout: output } = await promisify(execFile)('bash', ['-c', pasted], { encoding: 'utf8', timeout: 20_000 });
    const [created, listed] = output.trim().split(/(?<=\})\s*(?=\{)/).map((text) => JSON.parse(text));
    expect(created.status, output).to.equal('success');
    expect(created.data.item.text).to.equal('text');
    expect(listed.data.items.map((r: { text: string }) => r.text)).to.deep.equal(['text']);
  });

  it('loads /admin without a failed request: the console has its own icon, so no /favicon.ico', async () => {
    const context = await c.browser.newContext();
    const fresh = await context.newPage();
    const failed: string[] = [];
    fresh.on('response', (res) => { if (res.status() >= 400) failed.push(`${res.status()} ${res.url()}`); });
    fresh.on('requestfailed', (req) => failed.push(`failed ${req.url()}`));
    const favicon: string[] = [];
    fresh.on('request', (req) => { if (req.url().includes('favicon') || req.url().endsWith('/icon.svg')) favicon.push(req.url()); });
    await fresh.goto(url('/'));
    await fresh.getByRole('button', { name: 'Sign in', exact: true }).waitFor();
    await fresh.waitForLoadState('networkidle');
    const icon = await fresh.locator('link[rel="icon"]').getAttribute('href');
    expect(icon).to.equal('/admin/icon.svg');
    const res = await t.http.get(icon!).expect(200);
    expect(res.headers['content-type']).to.match(/^image\/svg\+xml/);
    expect(favicon.filter((u) => u.includes('favicon.ico'))).to.deep.equal([]);
    expect(failed).to.deep.equal([]);
    await context.close();
  });

  it('has no serious or critical accessibility violations on the screens it changes (axe-core)', () => {
    expect(Object.keys(c.violations)).to.have.length.greaterThan(1);
    expect(screensWithViolations(c.violations)).to.deep.equal([]);
  });
});
