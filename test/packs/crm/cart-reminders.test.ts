import { expect } from 'chai';
import { startSmtpServer, type TestSmtpServer } from '../../helpers/smtp-server.js';
import { createTenant, startTestApp, type TestApp } from '../../helpers/test-app.js';
import { as } from '../../helpers/tokens.js';
import { ensureProduct } from './cart-products.js';
import { Shop, type Json } from '../erp/shop.js';

const RECOVER = '/api/v1/crm/recover-abandoned-carts';
const contactOf = (customerRef: string) => `/api/v1/crm/customers/${customerRef}/contact`;
const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000).toISOString();
/** A mail's body with quoted-printable soft line breaks undone. */
const bodyOf = (raw: string) => raw.replace(/=\r?\n/g, '');

/** Contact addresses of customers, and the cart reminders the recovery mails to them, through a real SMTP server. */
describe('CRM cart reminders by mail', () => {
  let t: TestApp;
  let smtp: TestSmtpServer;
  let tenant: string;

  before(async () => {
    smtp = await startSmtpServer();
    t = await startTestApp({ env: { SMTP_HOST: '127.0.0.1', SMTP_PORT: String(smtp.port), SMTP_FROM: 'shop@example.test', DISPATCHER_RETRY_BASE_MS: '100' } });
  });

  after(async () => {
    await t.close();
    await smtp.stop();
  });

  beforeEach(async () => {
    tenant = await createTenant(t, 'remind');
    smtp.messages.length = 0;
  });

  const put = (customerRef: string, body: Json, on = tenant) => t.http.put(contactOf(customerRef)).set(as(on, 'editor')).send(body);
  const add = async (customerRef: string, sku: string, on = tenant) => {
    await ensureProduct(t, on, sku);
    const res = await t.http.post('/api/v1/crm/events').set(as(on, 'editor'))
      .send({ customerRef, eventType: 'cart.item_added', eventData: { sku, quantity: 2 }, occurredAt: minutesAgo(120) });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
  };
  const recover = async (body: Json = {}, on = tenant) => {
    const res = await t.http.post(RECOVER).set(as(on, 'admin')).send(body);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body.data as { recovered: Json[]; skipped: Json[] };
  };

  describe('contact addresses', () => {
    it('sets, replaces, reads and erases a customer\'s contact', async () => {
      const first = await put('cust-1', { email: 'ana@example.test', cartReminders: true });
      expect(first.status, JSON.stringify(first.body)).to.equal(200);
      expect(first.body.data).to.include({ customerRef: 'cust-1', email: 'ana@example.test', cartReminders: true });
      expect((await put('cust-1', { email: 'ana.new@example.test', cartReminders: false })).body.data).to.include({ email: 'ana.new@example.test', cartReminders: false });
      const read = await t.http.get(contactOf('cust-1')).set(as(tenant, 'editor'));
      expect(read.status).to.equal(200);
      expect(read.body.data).to.include({ customerRef: 'cust-1', email: 'ana.new@example.test', cartReminders: false });
      expect(read.body.data.updatedAt).to.be.a('string');

      expect((await t.http.delete(contactOf('cust-1')).set(as(tenant, 'editor'))).status).to.equal(403);
      const erased = await t.http.delete(contactOf('cust-1')).set(as(tenant, 'admin'));
      expect(erased.status).to.equal(200);
      expect(erased.body.data).to.deep.equal({ deleted: 1 });
      const gone = await t.http.get(contactOf('cust-1')).set(as(tenant, 'editor'));
      expect(gone.status).to.equal(404);
      expect(gone.body.error.code).to.equal('not_found');
    });

    it('answers 400 for a bad address, a missing consent or another key, 404 for a customerRef that is an address, 403 to a viewer', async () => {
      for (const body of [{ email: 'not-an-address', cartReminders: true }, { email: 'ana@example.test' }, { email: 'ana@example.test', cartReminders: true, name: 'Ana' }]) {
        const res = await put('cust-1', body);
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(res.body.error.code).to.equal('validation_failed');
      }
      expect((await put('ana@example.test', { email: 'ana@example.test', cartReminders: true })).status).to.equal(404);
      expect((await t.http.put(contactOf('cust-1')).set(as(tenant, 'viewer')).send({ email: 'ana@example.test', cartReminders: true })).status).to.equal(403);
    });

    it('keeps tenants apart', async () => {
      const other = await createTenant(t, 'remind-other');
      await put('cust-1', { email: 'ana@example.test', cartReminders: true }).expect(200);
      expect((await t.http.get(contactOf('cust-1')).set(as(other, 'editor'))).status).to.equal(404);
      expect((await t.http.delete(contactOf('cust-1')).set(as(other, 'admin'))).body.data).to.deep.equal({ deleted: 0 });
      expect((await t.http.get(contactOf('cust-1')).set(as(tenant, 'editor'))).status).to.equal(200);
    });
  });

  describe('the recovery mail', () => {
    it('mails each recovered cart\'s message, coupon and recommendations to customers who take reminders, once', async () => {
      const shop = new Shop(t, tenant);
      const mug = await shop.product({ sku: 'MUG', name: 'Blue mug', physicalStock: 50 });
      const pen = await shop.product({ sku: 'PEN', name: 'Fountain pen', physicalStock: 50 });
      await shop.order([{ productId: mug.number, quantity: 1, unitPrice: mug.priceCents }, { productId: pen.number, quantity: 1, unitPrice: pen.priceCents }], { customerRef: 'buyer' }).expect(201);
      await put('ana', { email: 'ana@example.test', cartReminders: true }).expect(200);
      await put('ben', { email: 'ben@example.test', cartReminders: false }).expect(200);
      for (const customer of ['ana', 'ben', 'cat']) await add(customer, 'MUG');

      expect((await recover({ dryRun: true })).recovered).to.have.length(3);
      const result = await recover({ coupon: { percentOff: 15, expiresInDays: 3 } });
      expect(result.recovered.map((c) => c.customerRef)).to.deep.equal(['ana', 'ben', 'cat']);
      const ana = result.recovered[0];
      expect(ana.recommendations).to.deep.equal([{ sku: 'PEN', name: 'Fountain pen', reason: 'bought_together' }]);

      const [mail] = await smtp.waitFor(1);
      expect(mail.to).to.deep.equal(['ana@example.test']);
      expect(mail.raw).to.match(new RegExp(`Subject: Your cart is waiting: 15% off with ${ana.coupon.code}`));
      const body = bodyOf(mail.raw);
      expect(body).to.contain(ana.coupon.code);
      expect(body).to.contain('Fountain pen');
      expect(body).to.contain(ana.coupon.expiresAt.slice(0, 10));

      // A second run recovers nothing new and mails nothing; neither did the dry run before.
      expect((await recover()).skipped.map((s) => s.reason)).to.deep.equal(['already_recovered', 'already_recovered', 'already_recovered']);
      await new Promise((r) => setTimeout(r, 500));
      expect(smtp.messages).to.have.length(1);
    });

    it('mails the address of the tenant that recovers the cart only', async () => {
      const other = await createTenant(t, 'remind-other');
      await put('ana', { email: 'ana@example.test', cartReminders: true }).expect(200);
      await put('ana', { email: 'ana.elsewhere@example.test', cartReminders: true }, other).expect(200);
      await add('ana', 'MUG');
      await add('ana', 'MUG', other);
      const [cart] = (await recover()).recovered;
      const [mail] = await smtp.waitFor(1);
      expect(mail.to).to.deep.equal(['ana@example.test']);
      expect(bodyOf(mail.raw)).to.contain(cart.coupon.code);
      await new Promise((r) => setTimeout(r, 500));
      expect(smtp.messages).to.have.length(1);
    });
  });
});
