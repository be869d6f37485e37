import { expect } from 'chai';
import type { PlatformEvent } from '../../../core/events/event.js';
import { createTenant, sharedTestApp, startTestApp, type TestApp } from '../../helpers/test-app.js';
import { as } from '../../helpers/tokens.js';
import { withinOneWindow } from '../../helpers/rate-window.js';
import { FORM_RATE_LIMIT } from '../../../packs/cms/public.routes.js';

const contactForm = {
  title: 'Contact us',
  fields: [
    { name: 'name', label: 'Name', type: 'text', required: true },
    { name: 'email', label: 'E-mail', type: 'email', required: true },
    { name: 'topic', type: 'select', options: ['sales', 'support'] },
    { name: 'message', type: 'textarea' },
    { name: 'copies', type: 'number' },
    { name: 'newsletter', type: 'checkbox' },
  ],
};

describe('POST /api/v1/public/tenant/:tenantId/forms/:formId/submit', () => {
  let t: TestApp;
  let tenant: string;
  const events: PlatformEvent[] = [];

  before(async () => {
    t = await sharedTestApp();
    t.app.kernel.events.on('cms.form.submitted', (event) => { events.push(event); });
  });

  beforeEach(async () => {
    tenant = await createTenant(t, 'form');
  });

  const createForm = async (status: 'draft' | 'published' = 'published') => {
    const res = await t.http.post(`/api/v1/tenant/${tenant}/content/form`).set(as(tenant, 'editor')).send({ ...contactForm, status });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body.data;
  };
  const submit = (formId: string, body: unknown, ip?: string) => {
    const req = t.http.post(`/api/v1/public/tenant/${tenant}/forms/${formId}/submit`);
    if (ip) req.set('X-Forwarded-For', ip);
    return req.send(body as object);
  };
  const submissions = async () => (await t.http.get(`/api/v1/tenant/${tenant}/content/form_submission`).set(as(tenant, 'viewer'))).body.data;

  it('stores a valid submission (form by id or slug) and emits cms.form.submitted', async () => {
    const form = await createForm();
    const res = await submit(form.id, { name: 'Ada', email: 'ada@example.com', topic: 'sales', newsletter: true });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    expect(res.body.data.id).to.be.a('string');
    expect(res.body.data.receivedAt).to.be.a('string');
    const bySlug = await submit('contact-us', { name: 'Bob', email: 'bob@example.com' });
    expect(bySlug.status).to.equal(201);

    const stored = await submissions();
    expect(stored.pagination.total).to.equal(2);
    const first = stored.items.find((s: any) => s.id === res.body.data.id);
    expect(first).to.deep.include({ formId: form.id, data: { name: 'Ada', email: 'ada@example.com', topic: 'sales', newsletter: true } });
    await new Promise((r) => setTimeout(r, 20));
    const event = events.find((e) => (e.payload as any).submissionId === res.body.data.id);
    expect(event, 'cms.form.submitted').to.not.equal(undefined);
    expect(event!.tenantId).to.equal(tenant);
    expect((event!.payload as any).formId).to.equal(form.id);
  });

  it('answers 400 validation_failed naming each failing field', async () => {
    const form = await createForm();
    const res = await submit(form.id, { email: 'not-an-email', topic: 'other', extra: 1 });
    expect(res.status).to.equal(400);
    expect(res.body.error.code).to.equal('validation_failed');
    const paths = res.body.error.details.map((d: any) => d.path);
    expect(paths).to.include.members(['/name', '/email', '/topic', '/extra']);
    expect((await submissions()).pagination.total).to.equal(0);
  });

  it('answers 404 not_found for a draft form and for an unknown form', async () => {
    const draft = await createForm('draft');
    const res = await submit(draft.id, { name: 'Ada', email: 'ada@example.com' });
    expect(res.status).to.equal(404);
    expect(res.body.error.code).to.equal('not_found');
    expect((await submit('no-such-form', { name: 'Ada' })).status).to.equal(404);
    expect((await submit('0190a1b2-0000-7000-8000-000000000000', { name: 'Ada' })).status).to.equal(404);
  });

  it('accepts but drops a submission with the honeypot filled', async () => {
    const form = await createForm();
    const res = await submit(form.id, { name: 'Bot', email: 'bot@example.com', _hp: 'http://spam.example' });
    expect(res.status).to.equal(201);
    expect((await submissions()).pagination.total).to.equal(0);
  });

  it('answers 429 with Retry-After past the rate limit, per client and form', async () => {
    const form = await createForm();
    await withinOneWindow(FORM_RATE_LIMIT.windowMs, 10_000);
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await submit(form.id, { name: `N${i}`, email: 'n@example.com' })).status);
    expect(statuses).to.deep.equal([201, 201, 201, 201, 201, 429]);
    const limited = await submit(form.id, { name: 'N', email: 'n@example.com' });
    expect(limited.status).to.equal(429);
    expect(limited.body.error.code).to.equal('rate_limited');
    expect(Number(limited.headers['retry-after'])).to.be.within(1, 60);
    // Another form of the same tenant is counted apart.
    const other = await t.http.post(`/api/v1/tenant/${tenant}/content/form`).set(as(tenant, 'editor')).send({ ...contactForm, title: 'Other', status: 'published' });
    expect((await submit(other.body.data.id, { name: 'N', email: 'n@example.com' })).status).to.equal(201);
  });

  it('answers 413 for a body over 64 KiB', async () => {
    const form = await createForm();
    const res = await submit(form.id, { name: 'A', email: 'a@example.com', message: 'x'.repeat(70 * 1024) });
    expect(res.status).to.equal(413);
    expect(res.body.error.code).to.equal('payload_too_large');
  });

  it('answers 404 tenant_not_found for an unknown tenant and keeps tenants apart', async () => {
    const form = await createForm();
    const unknown = await t.http.post(`/api/v1/public/tenant/nobody-here/forms/${form.id}/submit`).send({ name: 'A', email: 'a@example.com' });
    expect(unknown.status).to.equal(404);
    expect(unknown.body.error.code).to.equal('tenant_not_found');
    const other = await createTenant(t, 'form');
    const foreign = await t.http.post(`/api/v1/public/tenant/${other}/forms/${form.id}/submit`).send({ name: 'A', email: 'a@example.com' });
    expect(foreign.status).to.equal(404);
    expect(foreign.body.error.code).to.equal('not_found');
  });
});

describe('POST /api/v1/public/tenant/:tenantId/forms/:formId/submit (client address)', () => {
  const submitAll = async (t: TestApp, tenant: string, formId: string, ips: Array<string | null>) => {
    const statuses: number[] = [];
    for (const [i, ip] of ips.entries()) {
      const req = t.http.post(`/api/v1/public/tenant/${tenant}/forms/${formId}/submit`);
      if (ip) req.set('X-Forwarded-For', ip);
      statuses.push((await req.send({ name: `N${i}`, email: 'n@example.com' })).status);
    }
    return statuses;
  };
  const publishForm = async (t: TestApp, tenant: string) => {
    const res = await t.http.post(`/api/v1/tenant/${tenant}/content/form`).set(as(tenant, 'editor')).send({ ...contactForm, status: 'published' });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body.data.id as string;
  };
  const five = <T>(value: T): T[] => Array.from({ length: FORM_RATE_LIMIT.limit }, () => value);

  it('ignores X-Forwarded-For without TRUST_PROXY: a client cannot dodge the limit by sending the header', async () => {
    const t = await sharedTestApp();
    const tenant = await createTenant(t, 'form');
    const formId = await publishForm(t, tenant);
    await withinOneWindow(FORM_RATE_LIMIT.windowMs, 10_000);
    const statuses = await submitAll(t, tenant, formId, ['203.0.113.1', '203.0.113.2', '203.0.113.3', '203.0.113.4', '203.0.113.5', '203.0.113.6', null]);
    expect(statuses).to.deep.equal([...five(201), 429, 429]);
  });

  describe('with TRUST_PROXY=true', () => {
    let t: TestApp;
    before(async () => { t = await startTestApp({ env: { TRUST_PROXY: 'true' } }); });
    after(async () => { await t?.close(); });

    it('counts two X-Forwarded-For addresses apart', async () => {
      const tenant = await createTenant(t, 'form');
      const formId = await publishForm(t, tenant);
      await withinOneWindow(FORM_RATE_LIMIT.windowMs, 10_000);
      expect(await submitAll(t, tenant, formId, [...five('198.51.100.7'), '198.51.100.7'])).to.deep.equal([...five(201), 429]);
      // Only the nearest proxy's hop counts: a client-sent address before it is ignored.
      expect(await submitAll(t, tenant, formId, ['10.9.9.9, 198.51.100.8', '198.51.100.8'])).to.deep.equal([201, 201]);
      expect(await submitAll(t, tenant, formId, ['198.51.100.7, 198.51.100.9'])).to.deep.equal([201]);
    });

    it('counts IPv6 clients by their /64 prefix', async () => {
      const tenant = await createTenant(t, 'form');
      const formId = await publishForm(t, tenant);
      await withinOneWindow(FORM_RATE_LIMIT.windowMs, 10_000);
      const sameNetwork = ['2001:db8:1:2::1', '2001:db8:1:2::2', '2001:db8:1:2:aaaa::3', '2001:db8:1:2::4', '2001:db8:1:2::5', '2001:db8:1:2:ffff:ffff:ffff:ffff'];
      expect(await submitAll(t, tenant, formId, sameNetwork)).to.deep.equal([...five(201), 429]);
      expect(await submitAll(t, tenant, formId, ['2001:db8:1:3::1'])).to.deep.equal([201]);
    });
  });
});
