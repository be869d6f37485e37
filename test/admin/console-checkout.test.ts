import { expect } from 'chai';
import { consoleSuite, screenshot, screensWithViolations } from '../helpers/browser.js';
import { createTenant, startTestApp } from '../helpers/test-app.js';
import { TEST_KEY, superadmin } from '../helpers/tokens.js';

/** ERP's checkout settings screen (headless Chromium, TEST_DB's engine): tax regions, shipping options, Stripe's write-only keys. */
describe('admin console: checkout settings (headless Chromium)', function () {
  this.timeout(120_000);
  const suite = consoleSuite('checkout', TEST_KEY, async () => {
    const app = await startTestApp();
    return { app, tenant: await createTenant(app, 'checkout') };
  });

  it('sets a country\'s rates as percent, creates a shipping option priced as money, and connects Stripe with its keys masked', async () => {
    const { c, app: t, tenant } = suite;
    const { page } = c;
    await c.go('/erp/checkout');
    const regions = page.getByRole('region', { name: 'Tax regions' });
    await regions.getByText('No tax regions yet').waitFor();
    await regions.locator('#tax-country').fill('de');
    await regions.getByRole('textbox', { name: /^Standard rate/ }).fill('19');
    await regions.getByRole('textbox', { name: /^Reduced rate/ }).fill('7');
    await regions.getByRole('button', { name: 'Save rates' }).click();
    await regions.getByTestId('tax-region').filter({ hasText: 'DE' }).waitFor();
    const stored = (await t.http.get('/api/v1/erp/tax-regions/DE').set(superadmin(tenant)).expect(200)).body.data;
    expect(stored).to.include({ standardRateBasisPoints: 1900, reducedRateBasisPoints: 700 });

    const shipping = page.getByRole('region', { name: 'Shipping options' });
    await shipping.getByRole('textbox', { name: /^Name/ }).fill('Standard');
    await shipping.getByRole('textbox', { name: /^Price/ }).fill('4.95');
    await shipping.locator('#shipping-countries').fill('de, at');
    await shipping.getByRole('button', { name: 'Create shipping option' }).click();
    await shipping.getByTestId('shipping-option').filter({ hasText: '€4.95' }).filter({ hasText: 'DE, AT' }).waitFor();

    const providers = page.getByRole('region', { name: 'Payment providers' });
    await providers.getByRole('textbox', { name: /^Secret key/ }).fill('sk_test_abcdefgh1234');
    await providers.getByRole('textbox', { name: /^Webhook secret/ }).fill('whsec_abcdefgh5678');
    await providers.getByRole('button', { name: 'Save Stripe keys' }).click();
    const stripe = providers.getByTestId('payment-provider').filter({ hasText: 'stripe' });
    await stripe.filter({ hasText: 'enabled' }).waitFor();
    const text = await stripe.innerText();
    expect(text).to.contain('1234').and.not.contain('sk_test_abcdefgh1234');
    await c.checkA11y('checkout-settings');
    await screenshot(page, 'checkout-settings');
  });

  it('edits a shipping option as money with If-Match, shows a change saved meanwhile instead of overwriting it, and deletes it', async () => {
    const { c, app: t, tenant } = suite;
    const { page } = c;
    const options = async () => (await t.http.get('/api/v1/erp/shipping-options').set(superadmin(tenant)).expect(200)).body.data.items as Array<Record<string, any>>;
    const [standard] = await options();
    await c.go('/erp/checkout');
    const shipping = page.getByRole('region', { name: 'Shipping options' });
    await shipping.getByRole('button', { name: 'Edit Standard' }).click();
    await shipping.locator('#edit-shipping-price').fill('5.50');
    await shipping.locator('#edit-shipping-free-above').fill('50');
    await shipping.getByRole('button', { name: 'Save option' }).click();
    await shipping.getByTestId('shipping-option').filter({ hasText: '€5.50' }).filter({ hasText: '€50.00' }).waitFor();
    const [saved] = await options();
    expect(saved).to.include({ id: standard.id, priceCents: 550, freeAboveCents: 5000, version: standard.version + 1 });

    // Opened, then changed through the API: the console's save is refused (412) and said, the other change kept.
    await shipping.getByRole('button', { name: 'Edit Standard' }).click();
    await t.http.patch(`/api/v1/erp/shipping-options/${standard.id}`).set(superadmin(tenant)).send({ name: 'Standard (2-3 days)' }).expect(200);
    await shipping.locator('#edit-shipping-price').fill('6');
    await shipping.getByRole('button', { name: 'Save option' }).click();
    await shipping.getByTestId('shipping-option-editor').getByRole('alert').waitFor();
    const [kept] = await options();
    expect(kept).to.include({ name: 'Standard (2-3 days)', priceCents: 550 });
    await c.checkA11y('checkout-shipping-edit');

    await shipping.getByRole('button', { name: 'Reload' }).click();
    await shipping.getByRole('button', { name: 'Edit Standard (2-3 days)' }).click();
    await shipping.getByRole('button', { name: 'Delete option' }).click();
    // The editor closes once the DELETE has answered (while it is open the option's row is the editor, so the row
    // alone was detached before the request was made); then the list is read again without the option.
    await shipping.getByTestId('shipping-option-editor').waitFor({ state: 'detached' });
    await shipping.getByTestId('shipping-option').first().waitFor({ state: 'detached' });
    expect(await options()).to.deep.equal([]);
  });

  it('has no serious or critical accessibility violations on the screen (axe-core)', () => {
    expect(screensWithViolations(suite.c.violations)).to.deep.equal([]);
  });
});
