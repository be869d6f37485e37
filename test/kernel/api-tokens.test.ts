import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { createTestDatabase, ENGINE, type TestDatabase } from '../helpers/engine.js';
import { startServiceProcess, type ServiceProcess } from '../helpers/service-process.js';
import { createTenant, sharedTestApp, startTestApp, uniqueTenantId, type TestApp } from '../helpers/test-app.js';
import { as, bearer, signToken, superadmin, TEST_KEY } from '../helpers/tokens.js';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function expectInvalidToken(res: { status: number; headers: Record<string, string>; body: any }) {
  expect(res.status, JSON.stringify(res.body)).to.equal(401);
  expect(res.headers['www-authenticate']).to.match(/^Bearer/);
  expect(res.body.error?.code ?? res.body.data?.code).to.equal('invalid_token');
}

const thingSchema = { namespace: 'tok', name: 'thing', schema: { type: 'object', properties: { title: { type: 'string' } } } };

describe('API tokens: /api/v1/tenants/:id/api-tokens (CONTRACT.md 16.2)', () => {
  let t: TestApp;
  let tenant: string;
  let other: string;
  const admin = () => as(tenant, 'admin', { sub: 'admin-of-tokens' });
  const tokens = (id = tenant) => `/api/v1/tenants/${id}/api-tokens`;
  const create = async (body: Record<string, unknown>, headers = admin()) => {
    const res = await t.http.post(tokens()).set(headers).send(body);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body.data;
  };
  const listed = async () => (await t.http.get(tokens()).set(admin()).expect(200)).body.data.items as any[];

  before(async () => {
    t = await sharedTestApp();
    tenant = await createTenant(t, 'tok');
    other = await createTenant(t, 'tok-other');
    await t.http.post('/api/v1/metadata/schemas').set(admin()).send(thingSchema).expect(201);
  });

  it('POST answers 201 with the secret once; GET lists the token without it', async () => {
    const created = await create({ name: 'Storefront', role: 'viewer' });
    expect(created.token).to.match(/^pat_[0-9A-Za-z]{40}$/);
    expect(created).to.include({ name: 'Storefront', role: 'viewer', prefix: created.token.slice(4, 12), lastUsedAt: null, revokedAt: null, expiresAt: null, createdBy: 'admin-of-tokens' });
    expect(Date.parse(created.createdAt)).to.be.closeTo(Date.now(), 60_000);
    const item = (await listed()).find((i) => i.id === created.id);
    const { token: _secret, ...shown } = created;
    expect(item).to.deep.equal(shown);
    expect(item).to.not.have.property('token');
  });

  it('stores only the SHA-256 of the secret (the row, read from the database)', async () => {
    const created = await create({ name: 'Hashed', role: 'editor' });
    const rows = await t.app.kernel.db.sql(null).rows<Record<string, unknown>>('SELECT * FROM api_tokens WHERE tenant_id = ? AND id = ?', [tenant, created.id]);
    expect(rows).to.have.length(1);
    expect(rows[0]!.token_hash).to.equal(sha256(created.token));
    expect(rows[0]!.prefix).to.equal(created.prefix);
    for (const value of Object.values(rows[0]!)) expect(String(value)).to.not.include(created.token.slice(4));
  });

  it('a viewer token reads the tenant and may not write (403); an editor token writes', async () => {
    const viewer = bearer((await create({ name: 'Reader', role: 'viewer' })).token);
    expect((await t.http.get('/api/v1/data/tok/thing').set(viewer)).status).to.equal(200);
    const denied = await t.http.post('/api/v1/data/tok/thing').set(viewer).send({ title: 'no' });
    expect(denied.status).to.equal(403);
    expect(denied.body.data.code).to.equal('forbidden');
    const editor = bearer((await create({ name: 'Writer', role: 'editor' })).token);
    const written = await t.http.post('/api/v1/data/tok/thing').set(editor).send({ title: 'yes' });
    expect(written.status, JSON.stringify(written.body)).to.equal(201);
    // Naming its own tenant is fine.
    expect((await t.http.get('/api/v1/data/tok/thing').set(viewer).set('X-Tenant-Id', tenant)).status).to.equal(200);
    // An editor token is no admin.
    expect((await t.http.post('/api/v1/metadata/schemas').set(editor).send({ ...thingSchema, name: 'other' })).status).to.equal(403);
  });

  it('an admin token administers the tenant but may not create or revoke tokens (403), and is never a superadmin', async () => {
    const created = await create({ name: 'Automation', role: 'admin' });
    const token = bearer(created.token);
    expect((await t.http.get(tokens()).set(token)).status).to.equal(200);
    const made = await t.http.post(tokens()).set(token).send({ name: 'Child', role: 'viewer' });
    expect(made.status).to.equal(403);
    expect(made.body.error.code).to.equal('forbidden');
    const revoked = await t.http.delete(`${tokens()}/${created.id}`).set(token);
    expect(revoked.status).to.equal(403);
    expect((await t.http.get(tokens()).set(token)).body.data.items.find((i: any) => i.id === created.id).revokedAt).to.equal(null);
    const platform = await t.http.post('/api/v1/admin/tenants').set(token).send({ name: 'Not mine' });
    expect(platform.status).to.equal(403);
    expect(platform.body.error.code).to.equal('superadmin_required');
  });

  it('is never a member: /organizations names its own tenant only, and /auth/me the token', async () => {
    const created = await create({ name: 'Who am I', role: 'editor' });
    const orgs = await t.http.get('/api/v1/organizations').set(bearer(created.token)).expect(200);
    expect(orgs.body.data.map((o: any) => o.id)).to.deep.equal([tenant]);
    const me = await t.http.get('/api/v1/auth/me').set(bearer(created.token)).expect(200);
    expect(me.body.data).to.include({ userId: created.id, tenantId: tenant, isSuperadmin: false, role: 'editor', email: null, name: 'Who am I' });
  });

  it('a busy token costs no query: its lookup is kept (X-Query-Count as with a JWT of its role)', async () => {
    const token = bearer((await create({ name: 'Busy', role: 'viewer' })).token);
    const fewest = async (headers: Record<string, string>) => {
      const counts: number[] = [];
      for (let i = 0; i < 5; i++) counts.push(Number((await t.http.get('/api/v1/data/tok/thing').set(headers).expect(200)).headers['x-query-count']));
      return Math.min(...counts);
    };
    await fewest(token);
    expect(await fewest(token)).to.be.at.most(await fewest(as(tenant, 'viewer')));
  });

  it('a token of one tenant gets 403 on another tenant, by path and by X-Tenant-Id', async () => {
    const token = bearer((await create({ name: 'Scoped', role: 'admin' })).token);
    expect((await t.http.get(tokens(other)).set(token)).status).to.equal(403);
    expect((await t.http.get(`/api/v1/admin/tenants/${other}`).set(token)).status).to.equal(403);
    const header = await t.http.get('/api/v1/metadata/schemas').set(token).set('X-Tenant-Id', other);
    expect(header.status).to.equal(403);
    expect(header.body.data.code).to.equal('forbidden');
  });

  it('answers 401 invalid_token for an unknown, malformed or expired token', async () => {
    expectInvalidToken(await t.http.get('/api/v1/data/tok/thing').set(bearer(`pat_${'A'.repeat(40)}`)));
    expectInvalidToken(await t.http.get('/api/v1/data/tok/thing').set(bearer('pat_short')));
    const soon = await create({ name: 'Short-lived', role: 'viewer', expiresAt: new Date(Date.now() + 1500).toISOString() });
    expect((await t.http.get('/api/v1/data/tok/thing').set(bearer(soon.token))).status).to.equal(200);
    await sleep(Date.parse(soon.expiresAt) - Date.now() + 50);
    const expired = await t.http.get('/api/v1/data/tok/thing').set(bearer(soon.token));
    expectInvalidToken(expired);
    expect(expired.body.message ?? expired.body.data.message).to.match(/expired/);
  });

  it('DELETE revokes: the token answers 401 at once in this process, and the list shows revokedAt', async () => {
    const created = await create({ name: 'To revoke', role: 'viewer' });
    expect((await t.http.get('/api/v1/data/tok/thing').set(bearer(created.token))).status).to.equal(200);
    const res = await t.http.delete(`${tokens()}/${created.id}`).set(admin()).expect(200);
    expect(res.body.data.revokedAt).to.be.a('string');
    expectInvalidToken(await t.http.get('/api/v1/data/tok/thing').set(bearer(created.token)));
    expect((await listed()).find((i) => i.id === created.id).revokedAt).to.equal(res.body.data.revokedAt);
    // Again: nothing changes.
    expect((await t.http.delete(`${tokens()}/${created.id}`).set(admin()).expect(200)).body.data.revokedAt).to.equal(res.body.data.revokedAt);
    expect((await t.http.delete(`${tokens()}/${created.id}`).set(as(other, 'admin'))).status).to.equal(403);
    expect((await t.http.delete(`${tokens(other)}/${created.id}`).set(as(other, 'admin'))).status).to.equal(404);
    expect((await t.http.delete(`${tokens()}/no-such-token`).set(admin())).status).to.equal(404);
  });

  it('writes lastUsedAt on use, and not again within the minute', async () => {
    const created = await create({ name: 'Used', role: 'viewer' });
    await t.http.get('/api/v1/data/tok/thing').set(bearer(created.token)).expect(200);
    const first = (await listed()).find((i) => i.id === created.id).lastUsedAt;
    expect(first).to.be.a('string');
    await sleep(20);
    await t.http.get('/api/v1/data/tok/thing').set(bearer(created.token)).expect(200);
    // A second app on the same database has not seen the token used: its write is the conditional one.
    const second = await startTestApp({ database: t.database, env: { MIGRATE_ON_START: 'false' } });
    try {
      await second.http.get('/api/v1/data/tok/thing').set(bearer(created.token)).expect(200);
    } finally {
      await second.close();
    }
    expect((await listed()).find((i) => i.id === created.id).lastUsedAt).to.equal(first);
  });

  it('a replay under Idempotency-Key answers the same token with token: null, and the key keeps no secret', async () => {
    const key = `tok-${Date.now()}`;
    const body = { name: 'Retried', role: 'viewer' };
    const first = await t.http.post(tokens()).set(admin()).set('Idempotency-Key', key).send(body);
    expect(first.status).to.equal(201);
    expect(first.body.data.token).to.match(/^pat_/);
    const again = await t.http.post(tokens()).set(admin()).set('Idempotency-Key', key).send(body);
    expect(again.status).to.equal(201);
    expect(again.headers['idempotent-replayed']).to.equal('true');
    expect(again.body.data).to.deep.equal({ ...first.body.data, token: null });
    expect((await listed()).filter((i) => i.name === 'Retried')).to.have.length(1);
    const kept = await t.app.kernel.db.sql(null).rows<{ response: string }>('SELECT response FROM idempotency_requests WHERE tenant_id = ?', [tenant]);
    expect(kept.length).to.be.greaterThan(0);
    for (const row of kept) expect(row.response).to.not.include(first.body.data.token.slice(4));
  });

  it('answers 400 naming the path for bad bodies', async () => {
    const bad = async (body: Record<string, unknown>, path: string) => {
      const res = await t.http.post(tokens()).set(admin()).send(body);
      expect(res.status, JSON.stringify(body)).to.equal(400);
      expect(res.body.error.code).to.equal('validation_failed');
      expect(res.body.error.details.map((d: any) => d.path), JSON.stringify(res.body)).to.include(path);
    };
    await bad({ name: 'Old', role: 'viewer', expiresAt: new Date(Date.now() - 60_000).toISOString() }, '/expiresAt');
    await bad({ name: 'Odd', role: 'viewer', expiresAt: 'tomorrow' }, '/expiresAt');
    await bad({ name: 'Who', role: 'owner' }, '/role');
    await bad({ name: 'Root', role: 'superadmin' }, '/role');
    await bad({ name: '', role: 'viewer' }, '/name');
    await bad({ name: '   ', role: 'viewer' }, '/name');
    await bad({ name: 'x'.repeat(101), role: 'viewer' }, '/name');
    await bad({ name: 'No role' }, '/role');
    await bad({ name: 'Extra', role: 'viewer', scopes: ['all'] }, '/scopes');
    expect((await listed()).filter((i) => ['Old', 'Odd', 'Who', 'Root'].includes(i.name))).to.have.length(0);
  });

  it('only an admin of the tenant (or a superadmin) manages tokens', async () => {
    expect((await t.http.get(tokens()).set(as(tenant, 'editor'))).status).to.equal(403);
    expect((await t.http.post(tokens()).set(as(tenant, 'editor')).send({ name: 'E', role: 'viewer' })).status).to.equal(403);
    expect((await t.http.post(tokens()).set(as(other, 'admin')).send({ name: 'O', role: 'viewer' })).status).to.equal(403);
    const bySuperadmin = await t.http.post(tokens()).set(superadmin()).send({ name: 'Platform made', role: 'editor' });
    expect(bySuperadmin.status).to.equal(201);
    expect(bySuperadmin.body.data.createdBy).to.equal('test-key');
  });

  it('the OpenAPI document lists the three operations with their answers (Idempotency-Key, token nullable, 403)', async () => {
    const doc = (await t.http.get('/api/v1/openapi.json').expect(200)).body;
    const list = doc.paths['/api/v1/tenants/{id}/api-tokens'];
    expect(list.get.responses).to.include.keys('200', '401', '403');
    expect(list.post.responses).to.include.keys('201', '400', '401', '403', '422');
    expect(list.post.parameters.map((p: any) => p.$ref)).to.include('#/components/parameters/IdempotencyKey');
    const data = list.post.responses['201'].content['application/json'].schema.properties.data;
    const created = data.$ref ? doc.components.schemas[data.$ref.split('/').pop()] : data;
    expect(created.properties.token.type).to.deep.equal(['string', 'null']);
    expect(doc.paths['/api/v1/tenants/{id}/api-tokens/{tokenId}'].delete.responses).to.include.keys('200', '403', '404');
  });

  it('with NODE_ENV=production the token is accepted and the test key refused (401)', async () => {
    const created = await create({ name: 'Production', role: 'viewer' });
    const prod = await startTestApp({ database: t.database, env: { NODE_ENV: 'production', ALLOW_PRIVATE_NETWORK_FETCH: 'false', MIGRATE_ON_START: 'false', TEST_API_KEY: TEST_KEY } });
    try {
      expect((await prod.http.get('/api/v1/data/tok/thing').set(bearer(created.token))).status).to.equal(200);
      expect((await prod.http.get('/api/v1/data/tok/thing').set(superadmin(tenant))).status).to.equal(401);
      expect((await prod.http.post('/api/v1/data/tok/thing').set(bearer(created.token)).send({ title: 'no' })).status).to.equal(403);
      expect((await prod.http.get(tokens()).set(bearer(signToken({ tenantId: tenant, role: 'admin' })))).status).to.equal(200);
    } finally {
      await prod.close();
    }
  });
});

describe(`API tokens across service processes (${ENGINE})`, function () {
  this.timeout(120_000);
  let database: TestDatabase;
  const services: ServiceProcess[] = [];

  before(async () => {
    database = await createTestDatabase();
  });

  after(async () => {
    for (const s of services.splice(0)) {
      s.kill('SIGKILL');
      await s.exited;
    }
    await database?.drop();
  });

  it('a token revoked through one process is refused by the other for requests that start 1 s later', async () => {
    // Small pools: the test's PostgreSQL serves other runs too.
    const first = await startServiceProcess(database.url, { DATABASE_POOL_MAX: '4' });
    services.push(first);
    const second = await startServiceProcess(database.url, { DATABASE_POOL_MAX: '4' });
    services.push(second);
    const tenant = uniqueTenantId('tokp');
    await first.http.post('/api/v1/admin/tenants').set(superadmin()).send({ id: tenant, name: 'Token processes' }).expect(201);
    const created = (await first.http.post(`/api/v1/tenants/${tenant}/api-tokens`).set(superadmin()).send({ name: 'Shared', role: 'viewer' }).expect(201)).body.data;
    const use = (s: ServiceProcess) => s.http.get('/api/v1/metadata/schemas').set(bearer(created.token));
    // Both processes know the token (the second keeps what it read), and lastUsedAt is written once.
    expect((await use(first)).status).to.equal(200);
    for (let i = 0; i < 5; i++) expect((await use(second)).status).to.equal(200);
    const listedBy = async (s: ServiceProcess) => (await s.http.get(`/api/v1/tenants/${tenant}/api-tokens`).set(superadmin()).expect(200)).body.data.items[0];
    const usedAt = (await listedBy(first)).lastUsedAt;
    expect(usedAt).to.be.a('string');
    expect((await listedBy(second)).lastUsedAt).to.equal(usedAt);

    await first.http.delete(`/api/v1/tenants/${tenant}/api-tokens/${created.id}`).set(superadmin()).expect(200);
    const revokedAt = Date.now();
    expectInvalidToken(await use(first));
    await sleep(Math.max(0, revokedAt + 1000 - Date.now()));
    expectInvalidToken(await use(second));
    expect((await listedBy(second)).revokedAt).to.be.a('string');
  });

  it('a role changed through one process applies in the other to requests that start 1 s later', async () => {
    const first = await startServiceProcess(database.url, { DATABASE_POOL_MAX: '4' });
    services.push(first);
    const second = await startServiceProcess(database.url, { DATABASE_POOL_MAX: '4' });
    services.push(second);
    const tenant = uniqueTenantId('rsp');
    await first.http.post('/api/v1/admin/tenants').set(superadmin()).send({ id: tenant, name: 'Role processes' }).expect(201);
    await first.http.post('/api/v1/metadata/schemas').set(superadmin(tenant)).send({ namespace: 'rs', name: 'post', schema: { type: 'object', properties: { title: { type: 'string' } } } }).expect(201);
    await first.http.post(`/api/v1/tenants/${tenant}/roles`).set(superadmin()).send({ name: 'reader', policies: [{ resource: 'rs.post', actions: ['read'] }] }).expect(201);
    const token = (await first.http.post(`/api/v1/tenants/${tenant}/api-tokens`).set(superadmin()).send({ name: 'Reader', role: 'reader' }).expect(201)).body.data;
    const read = (s: ServiceProcess) => s.http.get('/api/v1/data/rs/post').set(bearer(token.token));
    expect((await read(second)).status).to.equal(200);
    // The role loses rs.post: the schema is absent for it in the other process within 1 s.
    await first.http.put(`/api/v1/tenants/${tenant}/roles/reader`).set(superadmin()).send({ policies: [] }).expect(200);
    await sleep(1000);
    const after = await read(second);
    expect(after.status).to.equal(404);
    expect(after.body.data.code).to.equal('schema_not_found');
    // The token revoked through the second process is refused by the first.
    await second.http.delete(`/api/v1/tenants/${tenant}/api-tokens/${token.id}`).set(superadmin()).expect(200);
    await sleep(1000);
    expect((await read(first)).status).to.equal(401);
  });
});
