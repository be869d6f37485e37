import { expect } from 'chai';
import { FORM_RATE_LIMIT } from '../../packs/cms/public.routes.js';
import { INVITATION_RATE } from '../../packs/tenant-admin/invitations.service.js';
import { startTenantAdminApp, type TenantAdminTestApp } from '../packs/tenant-admin/tenant-admin-app.js';
import { secondsToWindowEnd, withinOneWindow } from '../helpers/rate-window.js';
import { createTenant, sharedTestApp, startTestApp, type TestApp } from '../helpers/test-app.js';
import { as } from '../helpers/tokens.js';

const form = { title: 'Contact', fields: [{ name: 'name', type: 'text', required: true }] };

async function publishForm(t: TestApp, tenant: string): Promise<string> {
  const res = await t.http.post(`/api/v1/tenant/${tenant}/content/form`).set(as(tenant, 'editor')).send({ ...form, status: 'published' });
  expect(res.status, JSON.stringify(res.body)).to.equal(201);
  return res.body.data.id;
}

const submit = (t: TestApp, tenant: string, formId: string, name = 'Ada') =>
  t.http.post(`/api/v1/public/tenant/${tenant}/forms/${formId}/submit`).send({ name });

async function storedSubmissions(t: TestApp, tenant: string): Promise<number> {
  const res = await t.http.get(`/api/v1/tenant/${tenant}/content/form_submission`).set(as(tenant, 'viewer'));
  return res.body.data.pagination.total;
}

function expectRateLimited(res: { status: number; body: any; headers: Record<string, string> }, windowMs: number): void {
  expect(res.status).to.equal(429);
  expect(res.body.error.code).to.equal('rate_limited');
  const retryAfter = Number(res.headers['retry-after']);
  expect(Number.isInteger(retryAfter), `Retry-After ${res.headers['retry-after']}`).to.equal(true);
  expect(retryAfter).to.be.within(1, windowMs / 1000);
}

describe('POST /api/v1/public/tenant/:tenantId/forms/:formId/submit (rate limit in the database)', () => {
  let t: TestApp;
  let second: TestApp;

  before(async () => {
    t = await sharedTestApp();
    // A second process on the same database, as behind a load balancer.
    second = await startTestApp({ database: t.database, env: { MIGRATE_ON_START: 'false' } });
  });
  after(async () => {
    await second?.close();
  });

  it(`accepts exactly ${FORM_RATE_LIMIT.limit} of 12 concurrent submissions and answers the rest 429 with Retry-After`, async () => {
    const tenant = await createTenant(t, 'rl');
    const formId = await publishForm(t, tenant);
    await withinOneWindow(FORM_RATE_LIMIT.windowMs, 10_000);
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => submit(t, tenant, formId, `N${i}`)));
    const accepted = results.filter((r) => r.status === 201);
    expect(accepted).to.have.length(FORM_RATE_LIMIT.limit);
    for (const res of results.filter((r) => r.status !== 201)) expectRateLimited(res, FORM_RATE_LIMIT.windowMs);
    expect(await storedSubmissions(t, tenant)).to.equal(FORM_RATE_LIMIT.limit);
  });

  it('shares the limit between two processes on one database', async () => {
    const tenant = await createTenant(t, 'rl');
    const formId = await publishForm(t, tenant);
    await withinOneWindow(FORM_RATE_LIMIT.windowMs, 10_000);
    // Alternating between the processes, sequentially: the sixth is refused wherever it lands.
    const statuses: number[] = [];
    for (let i = 0; i < FORM_RATE_LIMIT.limit + 1; i++) statuses.push((await submit(i % 2 ? second : t, tenant, formId)).status);
    expect(statuses).to.deep.equal([...Array(FORM_RATE_LIMIT.limit).fill(201), 429]);
    const fromSecond = await submit(second, tenant, formId);
    expectRateLimited(fromSecond, FORM_RATE_LIMIT.windowMs);
  });

  it('accepts exactly the limit from concurrent submissions spread over two processes', async () => {
    const tenant = await createTenant(t, 'rl');
    const formId = await publishForm(t, tenant);
    await withinOneWindow(FORM_RATE_LIMIT.windowMs, 10_000);
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => submit(i % 2 ? second : t, tenant, formId, `P${i}`)));
    expect(results.filter((r) => r.status === 201)).to.have.length(FORM_RATE_LIMIT.limit);
    expect(results.filter((r) => r.status === 429)).to.have.length(12 - FORM_RATE_LIMIT.limit);
    expect(await storedSubmissions(second, tenant)).to.equal(FORM_RATE_LIMIT.limit);
  });

  it('answers a Retry-After that points at the end of the current window', async () => {
    const tenant = await createTenant(t, 'rl');
    const formId = await publishForm(t, tenant);
    await withinOneWindow(FORM_RATE_LIMIT.windowMs, 10_000);
    for (let i = 0; i < FORM_RATE_LIMIT.limit; i++) expect((await submit(t, tenant, formId)).status).to.equal(201);
    const before = secondsToWindowEnd(FORM_RATE_LIMIT.windowMs);
    const res = await submit(t, tenant, formId);
    const after = secondsToWindowEnd(FORM_RATE_LIMIT.windowMs);
    expectRateLimited(res, FORM_RATE_LIMIT.windowMs);
    const retryAfter = Number(res.headers['retry-after']);
    expect(retryAfter).to.be.within(Math.max(1, Math.floor(after)), Math.ceil(before));
  });

  it('counts each form and each tenant apart', async () => {
    const tenant = await createTenant(t, 'rl');
    const other = await createTenant(t, 'rl');
    const [a, b, c] = [await publishForm(t, tenant), await publishForm(t, tenant), await publishForm(t, other)];
    await withinOneWindow(FORM_RATE_LIMIT.windowMs, 10_000);
    for (let i = 0; i < FORM_RATE_LIMIT.limit; i++) expect((await submit(t, tenant, a)).status).to.equal(201);
    expect((await submit(t, tenant, a)).status).to.equal(429);
    expect((await submit(second, tenant, b)).status).to.equal(201);
    expect((await submit(second, other, c)).status).to.equal(201);
  });
});

describe('POST /api/v1/tenants/:id/invitations (rate limit in the database)', () => {
  let first: TenantAdminTestApp;
  let second: TenantAdminTestApp;
  let tenant: string;

  before(async () => {
    first = await startTenantAdminApp();
    second = await startTenantAdminApp({ database: first.database, env: { MIGRATE_ON_START: 'false' } });
  });
  after(async () => {
    await second?.close();
    await first?.close();
  });
  beforeEach(async () => {
    tenant = await createTenant(first, 'rlinv');
  });

  const invite = (t: TestApp, email: string) =>
    t.http.post(`/api/v1/tenants/${tenant}/invitations`).set(as(tenant, 'admin')).send({ email, role: 'viewer' });

  it(`creates exactly ${INVITATION_RATE.limit} of ${INVITATION_RATE.limit + 4} concurrent invitations over two processes`, async () => {
    await withinOneWindow(INVITATION_RATE.windowMs, 30_000);
    const total = INVITATION_RATE.limit + 4;
    const results = await Promise.all(Array.from({ length: total }, (_, i) => invite(i % 2 ? second : first, `c${i}.${tenant}@example.test`)));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 201), JSON.stringify(statuses)).to.have.length(INVITATION_RATE.limit);
    for (const res of results.filter((r) => r.status !== 201)) expectRateLimited(res, INVITATION_RATE.windowMs);
    const list = await second.http.get(`/api/v1/tenants/${tenant}/invitations`).set(as(tenant, 'admin'));
    expect(list.body.data).to.have.length(INVITATION_RATE.limit);
  });

  it('does not count an invitation that is refused (409 already_member)', async () => {
    await withinOneWindow(INVITATION_RATE.windowMs, 30_000);
    expect((await invite(first, `dup.${tenant}@example.test`)).status).to.equal(201);
    for (let i = 0; i < 5; i++) expect((await invite(second, `dup.${tenant}@example.test`)).status).to.equal(409);
    for (let i = 1; i < INVITATION_RATE.limit; i++) expect((await invite(i % 2 ? second : first, `n${i}.${tenant}@example.test`)).status).to.equal(201);
    expectRateLimited(await invite(first, `last.${tenant}@example.test`), INVITATION_RATE.windowMs);
  });
});

describe('RateLimitService (pack.rateLimits)', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(async () => {
    await t?.close();
  });

  // First in this app: the service prunes at most once a minute per process.
  it('deletes windows that ended', async () => {
    const tenant = await createTenant(t, 'rlsvc');
    const rate = { limit: 5, windowMs: 1000 };
    const rows = () => t.app.kernel.db.knex('rate_limits').where({ tenant_id: tenant }).select('bucket', 'window_start');
    // A window that ended 10 minutes ago (the clock passed in), then a hit now: the old one is pruned.
    await t.app.kernel.rateLimits.hit(tenant, 'old', rate, Date.now() - 10 * 60_000);
    await t.app.kernel.rateLimits.hit(tenant, 'new', rate);
    expect((await rows()).map((r: { bucket: string }) => r.bucket)).to.not.include('old');
  });

  it('starts a new count when the window ends', async () => {
    const rate = { limit: 2, windowMs: 400 };
    const tenant = await createTenant(t, 'rlsvc');
    await withinOneWindow(rate.windowMs, 250);
    const hits = [];
    for (let i = 0; i < 3; i++) hits.push(await t.app.kernel.rateLimits.hit(tenant, 'reset', rate));
    expect(hits.map((h) => [h.allowed, h.remaining])).to.deep.equal([[true, 1], [true, 0], [false, 0]]);
    expect(hits[2].retryAfterSeconds).to.equal(1);
    await new Promise((r) => setTimeout(r, secondsToWindowEnd(rate.windowMs) * 1000 + 20));
    const next = await t.app.kernel.rateLimits.hit(tenant, 'reset', rate);
    expect([next.allowed, next.remaining]).to.deep.equal([true, 1]);
  });
});
