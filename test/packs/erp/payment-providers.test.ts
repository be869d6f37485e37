import { expect } from 'chai';
import { systemContext } from '../../../core/base/request-context.js';
import { createTenant, sharedTestApp, type TestApp } from '../../helpers/test-app.js';
import { as } from '../../helpers/tokens.js';

const PROVIDERS = '/api/v1/erp/payment-providers';
const SECRET = 'sk_test_51Habcdefghijklmnop1234';
const WEBHOOK = 'whsec_0123456789abcdefWXYZ';

describe('Payment providers (CONTRACT 15.3, first bullet)', () => {
  let t: TestApp;
  let tenant: string;
  const admin = () => as(tenant, 'admin');

  before(async () => {
    t = await sharedTestApp();
  });

  beforeEach(async () => {
    tenant = await createTenant(t, 'pay');
  });

  it('lists stripe (not enabled) and the manual methods (always enabled)', async () => {
    const res = await t.http.get(PROVIDERS).set(admin()).expect(200);
    expect(res.body.data.items).to.deep.equal([
      { provider: 'stripe', enabled: false, secretKey: null, webhookSecret: null, publishableKey: null },
      { provider: 'bank_transfer', enabled: true },
      { provider: 'cash_on_delivery', enabled: true },
    ]);
  });

  it('stores Stripe\'s keys encrypted and answers them masked; DELETE disables and keeps them', async () => {
    const put = await t.http.put(`${PROVIDERS}/stripe`).set(admin()).send({ secretKey: SECRET, webhookSecret: WEBHOOK, publishableKey: 'pk_test_abcdefgh1234' });
    expect(put.status, JSON.stringify(put.body)).to.equal(200);
    expect(put.body.data).to.deep.equal({ provider: 'stripe', enabled: true, secretKey: 'sk_…1234', webhookSecret: 'whsec_…WXYZ', publishableKey: 'pk_test_abcdefgh1234' });
    expect(JSON.stringify((await t.http.get(PROVIDERS).set(admin())).body)).to.not.include(SECRET.slice(3, -4));
    const [row] = await t.app.kernel.db.sql(systemContext(tenant)).rows<Record<string, string>>('SELECT secret_key, webhook_secret FROM erp_payment_providers WHERE tenant_id = ?', [tenant]);
    expect(row.secret_key).to.match(/^v1:/).and.not.include(SECRET.slice(3));
    expect(row.webhook_secret).to.match(/^v1:/).and.not.include(WEBHOOK.slice(6));
    const restricted = await t.http.put(`${PROVIDERS}/stripe`).set(admin()).send({ secretKey: 'rk_live_abcdefghijkl9876', webhookSecret: WEBHOOK }).expect(200);
    expect(restricted.body.data).to.include({ secretKey: 'rk_…9876', publishableKey: null });
    const off = await t.http.delete(`${PROVIDERS}/stripe`).set(admin()).expect(200);
    expect(off.body.data).to.include({ enabled: false, secretKey: 'rk_…9876', webhookSecret: 'whsec_…WXYZ' });
    expect((await t.http.get(PROVIDERS).set(admin())).body.data.items[0]).to.include({ provider: 'stripe', enabled: false, secretKey: 'rk_…9876' });
  });

  it('answers 400 for keys with the wrong prefix, 404 for DELETE without keys, 403 to an editor', async () => {
    for (const body of [{ secretKey: 'pk_test_abcdefghijkl', webhookSecret: WEBHOOK }, { secretKey: SECRET, webhookSecret: 'wh_0123456789abcdef' }, { secretKey: SECRET }]) {
      const res = await t.http.put(`${PROVIDERS}/stripe`).set(admin()).send(body);
      expect(res.status).to.equal(400);
      expect(JSON.stringify(res.body)).to.not.include(SECRET);
    }
    expect((await t.http.delete(`${PROVIDERS}/stripe`).set(admin())).status).to.equal(404);
    expect((await t.http.put(`${PROVIDERS}/stripe`).set(as(tenant, 'editor')).send({ secretKey: SECRET, webhookSecret: WEBHOOK })).status).to.equal(403);
    expect((await t.http.get(PROVIDERS).set(as(tenant, 'editor'))).status).to.equal(403);
  });

  it('keeps each tenant\'s keys apart', async () => {
    await t.http.put(`${PROVIDERS}/stripe`).set(admin()).send({ secretKey: SECRET, webhookSecret: WEBHOOK }).expect(200);
    const other = await createTenant(t, 'pay');
    expect((await t.http.get(PROVIDERS).set(as(other, 'admin'))).body.data.items[0]).to.include({ enabled: false, secretKey: null });
  });
});
