import { expect } from 'chai';
import { systemContext } from '../../core/base/request-context.js';
import { openConsole, screenshot, screensWithViolations, type ConsoleDriver } from '../helpers/browser.js';
import { HttpReceiver } from '../helpers/http-receiver.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { TEST_KEY, superadmin } from '../helpers/tokens.js';
import { waitUntil } from '../helpers/wait.js';

const daysAgo = (days: number) => new Date(Date.now() - days * 86400000).toISOString();

/**
 * The console's first hour (issue 32), in headless Chromium against a fresh platform on TEST_DB's engine: sign-in,
 * the first tenant created from the dashboard, its empty cards saying what to do next, then the same dashboard
 * with a shop's orders (a chart of 30 days), low stock, a failing delivery, recent changes and a cart to recover.
 */
describe('admin console: the dashboard and the first hour (headless Chromium)', function () {
  this.timeout(120_000);
  let t: TestApp;
  let c: ConsoleDriver;
  let receiver: HttpReceiver;
  let tenant: string;

  before(async function () {
    this.timeout(180_000);
    receiver = await new HttpReceiver().start();
    t = await startTestApp({ env: { DISPATCHER_RETRY_BASE_MS: '600000' } });
    c = await openConsole(t.baseUrl);
  });

  afterEach(async function () {
    await c?.keepFailure(this.currentTest, 'dashboard');
  });

  after(async () => {
    await c?.close();
    await t?.close();
    await receiver?.stop();
  });

  it('leads a superadmin on an empty platform to create the first tenant, then shows its empty dashboard with next steps', async () => {
    const { page } = c;
    const before = await t.http.get('/api/v1/admin/tenants').set(superadmin()).expect(200);
    expect(before.body.data.items, 'a fresh platform').to.deep.equal([]);
    await c.signIn(TEST_KEY);
    const form = page.getByRole('form', { name: 'Create your first tenant' });
    await form.waitFor();
    await c.checkA11y('first-tenant');
    await screenshot(page, 'first-tenant');
    await form.getByLabel(/^Tenant name/).fill('Corner Shop');
    await form.getByRole('button', { name: 'Create tenant' }).click();
    await page.getByTestId('dashboard-tenant').filter({ hasText: /\S/ }).waitFor();
    tenant = (await page.getByTestId('dashboard-tenant').innerText()).trim();
    const created = await t.http.get(`/api/v1/admin/tenants/${tenant}`).set(superadmin()).expect(200);
    expect(created.body.data.name).to.equal('Corner Shop');

    // Every card of an empty tenant says what to do next.
    await page.getByRole('region', { name: 'Sales, last 30 days' }).getByText('No orders in the last 30 days').waitFor();
    await page.getByRole('region', { name: 'Failing deliveries' }).getByText('No connectors yet').waitFor();
    await page.getByRole('region', { name: 'Low stock' }).getByText('Every active product has 5 or more in stock').waitFor();
    await page.getByRole('region', { name: 'Abandoned carts' }).getByText('No cart to recover now').waitFor();
    const products = page.getByRole('region', { name: 'Records' }).getByTestId('record-count').filter({ hasText: 'Product' });
    await products.getByText('0', { exact: true }).waitFor();
    await c.checkA11y('dashboard-empty');
    await screenshot(page, 'dashboard-empty');
  });

  it('shows a shop\'s orders and net revenue per day for 30 days as a chart, low stock, a failing delivery, recent changes and a cart to recover', async () => {
    const { page } = c;
    const headers = superadmin(tenant);
    const product = (await t.http.post('/api/v1/erp/products').set(headers).send({ sku: 'MUG-1', name: 'Blue mug', priceCents: 1000, physicalStock: 50 }).expect(201)).body.data;
    await t.http.post('/api/v1/erp/products').set(headers).send({ sku: 'LAMP-1', name: 'Desk lamp', priceCents: 4000, physicalStock: 2 }).expect(201);
    // Orders on three days of the last 30 (placed now, then dated back as the report reads them).
    const kernel = t.app.kernel;
    const rc = systemContext(tenant);
    const { tableName } = await kernel.schemas.resolve(rc, 'erp', 'order');
    for (const [days, quantity] of [[0, 2], [3, 1], [3, 1], [12, 4]] as const) {
      const order = (await t.http.post('/api/v1/erp/orders').set(headers)
        .send({ clientId: 1, paymentMethod: 'bank_transfer', items: [{ productId: product.number, quantity, unitPrice: 1000 }] }).expect(201)).body.data;
      await kernel.db.sql(rc).rows(`UPDATE ${tableName} SET created_at = ? WHERE tenant_id = ? AND id = ?`, [daysAgo(days), tenant, order.id]);
    }
    // A connector whose endpoint is gone (410): its delivery fails at once.
    receiver.responder = (_req, res) => { res.writeHead(410); res.end('gone'); };
    await t.http.post('/api/v1/connectors').set(headers).send({ url: `${receiver.url}/hook`, events: ['erp.*'], secret: 'a-secret-of-24-characters!' }).expect(201);
    await t.http.post('/api/v1/erp/products').set(headers).send({ sku: 'PEN-1', name: 'Pen', priceCents: 150, physicalStock: 0 }).expect(201);
    await waitUntil('the failed deliveries (product created, inventory updated)', async () => receiver.requests.length >= 2, 10_000);
    // A known customer's cart, left three hours ago.
    await t.http.post('/api/v1/crm/events').set(headers)
      .send({ customerRef: 'ana', eventType: 'cart.item_added', occurredAt: daysAgo(0.125), eventData: { sku: 'LAMP-1', quantity: 1 } }).expect(201);

    await c.go('/');
    const sales = page.getByRole('region', { name: 'Sales, last 30 days' });
    // 4 orders of 8 mugs in all, 1190 cents each (19 % VAT): €95.20.
    await sales.getByTestId('sales-summary').filter({ hasText: '4 orders' }).waitFor();
    expect(await sales.getByTestId('sales-summary').innerText()).to.contain('€95.20 net of refunds');
    const chart = sales.getByTestId('sales-chart');
    await chart.locator('.recharts-line-dot').first().waitFor();
    expect(await chart.locator('.recharts-line-dot').count(), 'one point a day').to.equal(30);
    expect(await chart.getAttribute('aria-label')).to.contain('4 orders');

    const low = page.getByRole('region', { name: 'Low stock' }).getByTestId('low-stock');
    expect((await low.allInnerTexts()).map((text) => text.replace(/\s+/g, ' '))).to.deep.equal(['Pen PEN-1: out of stock', 'Desk lamp LAMP-1: 2 left']);
    const failing = page.getByRole('region', { name: 'Failing deliveries' }).getByTestId('failing-delivery');
    // The pen's creation raised erp.product.created and erp.inventory.updated: both deliveries failed, in either order.
    await failing.nth(1).waitFor();
    const failed = await failing.allInnerTexts();
    expect(failed.some((text) => text.includes('erp.product.created')), failed.join(' | ')).to.equal(true);
    for (const text of failed) expect(text).to.contain('HTTP 410');
    const changes = page.getByRole('region', { name: 'Recent changes' }).getByTestId('recent-change');
    await changes.first().waitFor();
    expect(await changes.first().innerText()).to.match(/created erp\.product\//);
    const carts = page.getByRole('region', { name: 'Abandoned carts' });
    await carts.getByTestId('abandoned-cart').filter({ hasText: '1 × LAMP-1' }).waitFor();
    const counts = page.getByRole('region', { name: 'Records' }).getByTestId('record-count');
    await counts.filter({ hasText: 'Product' }).getByText('3', { exact: true }).waitFor();
    await c.checkA11y('dashboard-shop');
    await screenshot(page, 'dashboard-shop');
  });

  it('has no serious or critical accessibility violations on the dashboard (axe-core)', () => {
    expect(Object.keys(c.violations)).to.have.length(3);
    expect(screensWithViolations(c.violations)).to.deep.equal([]);
  });
});
