import { expect } from 'chai';
import { consoleSuite, screenshot, screensWithViolations } from '../helpers/browser.js';
import { createTenant, startTestApp } from '../helpers/test-app.js';
import { TEST_KEY, as } from '../helpers/tokens.js';
import { ORDERS, Shop, Storefront, dataOf, type Json } from '../packs/erp/shop.js';

/**
 * ERP's order page (headless Chromium, TEST_DB's engine): the payments, parcels and refunds of an order and the
 * actions on them, each through the public API, its errors shown beside the action.
 */
describe('admin console: an order\'s payments, fulfilments and refunds (headless Chromium)', function () {
  this.timeout(180_000);
  let shop: Shop;
  let store: Storefront;
  const suite = consoleSuite('order', TEST_KEY, async () => {
    const app = await startTestApp();
    const tenant = await createTenant(app, 'orderpage');
    shop = new Shop(app, tenant);
    store = new Storefront(shop);
    await shop.product({ sku: 'MUG', name: 'Mug', priceCents: 1000, physicalStock: 10 });
    await shop.product({ sku: 'TEA', name: 'Tea', priceCents: 500, physicalStock: 10 });
    return { app, tenant };
  });
  /** A bank-transfer order of 3 MUG and 2 TEA, placed through a storefront cart. */
  const placeOrder = async () => {
    const cart = await store.cart({ email: 'ann@example.com', items: [{ sku: 'MUG', quantity: 3 }, { sku: 'TEA', quantity: 2 }] });
    return dataOf(await store.write('post', cart, 'checkout', { paymentMethod: 'bank_transfer' }), 201).order as Json;
  };
  const read = async (order: Json) => dataOf(await suite.app.http.get(`${ORDERS}/${order.id}`).set(as(suite.tenant, 'viewer')), 200);
  const stockOf = async (sku: string) => {
    const res = await suite.app.http.get(`/api/v1/erp/products?filter[sku]=${sku}`).set(as(suite.tenant, 'viewer')).expect(200);
    return res.body.data.items[0].physicalStock as number;
  };

  it('marks an order paid, ships a parcel with tracking and the rest, shows a refused refund in place and refunds items with restock', async () => {
    const { c: { page }, c } = suite;
    const order = await placeOrder();
    await c.go(`/erp.order/${order.id}/show`);
    const status = page.getByRole('region', { name: 'Status' });
    const parcels = page.getByRole('region', { name: 'Fulfilments' });
    const refunds = page.getByRole('region', { name: 'Refunds' });
    const payments = page.getByRole('region', { name: 'Payments' });
    await payments.getByText('No payment yet.').waitFor();

    // Shipping before the payment: the API's 409 invalid_transition, shown beside the action.
    await parcels.getByRole('button', { name: 'Ship the rest' }).click();
    await parcels.getByRole('alert').filter({ hasText: 'invalid_transition' }).waitFor();

    await status.getByRole('button', { name: 'Mark paid' }).click();
    await payments.getByTestId('payment').filter({ hasText: 'manual' }).waitFor();
    await payments.getByTestId('payment-status').filter({ hasText: /^paid$/ }).waitFor();

    await parcels.locator('#ship-MUG').fill('1');
    await parcels.getByRole('textbox', { name: 'Carrier' }).fill('DHL');
    await parcels.getByRole('textbox', { name: 'Tracking number' }).fill('JD0001');
    await parcels.getByRole('textbox', { name: 'Tracking URL' }).fill('https://track.example.com/JD0001');
    await parcels.getByRole('button', { name: 'Ship parcel' }).click();
    await parcels.getByTestId('fulfillment').filter({ hasText: '1 × MUG' }).filter({ hasText: 'JD0001' }).waitFor();
    await parcels.getByTestId('fulfillment-status').filter({ hasText: 'partially_fulfilled' }).waitFor();
    expect(await parcels.getByRole('link', { name: 'JD0001' }).getAttribute('href')).to.equal('https://track.example.com/JD0001');

    // More than was paid: 409 refund_exceeds_payment in place, nothing written.
    await refunds.getByRole('textbox', { name: /^Amount/ }).fill('100000');
    await refunds.getByRole('button', { name: 'Refund', exact: true }).click();
    await refunds.getByRole('alert').filter({ hasText: 'refund_exceeds_payment' }).waitFor();
    expect((await read(order)).refunds).to.deep.equal([]);

    await refunds.getByRole('radio', { name: 'By items' }).check();
    await refunds.locator('#refund-TEA').fill('1');
    await refunds.getByRole('checkbox', { name: 'Put the items back into stock' }).check();
    await refunds.getByRole('textbox', { name: 'Reason' }).fill('Broken in transit');
    await refunds.getByRole('button', { name: 'Refund', exact: true }).click();
    await refunds.getByTestId('refund').filter({ hasText: '1 × TEA (restocked)' }).filter({ hasText: 'succeeded' }).waitFor();
    await refunds.getByRole('alert').waitFor({ state: 'detached' });

    // What the console did is what the API shows.
    const refunded = await read(order);
    expect(refunded.refunds).to.have.length(1);
    expect(refunded.refunds[0]).to.include({ status: 'succeeded', restock: true, reason: 'Broken in transit' });
    expect(refunded.refunds[0].items.map((i: Json) => [i.sku, i.quantity])).to.deep.equal([['TEA', 1]]);
    expect(refunded.refundedCents).to.equal(refunded.refunds[0].amountCents).and.be.greaterThan(0);
    expect(refunded.paymentStatus).to.equal('partially_refunded');
    expect(await stockOf('TEA')).to.equal(9);
    await payments.getByTestId('payment-status').filter({ hasText: 'partially_refunded' }).waitFor();

    await parcels.getByRole('button', { name: 'Ship the rest' }).click();
    await status.getByTestId('order-status').filter({ hasText: /^fulfilled$/ }).waitFor();
    await parcels.getByTestId('fulfillment-status').filter({ hasText: /^fulfilled$/ }).waitFor();
    expect((await read(order)).fulfillments).to.have.length(2);
    await c.checkA11y('order-page');
    await screenshot(page, 'order-page');
  });

  it('cancels a paid order after naming the refund, and the refund is on the order', async () => {
    const { c: { page }, c } = suite;
    const order = await placeOrder();
    await suite.app.http.patch(`${ORDERS}/${order.id}`).set(as(suite.tenant, 'editor')).send({ status: 'paid' }).expect(200);
    await c.go(`/erp.order/${order.id}/show`);
    const status = page.getByRole('region', { name: 'Status' });
    await status.getByRole('button', { name: 'Cancel order' }).click();
    await status.getByText(/^Refund .* and cancel\?$/).waitFor();
    await status.getByRole('button', { name: 'Refund and cancel' }).click();
    await status.getByTestId('order-status').filter({ hasText: /^cancelled$/ }).waitFor();
    await page.getByRole('region', { name: 'Refunds' }).getByTestId('refund').filter({ hasText: 'succeeded' }).waitFor();
    const cancelled = await read(order);
    expect(cancelled).to.include({ status: 'cancelled', paymentStatus: 'refunded', refundedCents: cancelled.totalCents });
    expect(await stockOf('MUG'), 'the second order\'s mugs are back').to.equal(7);
    await c.checkA11y('order-cancelled');
  });

  it('has no serious or critical accessibility violations on the order page (axe-core)', () => {
    expect(screensWithViolations(suite.c.violations)).to.deep.equal([]);
  });
});
