import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { openConsole, screenshot, screensWithViolations, type ConsoleDriver } from '../helpers/browser.js';
import { HttpReceiver } from '../helpers/http-receiver.js';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp-server.js';
import { createTenant, startTestApp, type TestApp } from '../helpers/test-app.js';
import { TEST_KEY, as, signToken, superadmin } from '../helpers/tokens.js';
import { waitUntil } from '../helpers/wait.js';
import { startTestSite } from '../packs/cms/test-site.js';

// A 1×1 PNG.
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');

/**
 * The admin console's journeys in headless Chromium against the real app. The browser drives the UI
 * only; the test checks outcomes through the API, the public runtime, the SMTP server and the webhook
 * receiver. It runs on both engines like every other suite (the app under the browser is the one on
 * TEST_DB): the console is the same, the API under it and its errors are not always (unique violations,
 * filters on JSON columns, counts).
 */
describe('admin console at /admin (headless Chromium)', function () {
  this.timeout(120_000);
  let t: TestApp;
  let smtp: TestSmtpServer;
  let receiver: HttpReceiver;
  let c: ConsoleDriver;
  let page: Page;
  let tenant: string;

  const url = (path: string) => c.url(path);
  const go = (path: string) => c.go(path);
  const checkA11y = (screen: string) => c.checkA11y(screen);

  before(async function () {
    this.timeout(180_000);
    smtp = await startSmtpServer();
    receiver = await new HttpReceiver().start();
    t = await startTestApp({
      env: {
        SMTP_HOST: '127.0.0.1', SMTP_PORT: String(smtp.port), SMTP_SECURE: 'false', SMTP_FROM: 'console@example.test',
        INVITE_LOGIN_URL: 'http://127.0.0.1/invite', DISPATCHER_RETRY_BASE_MS: '600000',
      },
    });
    tenant = await createTenant(t, 'console');
    c = await openConsole(t.baseUrl);
    page = c.page;
  });

  afterEach(async function () {
    await c?.keepFailure(this.currentTest, 'console');
  });

  after(async () => {
    await c?.close();
    await t?.close();
    await smtp?.stop();
    await receiver?.stop();
  });

  it('signs in with a pasted token (the test key), picks a tenant and shows it on the screen', async () => {
    await go('/');
    await page.getByRole('button', { name: 'Sign in with the development test key' }).waitFor();
    await checkA11y('sign-in');
    await screenshot(page, 'sign-in');
    // The button tries the documented development key (dev-test-key); this app runs with another test key.
    await page.getByRole('button', { name: 'Sign in with the development test key' }).click();
    await page.getByRole('alert').filter({ hasText: 'refused' }).waitFor();
    await page.locator('#token').fill(TEST_KEY);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.locator('#tenant-picker').fill(tenant);
    await page.locator('#tenant-picker').press('Enter');
    await page.getByTestId('dashboard-tenant').filter({ hasText: tenant }).waitFor();
    await page.locator('nav[aria-label="Console"] a[href="/admin/cms.page"]').waitFor();
    // The token lives in sessionStorage, never in a cookie.
    expect(await page.context().cookies()).to.deep.equal([]);
    expect(await page.evaluate('sessionStorage.getItem("console.token")')).to.be.a('string');
    await checkA11y('dashboard');
  });

  it('registers a schema in the visual builder, showing the server\'s error at its field first', async () => {
    await go('/schemas/create');
    await page.locator('#schema-namespace').fill('shop');
    await page.locator('#schema-name').fill('Product');
    await page.getByRole('button', { name: 'Add field' }).click();
    await page.locator('#field-1-name').fill('sku');
    await page.getByRole('button', { name: 'Add field' }).click();
    await page.locator('#field-2-name').fill('priceCents');
    await page.locator('#field-2-type').click();
    await page.getByRole('option', { name: 'integer' }).click();
    await page.locator('#field-2-min').fill('0');
    await page.getByRole('button', { name: 'Add field' }).click();
    await page.locator('#field-3-name').fill('tier');
    await page.locator('#field-3-enum').fill('basic, premium');
    await page.locator('#schema-unique').fill('sku');
    await page.locator('#schema-indexes').fill('priceCents');
    // The raw JSON follows the builder.
    const json = JSON.parse(await page.locator('#schema-json').inputValue());
    expect(json.properties.priceCents).to.deep.equal({ type: 'integer', minimum: 0 });
    expect(json.properties.tier.enum).to.deep.equal(['basic', 'premium']);
    await checkA11y('schema-builder');
    await screenshot(page, 'schema-builder');

    await page.getByRole('button', { name: 'Register schema' }).click();
    await page.locator('#schema-name-helper-text').filter({ hasText: 'Invalid name "Product"' }).waitFor();
    await page.locator('#schema-name').fill('product');
    await page.getByRole('button', { name: 'Register schema' }).click();
    await page.waitForURL(url('/schemas/shop.product/show'));
    await page.getByText('export interface ShopProduct').waitFor();
    const type = await page.getByRole('region', { name: 'TypeScript type' }).innerText();
    expect(type).to.contain('title: string;').and.contain('priceCents?: number;').and.contain('tier?: "basic" | "premium";');
    expect(await page.getByRole('region', { name: 'curl' }).innerText()).to.contain(`${t.baseUrl}/api/v1/data/shop/product`);
    expect(await page.getByRole('region', { name: 'fetch' }).innerText()).to.contain('await fetch(');
    // The menu has it at once, without a reload of anything.
    await page.locator('nav[aria-label="Console"] a[href="/admin/shop.product"]').waitFor();
    const registered = await t.http.get('/api/v1/metadata/schemas/shop/product').set(superadmin(tenant));
    expect(registered.body.data.item.unique).to.deep.equal([['sku']]);
    await checkA11y('schema-details');

    // A schema registered elsewhere a second ago shows up when the console's window regains focus.
    await t.http.post('/api/v1/metadata/schemas').set(superadmin(tenant))
      .send({ namespace: 'shop', name: 'supplier', schema: { type: 'object', properties: { name: { type: 'string' } } } }).expect(201);
    await page.evaluate('window.dispatchEvent(new Event("focus"))');
    await page.locator('nav[aria-label="Console"] a[href="/admin/shop.supplier"]').waitFor();
  });

  it('creates a record through the generated form, and shows a server validation error inline at its field', async () => {
    await go('/shop.product/create');
    await page.locator('#title').fill('Desk lamp');
    await page.locator('#sku').fill('LAMP-1');
    await page.locator('#priceCents').fill('-5');
    await checkA11y('record-form');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    // The server's ajv message, at the field it concerns.
    await page.locator('#priceCents-helper-text').filter({ hasText: 'must be >= 0' }).waitFor();
    await screenshot(page, 'record-validation');
    await page.locator('#priceCents').fill('4900');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.waitForURL(url('/shop.product'));
    await page.getByRole('cell', { name: 'LAMP-1' }).waitFor();
    const list = await t.http.get('/api/v1/data/shop/product').set(superadmin(tenant));
    expect(list.body.data.items.map((r: { sku: string; priceCents: number }) => [r.sku, r.priceCents])).to.deep.equal([['LAMP-1', 4900]]);
  });

  it('sorts the table by a header and filters it with the query language\'s operators', async () => {
    for (const [sku, priceCents] of [['CHAIR-1', 12900], ['MUG-1', 900], ['RUG-1', 30900]] as const) {
      await t.http.post('/api/v1/data/shop/product').set(superadmin(tenant)).send({ title: sku, sku, priceCents }).expect(201);
    }
    await go('/shop.product');
    await page.getByText('1-4 of 4').waitFor();
    await page.getByRole('button', { name: 'Price' }).click();
    await waitUntil('the console', async () => (await page.locator('tbody tr td.column-sku').first().innerText()) === 'MUG-1', 10_000);
    expect(page.url()).to.contain('sort=priceCents');
    await page.getByRole('button', { name: 'Price' }).click();
    await waitUntil('the console', async () => (await page.locator('tbody tr td.column-sku').first().innerText()) === 'RUG-1', 10_000);

    await page.getByRole('button', { name: 'Add filter' }).click();
    await page.getByRole('menu').getByText('Price ≥', { exact: true }).click();
    await page.getByLabel('Price ≥', { exact: true }).fill('4900');
    await page.getByText('1-3 of 3').waitFor();
    const skus = await page.locator('tbody tr td.column-sku').allInnerTexts();
    expect(skus).to.deep.equal(['RUG-1', 'CHAIR-1', 'LAMP-1']);
    await checkA11y('records-table');
    await screenshot(page, 'records-table');
  });

  it('names a filter no index serves and adds the index as a schema change', async () => {
    // shop.product declares an index on priceCents and a unique sku: a filter on title has neither.
    await go(`/shop.product?filter=${encodeURIComponent(JSON.stringify({ title: 'MUG-1' }))}`);
    await page.getByText('1-1 of 1').waitFor();
    const advice = page.getByRole('status').filter({ hasText: 'No index serves the filter on title' });
    await advice.waitFor();
    const before = (await t.http.get('/api/v1/metadata/schemas/shop/product').set(superadmin(tenant)).expect(200)).body.data.item;
    await advice.getByRole('button', { name: 'Add an index on title' }).click();
    await advice.waitFor({ state: 'detached' });
    const after = (await t.http.get('/api/v1/metadata/schemas/shop/product').set(superadmin(tenant)).expect(200)).body.data.item;
    expect(after.version).to.equal(before.version + 1);
    expect(after.indexes).to.deep.equal([...before.indexes, ['title']]);
    // A filter an index serves gets no advice.
    await go(`/shop.product?filter=${encodeURIComponent(JSON.stringify({ 'priceCents|gte': 100 }))}`);
    await page.locator('tbody tr').first().waitFor();
    expect(await page.getByText('No index serves the filter').count()).to.equal(0);
  });

  it('explains a 412 on save (the record changed meanwhile) and reloads it on request', async () => {
    const list = await t.http.get('/api/v1/data/shop/product?filter[sku]=LAMP-1').set(superadmin(tenant));
    const id = list.body.data.items[0].id as string;
    await go(`/shop.product/${id}`);
    await page.locator('#title').fill('Desk lamp, brass');
    // Someone else saves first.
    await t.http.patch(`/api/v1/data/shop/product/${id}`).set(superadmin(tenant)).send({ title: 'Desk lamp (renamed elsewhere)' }).expect(200);
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    const alert = page.getByRole('alert').filter({ hasText: 'changed by someone else' });
    await alert.waitFor();
    await screenshot(page, 'version-conflict');
    await alert.getByRole('button', { name: 'Reload' }).click();
    await waitUntil('the console', async () => (await page.locator('#title').inputValue()) === 'Desk lamp (renamed elsewhere)', 10_000);
    await page.locator('#title').fill('Desk lamp, brass');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.waitForURL(url('/shop.product'));
    const saved = await t.http.get(`/api/v1/data/shop/product/${id}`).set(superadmin(tenant));
    expect(saved.body.data.item).to.include({ title: 'Desk lamp, brass', version: 3 });
  });

  it('publishes a page written in Markdown, which the public runtime then serves', async () => {
    await go('/cms.page/create');
    await page.locator('#title').fill('Opening hours');
    await page.locator('#slug').fill('opening-hours');
    await page.locator('#content').fill('# We are open\n\nMonday to **Friday**.');
    await page.getByTestId('markdown-preview').getByRole('heading', { name: 'We are open' }).waitFor();
    await page.getByRole('combobox', { name: 'status' }).click();
    await page.getByRole('option', { name: 'published' }).click();
    await checkA11y('page-editor');
    await screenshot(page, 'page-editor');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.waitForURL(url('/cms.page'));
    const pub = await t.http.get(`/api/v1/public/tenant/${tenant}/content/page?slug=opening-hours`);
    expect(pub.status).to.equal(200);
    expect(pub.body.data.items.map((p: { title: string; content: string }) => [p.title, p.content]))
      .to.deep.equal([['Opening hours', '# We are open\n\nMonday to **Friday**.']]);
  });

  it('uploads a logo through the storage mediator with a live preview, and saves the branding', async () => {
    await go('/tenant');
    await page.getByRole('tab', { name: 'Branding' }).click();
    await page.locator('#logo-file').setInputFiles({ name: 'logo.png', mimeType: 'image/png', buffer: PNG });
    const preview = page.getByTestId('branding-preview').getByRole('img', { name: 'Logo preview' });
    await preview.waitFor();
    await page.locator('#color-primary').fill('#aa3300');
    await checkA11y('tenant-branding');
    await screenshot(page, 'branding');
    await page.getByRole('button', { name: 'Save branding' }).click();
    await page.getByText('Branding saved').waitFor();
    const branding = await t.http.get(`/api/v1/tenants/${tenant}/branding`).set(superadmin());
    expect(branding.body.data.colors.primary).to.equal('#aa3300');
    const logoUrl = branding.body.data.logoUrl as string;
    expect(logoUrl).to.match(new RegExp(`^/api/v1/public/assets/${tenant}/products/branding/logo/`));
    expect(await preview.getAttribute('src')).to.equal(logoUrl);
    const logo = await t.http.get(logoUrl);
    expect(logo.status).to.equal(200);
    expect(Buffer.from(logo.body as Buffer).equals(PNG)).to.equal(true);
  });

  it('explains a 402 on domains as the custom-domain feature', async () => {
    await page.getByRole('tab', { name: 'Domains' }).click();
    await page.locator('#domains').fill('www.example.org');
    await page.getByRole('button', { name: 'Save domains' }).click();
    await page.getByRole('alert').filter({ hasText: 'needs the custom-domain feature' }).waitFor();
  });

  it('invites a member, whose mail the SMTP server receives', async () => {
    await page.getByRole('tab', { name: 'Members' }).click();
    await page.locator('#invite-email').fill('colleague@example.org');
    await page.getByRole('button', { name: 'Send invitation' }).click();
    await page.getByRole('cell', { name: 'colleague@example.org' }).waitFor();
    await checkA11y('tenant-members');
    await screenshot(page, 'members');
    const mails = await smtp.waitFor(1);
    expect(mails[0].to).to.deep.equal(['colleague@example.org']);
    // Quoted-printable: undo soft line breaks and =3D before looking for the link.
    expect(mails[0].raw.replace(/=\r\n/g, '').replace(/=3D/g, '=')).to.contain('http://127.0.0.1/invite?invitation=');
  });

  it('creates a connector (secret shown once), and retries a failed delivery from its log', async () => {
    let answer = 500;
    receiver.responder = (_req, res) => {
      res.writeHead(answer, { Connection: 'close', 'X-Receiver-Trace': `trace-${answer}` });
      res.end(answer === 500 ? 'down for maintenance' : undefined);
    };
    await go('/connectors/create');
    await page.locator('#url').fill(`${receiver.url}/hook`);
    await page.locator('#events').fill('shop.*');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    const secret = await page.getByTestId('connector-secret').innerText();
    expect(secret).to.match(/^[0-9a-f]{48}$/);
    await page.getByRole('button', { name: 'I have copied it' }).click();
    await page.getByRole('heading', { name: 'Delivery log' }).waitFor();

    await t.http.post('/api/v1/data/shop/product').set(superadmin(tenant)).send({ title: 'Lamp 2', sku: 'LAMP-2', priceCents: 100 }).expect(201);
    await waitUntil('the first attempt', async () => receiver.requests.length >= 1, 10_000);
    await waitUntil('the console', async () => {
      await page.getByRole('button', { name: 'Refresh' }).click();
      return (await page.getByTestId('delivery-row').filter({ hasText: 'HTTP 500' }).count()) === 1;
    }, 10_000);
    await checkA11y('connector-deliveries');
    await screenshot(page, 'deliveries');
    answer = 204;
    await page.getByTestId('delivery-row').getByRole('button', { name: 'Retry' }).click();
    await waitUntil('the console', async () => {
      await page.getByRole('button', { name: 'Refresh' }).click();
      return (await page.getByTestId('delivery-row').filter({ hasText: 'delivered' }).count()) === 1;
    }, 15_000);
    expect(receiver.requests.length).to.equal(2);

    // The delivery opened: both attempts with their times and answers, the request with its body as sent and
    // the signature headers explained.
    await page.getByTestId('delivery-row').getByRole('button', { name: 'Details' }).click();
    const details = page.getByTestId('delivery-details');
    await details.getByTestId('attempt-row').nth(1).waitFor();
    const attempts = await details.getByTestId('attempt-row').allInnerTexts();
    expect(attempts[0]).to.contain('HTTP 500');
    expect(attempts[1]).to.contain('HTTP 204');
    expect(JSON.parse(await details.getByTestId('delivery-body').innerText())).to.deep.equal(JSON.parse(receiver.requests[1].body));
    expect(await details.getByTestId('signature-header').count()).to.equal(4);
    // Each attempt's answer: its headers and the start of its body.
    await details.getByText('Answer to attempt 1: HTTP 500', { exact: false }).click();
    const answer1 = details.getByRole('region', { name: 'Answer to attempt 1' });
    await answer1.getByRole('row').filter({ hasText: 'x-receiver-trace' }).filter({ hasText: 'trace-500' }).waitFor();
    expect(await answer1.getByLabel('Body of the answer to attempt 1').innerText()).to.equal('down for maintenance');
    await details.getByText('Answer to attempt 2: HTTP 204', { exact: false }).click();
    await details.getByRole('region', { name: 'Answer to attempt 2' }).getByRole('row').filter({ hasText: 'trace-204' }).waitFor();
    await details.getByText('verify with any Standard Webhooks library', { exact: false }).waitFor();
    await checkA11y('delivery-details');
    await screenshot(page, 'delivery-details');
    // Filters: by status, by event.
    await page.locator('#delivery-status').click();
    await page.getByRole('option', { name: 'failed' }).click();
    await page.getByText('No delivery matches these filters.').waitFor();
    await page.locator('#delivery-status').click();
    await page.getByRole('option', { name: 'Any' }).click();
    await page.locator('#delivery-event').fill('shop.product.created');
    await page.getByTestId('delivery-row').filter({ hasText: 'shop.product.created' }).waitFor();
    await page.locator('#delivery-event').fill('shop.product.deleted');
    await page.getByText('No delivery matches these filters.').waitFor();
  });

  it('saves platform SMTP settings with the password masked, and sends a test mail', async () => {
    await t.http.patch('/api/v1/platform/settings').set(superadmin()).send({ SMTP_PASSWORD: 'smtp-secret' }).expect(200);
    await go('/platform');
    await waitUntil('the console', async () => (await page.locator('#setting-SMTP_PASSWORD').inputValue()) === '********', 10_000);
    expect(await page.locator('#setting-SMTP_PASSWORD').getAttribute('type')).to.equal('password');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Platform settings saved').waitFor();
    await checkA11y('platform-settings');
    const before = smtp.messages.length;
    await page.locator('#test-mail-to').fill('ops@example.org');
    await page.getByRole('button', { name: 'Send a test mail' }).click();
    await page.getByRole('status').filter({ hasText: 'Test mail delivered' }).waitFor();
    await smtp.waitFor(before + 1);
    expect(smtp.messages.at(-1)!.to).to.deep.equal(['ops@example.org']);
  });

  it('shows a viewer the records without edit, create or delete buttons', async () => {
    const viewer = await (await c.browser.newContext({ viewport: { width: 1280, height: 860 } })).newPage();
    try {
      await viewer.goto(url('/'));
      const token = signToken({ tenantId: tenant, role: 'viewer' });
      await viewer.locator('#token').fill(token);
      await viewer.getByRole('button', { name: 'Sign in', exact: true }).click();
      await viewer.getByTestId('current-tenant').filter({ hasText: `Tenant: ${tenant}` }).waitFor();
      await viewer.goto(url('/shop.product'));
      await viewer.getByRole('cell', { name: 'LAMP-1' }).waitFor();
      expect(await viewer.getByRole('link', { name: 'Create' }).count()).to.equal(0);
      expect(await viewer.getByRole('button', { name: 'Delete' }).count()).to.equal(0);
      await viewer.getByRole('cell', { name: 'LAMP-1' }).click();
      await viewer.waitForURL(/\/show$/);
      expect(await viewer.getByRole('link', { name: 'Edit' }).count()).to.equal(0);
      // And the API refuses a viewer's write regardless of the UI.
      const refused = await t.http.post('/api/v1/data/shop/product').set(as(tenant, 'viewer')).send({ title: 'x', sku: 'X-1' });
      expect(refused.status).to.equal(403);
    } finally {
      await viewer.close();
    }
  });

  it('adjusts a product\'s stock with its ledger, and moves an order along its allowed transitions', async () => {
    const created = await t.http.post('/api/v1/erp/products').set(superadmin(tenant))
      .send({ sku: 'DESK-1', name: 'Oak desk', priceCents: 19900, physicalStock: 2 }).expect(201);
    const product = created.body.data;
    await go(`/erp.product/${product.id}`);
    await page.locator('#stock-delta').fill('5');
    await page.getByRole('button', { name: 'Adjust stock' }).click();
    await page.getByTestId('movement-row').filter({ hasText: 'restock' }).waitFor();
    expect(await page.getByTestId('movement-row').count()).to.equal(2);
    await checkA11y('product-stock');
    const after = await t.http.get(`/api/v1/erp/products/${product.id}`).set(superadmin(tenant));
    expect(after.body.data.physicalStock).to.equal(7);

    const placed = await t.http.post('/api/v1/erp/orders').set(superadmin(tenant))
      .send({ clientId: 1, paymentMethod: 'bank_transfer', items: [{ productId: product.number, quantity: 1, unitPrice: 19900 }] }).expect(201);
    await go(`/erp.order/${placed.body.data.id}/show`);
    await page.getByRole('button', { name: 'Mark paid' }).click();
    // Paid: shipping is the Fulfilments section's (CONTRACT 15.4), no longer a status button.
    await page.getByRole('button', { name: 'Ship the rest' }).waitFor();
    // The status buttons render from the same answer, maybe a frame later: Mark paid goes (10 s bound; else the test fails).
    await page.getByRole('button', { name: 'Mark paid' }).waitFor({ state: 'detached', timeout: 10_000 });
    const order = await t.http.get(`/api/v1/erp/orders/${placed.body.data.id}`).set(superadmin(tenant));
    expect(order.body.data.status).to.equal('paid');
  });

  it('shows the screens packs declare beside their code: menu sections, routes, list actions, and no create for a sealed schema (#28)', async () => {
    // Discovered from the packs' definitions (`admin` in packs/<name>/index.ts), none named by the console itself.
    await go('/');
    const menu = page.locator('nav[aria-label="Console"]');
    await menu.locator('section[aria-label="Content"] a[href="/admin/content/import"]').waitFor();
    for (const path of ['/crm/tickets/new', '/crm/carts', '/crm/coupons']) await menu.locator(`section[aria-label="CRM"] a[href="/admin${path}"]`).waitFor();
    // crm.ticket is sealed (GET /metadata/schemas says so): its table offers the pack's own form, not the generated one.
    await go('/crm.ticket');
    await page.getByRole('link', { name: 'New ticket' }).waitFor();
    expect(await page.getByRole('link', { name: 'Create' }).count()).to.equal(0);
    await page.getByRole('link', { name: 'New ticket' }).click();
    await page.waitForURL(url('/crm/tickets/new'));
    await page.getByRole('button', { name: 'Open ticket' }).waitFor();
    // A schema that is not sealed keeps its generated form.
    await go('/erp.product');
    await page.getByRole('link', { name: 'Create' }).waitFor();
  });

  it('previews a site import (dry run: nothing written), then applies it', async () => {
    const site = await startTestSite();
    try {
      await go('/content/import');
      await page.locator('#import-url').fill(`${site.url}/`);
      await page.getByRole('button', { name: 'Preview (dry run)' }).click();
      await page.getByRole('heading', { name: 'Preview: nothing written yet' }).waitFor();
      const preview = page.getByRole('table', { name: 'Import pages' });
      await preview.getByRole('cell', { name: 'about', exact: true }).waitFor();
      expect(await preview.locator('tbody tr').count()).to.equal(3);
      await checkA11y('site-import');
      await screenshot(page, 'site-import-preview');
      const before = await t.http.get('/api/v1/data/cms/page?filter[slug]=about').set(superadmin(tenant));
      expect(before.body.data.items).to.deep.equal([]);

      await page.getByRole('button', { name: 'Apply import' }).click();
      await page.getByRole('heading', { name: 'Imported' }).waitFor();
      const after = await t.http.get('/api/v1/data/cms/page?filter[slug]=about').set(superadmin(tenant));
      expect(after.body.data.items.map((p: { title: string; status: string }) => [p.title, p.status])).to.deep.equal([['About Acme', 'draft']]);
    } finally {
      await site.stop();
    }
  });

  it('opens a support ticket from the form generated from its route, moves it along its statuses and shows its history', async () => {
    await go('/crm.ticket');
    await page.getByRole('link', { name: 'New ticket' }).click();
    await page.getByRole('combobox', { name: 'type' }).click();
    await page.getByRole('option', { name: 'complaint' }).click();
    await page.locator('#subject').fill('Parcel arrived damaged');
    await page.locator('#description').fill('The box was crushed and two mugs were broken.');
    await page.locator('#customerRef').fill('cust-77');
    await page.locator('#contactEmail').fill('not an address');
    await page.getByRole('button', { name: 'Open ticket' }).click();
    // The route's own validation, at the field of the form generated from its OpenAPI body.
    await page.locator('#contactEmail-helper-text').filter({ hasText: 'must match format "email"' }).waitFor();
    await checkA11y('ticket-form');
    await page.locator('#contactEmail').fill('ana@example.org');
    await page.getByRole('button', { name: 'Open ticket' }).click();
    await page.waitForURL(/\/crm\.ticket\/[^/]+\/show$/);
    const id = page.url().split('/').at(-2)!;
    await page.getByTestId('ticket-status').filter({ hasText: 'new' }).waitFor();
    await page.getByRole('button', { name: 'Open', exact: true }).click();
    await page.getByTestId('ticket-status').filter({ hasText: /^open$/ }).waitFor();
    await page.getByRole('button', { name: 'Resolve' }).click();
    await page.getByTestId('ticket-status').filter({ hasText: 'resolved' }).waitFor();
    await waitUntil('the history', async () => (await page.getByTestId('history-row').count()) === 3, 10_000);
    expect(await page.getByTestId('history-row').allInnerTexts()).to.have.length(3);
    await checkA11y('ticket-history');
    await screenshot(page, 'ticket-history');
    const ticket = (await t.http.get(`/api/v1/crm/support-tickets/${id}`).set(superadmin(tenant))).body.data;
    expect(ticket).to.include({ type: 'complaint', customerRef: 'cust-77', contactEmail: 'ana@example.org', status: 'resolved' });
    expect(ticket.history.map((h: { from: string | null; to: string }) => [h.from, h.to])).to.deep.equal([[null, 'new'], ['new', 'open'], ['open', 'resolved']]);
  });

  it('previews abandoned carts (dry run), recovers them with a coupon, and lists the coupon', async () => {
    const ago = (minutes: number) => new Date(Date.now() - minutes * 60_000).toISOString();
    // Cart recovery keeps only skus that are products of the tenant.
    await t.http.post('/api/v1/erp/products').set(superadmin(tenant)).send({ sku: 'MUG-1', name: 'Mug', priceCents: 900 }).expect(201);
    for (const [customerRef, minutes] of [['cart-ana', 180], ['cart-ben', 5]] as const) {
      await t.http.post('/api/v1/crm/events').set(superadmin(tenant))
        .send({ customerRef, eventType: 'cart.item_added', occurredAt: ago(minutes), eventData: { sku: 'MUG-1', quantity: 2 } }).expect(201);
    }
    await go('/crm/carts');
    await page.locator('#olderThanMinutes').waitFor();
    expect(await page.locator('#olderThanMinutes').inputValue()).to.equal('60');
    await page.locator('[id="coupon.percentOff"]').fill('15');
    await page.getByRole('button', { name: 'Preview (dry run)' }).click();
    await page.getByRole('heading', { name: /^Preview: 1 cart/ }).waitFor();
    expect(await page.getByTestId('cart-row').innerText()).to.contain('cart-ana').and.contain('2 × MUG-1');
    expect(await page.getByTestId('skipped-row').innerText()).to.contain('cart-ben').and.contain('still shopping');
    expect((await t.http.get('/api/v1/crm/coupons').set(superadmin(tenant))).body.data.items).to.deep.equal([]);
    await checkA11y('abandoned-carts');

    await page.getByRole('button', { name: 'Recover carts' }).click();
    await page.getByRole('heading', { name: /^Recovered 1 cart/ }).waitFor();
    const code = (await page.getByTestId('cart-coupon').innerText()).split(' ')[0];
    expect(code).to.match(/^[ABCDEFGHJKLMNPQRSTUVWXYZ23456789]{12}$/);
    await screenshot(page, 'abandoned-carts');
    const coupons = (await t.http.get('/api/v1/crm/coupons').set(superadmin(tenant))).body.data.items;
    expect(coupons.map((c: { code: string; customerRef: string; percentOff: number }) => [c.code, c.customerRef, c.percentOff])).to.deep.equal([[code, 'cart-ana', 15]]);

    await page.locator('nav[aria-label="Console"] a[href="/admin/crm/coupons"]').click();
    await page.getByTestId('coupon-row').filter({ hasText: code }).waitFor();
    await page.locator('#coupon-customer').fill('someone-else');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByText('No coupons for someone-else.').waitFor();
    await checkA11y('coupons');
  });

  it('has no serious or critical accessibility violations on the main screens (axe-core)', () => {
    expect(Object.keys(c.violations)).to.have.length.greaterThan(10);
    expect(screensWithViolations(c.violations)).to.deep.equal([]);
  });
});
