import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { expect } from 'chai';
import jwt from 'jsonwebtoken';
import { startReceiver, type HttpReceiver, type Responder } from '../helpers/http-receiver.js';
import { createTenant, sharedTestApp, startTestApp, type TestApp } from '../helpers/test-app.js';
import { as, bearer, signToken, superadmin, TEST_JWT_SECRET, TEST_KEY } from '../helpers/tokens.js';

const ISSUER = 'https://idp.example.test/realms/platform';
const AUDIENCE = 'platform-api';

interface SigningKey {
  kid: string;
  alg: 'RS256' | 'ES256';
  privateKey: KeyObject;
  publicKey: KeyObject;
}

function makeKey(kid: string, alg: 'RS256' | 'ES256'): SigningKey {
  const pair = alg === 'RS256'
    ? generateKeyPairSync('rsa', { modulusLength: 2048 })
    : generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { kid, alg, privateKey: pair.privateKey, publicKey: pair.publicKey };
}

function jwk(key: SigningKey) {
  return { ...key.publicKey.export({ format: 'jwk' }), kid: key.kid, alg: key.alg, use: 'sig' };
}

function signWith(key: SigningKey, claims: Record<string, unknown>, options: jwt.SignOptions = {}): string {
  return jwt.sign({ sub: 'idp-user', ...claims }, key.privateKey, {
    algorithm: key.alg, keyid: key.kid, issuer: ISSUER, audience: AUDIENCE, expiresIn: 600, ...options,
  });
}

function expect401(res: { status: number; headers: Record<string, string>; body: any }, code = 'invalid_token') {
  expect(res.status, JSON.stringify(res.body)).to.equal(401);
  expect(res.headers['www-authenticate']).to.match(/^Bearer/);
  expect(res.body.error?.code ?? res.body.data?.code).to.equal(code);
}

describe('authentication with HS256 (AUTH_JWT_SECRET)', () => {
  let t: TestApp;
  let tenant: string;

  before(async () => {
    t = await sharedTestApp();
    tenant = await createTenant(t, 'auth');
  });

  const get = (headers: Record<string, string>) => t.http.get(`/api/v1/admin/tenants/${tenant}`).set(headers);

  it('GET /api/v1/admin/tenants/:id answers 200 to a valid member token', async () => {
    const res = await get(as(tenant, 'viewer'));
    expect(res.status).to.equal(200);
    expect(res.body.data.id).to.equal(tenant);
  });

  it('answers 401 unauthenticated with WWW-Authenticate: Bearer when no credentials are sent', async () => {
    const res = await get({});
    expect401(res, 'unauthenticated');
    expect(res.headers['www-authenticate']).to.equal('Bearer');
  });

  it('answers 401 invalid_token to a malformed Authorization header', async () => {
    expect401(await get({ Authorization: 'Basic dXNlcjpwYXNz' }));
    expect401(await get({ Authorization: 'Bearer' }));
    expect401(await get({ Authorization: 'Bearer not-a-jwt' }));
    expect401(await get({ Authorization: 'Bearer a.b.c' }));
  });

  it('answers 401 to an unsigned token (alg none)', async () => {
    const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url');
    const payload = Buffer.from(JSON.stringify({ sub: 'x', tenant_id: tenant, roles: ['superadmin'], exp: Math.floor(Date.now() / 1000) + 600 })).toString('base64url');
    expect401(await get(bearer(`${header}.${payload}.`)));
    expect401(await get(bearer(jwt.sign({ sub: 'x', tenant_id: tenant }, '', { algorithm: 'none' } as jwt.SignOptions))));
  });

  it('answers 401 to a token signed with another HS256 key', async () => {
    expect401(await get(bearer(signToken({ tenantId: tenant, role: 'admin', secret: 'another-secret-0123456789abcdef' }))));
  });

  it('answers 401 to an HS384 token signed with the right secret (algorithms are pinned)', async () => {
    const token = jwt.sign({ sub: 'x', tenant_id: tenant }, TEST_JWT_SECRET, { algorithm: 'HS384', expiresIn: 600 });
    expect401(await get(bearer(token)));
  });

  it('answers 401 to an expired token', async () => {
    const token = jwt.sign({ sub: 'x', tenant_id: tenant, exp: Math.floor(Date.now() / 1000) - 60 }, TEST_JWT_SECRET, { algorithm: 'HS256' });
    const res = await get(bearer(token));
    expect401(res);
    expect(res.body.message).to.match(/expired/);
  });

  it('answers 401 to a token without exp', async () => {
    const token = jwt.sign({ sub: 'x', tenant_id: tenant }, TEST_JWT_SECRET, { algorithm: 'HS256', noTimestamp: true });
    const res = await get(bearer(token));
    expect401(res);
    expect(res.body.message).to.match(/exp/);
  });

  it('answers 401 to a token without sub', async () => {
    const token = jwt.sign({ tenant_id: tenant, roles: ['admin'] }, TEST_JWT_SECRET, { algorithm: 'HS256', expiresIn: 600 });
    expect401(await get(bearer(token)));
  });

  it('answers 401 to a token whose payload was changed after signing', async () => {
    const [h, , s] = signToken({ tenantId: tenant, role: 'viewer' }).split('.');
    const forged = Buffer.from(JSON.stringify({ sub: 'x', tenant_id: tenant, roles: ['superadmin'], exp: Math.floor(Date.now() / 1000) + 600 })).toString('base64url');
    expect401(await get(bearer(`${h}.${forged}.${s}`)));
  });

  it('reads roles from realm_access.roles (Keycloak) as well as from roles', async () => {
    const data = '/api/v1/metadata/schemas';
    const body = { namespace: 'realm', name: 'thing', schema: { type: 'object', properties: { a: { type: 'string' } } } };
    const viewer = await t.http.post(data).set(as(tenant, 'viewer')).send(body);
    expect(viewer.status).to.equal(403);
    const realmAdmin = bearer(signToken({ tenantId: tenant, roles: [], claims: { realm_access: { roles: ['offline_access', 'admin'] } } }));
    const res = await t.http.post(data).set(realmAdmin).send(body);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
  });

  it('treats a token with the superadmin role as a platform superadmin', async () => {
    const token = bearer(signToken({ roles: ['superadmin'], sub: 'root' }));
    const res = await t.http.post('/api/v1/admin/tenants').set(token).send({ name: `Root made ${Date.now()}` });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    const denied = await t.http.post('/api/v1/admin/tenants').set(as(tenant, 'admin')).send({ name: 'Nope' });
    expect(denied.status).to.equal(403);
    expect(denied.body.error.code).to.equal('superadmin_required');
  });

  it('accepts the test key as a superadmin outside production', async () => {
    const res = await get(superadmin());
    expect(res.status).to.equal(200);
  });
});

describe('tenant context (X-Tenant-Id and path tenants)', () => {
  let t: TestApp;
  let tenant: string;
  let other: string;

  before(async () => {
    t = await sharedTestApp();
    tenant = await createTenant(t, 'ctx');
    other = await createTenant(t, 'ctx-other');
  });

  it('lets a superadmin name the tenant with X-Tenant-Id', async () => {
    const res = await t.http.get('/api/v1/metadata/schemas').set(superadmin(tenant));
    expect(res.status).to.equal(200);
    const token = bearer(signToken({ roles: ['superadmin'] }));
    expect((await t.http.get('/api/v1/metadata/schemas').set(token).set('X-Tenant-Id', other)).status).to.equal(200);
  });

  it('answers 400 tenant_required when neither the token nor X-Tenant-Id names a tenant', async () => {
    const res = await t.http.get('/api/v1/metadata/schemas').set(superadmin());
    expect(res.status).to.equal(400);
    expect(res.body.data.code).to.equal('tenant_required');
    const noClaim = await t.http.get('/api/v1/data/crm/deal').set(bearer(signToken({ role: 'admin' })));
    expect(noClaim.status).to.equal(400);
    expect(noClaim.body.data.code).to.equal('tenant_required');
  });

  it('answers 404 tenant_not_found for an unknown X-Tenant-Id', async () => {
    const res = await t.http.get('/api/v1/metadata/schemas').set(superadmin('no-such-tenant-xyz'));
    expect(res.status).to.equal(404);
    expect(res.body.data.code).to.equal('tenant_not_found');
    const garbage = await t.http.get('/api/v1/metadata/schemas').set(superadmin('../../etc'));
    expect(garbage.status).to.equal(404);
  });

  it('answers 403 forbidden when a non-superadmin names another tenant in X-Tenant-Id', async () => {
    const res = await t.http.get('/api/v1/metadata/schemas').set(as(tenant, 'admin')).set('X-Tenant-Id', other);
    expect(res.status).to.equal(403);
    expect(res.body.data.code).to.equal('forbidden');
    const same = await t.http.get('/api/v1/metadata/schemas').set(as(tenant, 'admin')).set('X-Tenant-Id', tenant);
    expect(same.status).to.equal(200);
  });

  it('answers 403 forbidden for a foreign tenant in the path', async () => {
    const res = await t.http.get(`/api/v1/admin/tenants/${other}`).set(as(tenant, 'admin'));
    expect(res.status).to.equal(403);
    expect(res.body.error.code).to.equal('forbidden');
    expect(res.body.data).to.equal(null);
  });

  it('answers 404 tenant_not_found to a superadmin for an unknown path tenant', async () => {
    const res = await t.http.get('/api/v1/admin/tenants/nobody-here').set(superadmin());
    expect(res.status).to.equal(404);
    expect(res.body.error.code).to.equal('tenant_not_found');
  });
});

describe('authentication with a JWKS (RS256 and ES256)', () => {
  /** A short refetch cooldown (AUTH_JWKS_COOLDOWN_MS), so that rotation is seen without waiting 30 s. */
  const COOLDOWN_MS = 1500;
  let idp: HttpReceiver;
  let t: TestApp;
  let tenant: string;
  const rsa = makeKey('rsa-1', 'RS256');
  const ec = makeKey('ec-1', 'ES256');
  const later = makeKey('rsa-2', 'RS256');
  let published: SigningKey[] = [rsa, ec];
  const servePublished: Responder = (req, res) => {
    if (req.path !== '/jwks.json') {
      res.writeHead(404);
      res.end();
      return;
    }
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ keys: published.map(jwk) }));
  };

  before(async () => {
    idp = await startReceiver();
    idp.responder = servePublished;
    // JWKS only: no HS256 secret, as in production with an identity provider.
    t = await startTestApp({
      env: {
        AUTH_JWKS_URI: `${idp.url}/jwks.json`, AUTH_ISSUER: ISSUER, AUTH_AUDIENCE: AUDIENCE, AUTH_JWT_SECRET: '',
        AUTH_JWKS_COOLDOWN_MS: String(COOLDOWN_MS),
      },
    });
    tenant = await createTenant(t, 'jwks');
  });

  after(async () => {
    await t?.close();
    await idp?.stop();
  });

  const jwksFetches = () => idp.requests.filter((r) => r.path === '/jwks.json').length;
  const get = (token: string) => t.http.get(`/api/v1/admin/tenants/${tenant}`).set(bearer(token));
  /** A token with a key id the identity provider never published. */
  const madeUp = (n: number | string) => signWith({ ...rsa, kid: `made-up-${n}-${Date.now()}` }, { tenant_id: tenant });
  /** Waits until the refetch cooldown since the last fetch has passed. */
  const afterCooldown = () => new Promise((r) => setTimeout(r, COOLDOWN_MS + 200));

  it('accepts an RS256 token from the JWKS and caches the key set', async () => {
    const res = await get(signWith(rsa, { tenant_id: tenant, roles: ['viewer'] }));
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.data.id).to.equal(tenant);
    expect(jwksFetches()).to.equal(1);
    expect((await get(signWith(rsa, { tenant_id: tenant, jti: 'second' }))).status).to.equal(200);
    expect(jwksFetches()).to.equal(1);
  });

  it('accepts an ES256 token from the JWKS', async () => {
    const res = await get(signWith(ec, { tenant_id: tenant, realm_access: { roles: ['editor'] } }));
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
  });

  it('answers 401 to a token from the wrong issuer or for the wrong audience', async () => {
    expect401(await get(signWith(rsa, { tenant_id: tenant }, { issuer: 'https://evil.example.test' })));
    expect401(await get(signWith(rsa, { tenant_id: tenant }, { audience: 'another-api' })));
  });

  it('answers 401 to an expired RS256 token and to one without exp', async () => {
    const expired = jwt.sign({ sub: 'u', tenant_id: tenant, exp: Math.floor(Date.now() / 1000) - 10 }, rsa.privateKey, { algorithm: 'RS256', keyid: rsa.kid, issuer: ISSUER, audience: AUDIENCE });
    const res = await get(expired);
    expect401(res);
    expect(res.body.message).to.match(/expired/);
    const noExp = jwt.sign({ sub: 'u', tenant_id: tenant }, rsa.privateKey, { algorithm: 'RS256', keyid: rsa.kid, issuer: ISSUER, audience: AUDIENCE });
    const missing = await get(noExp);
    expect401(missing);
    expect(missing.body.message).to.match(/exp/);
  });

  it('answers 401 to an RS256 token without a key id (kid)', async () => {
    const res = await get(jwt.sign({ sub: 'u', tenant_id: tenant }, rsa.privateKey, { algorithm: 'RS256', issuer: ISSUER, audience: AUDIENCE, expiresIn: 600 }));
    expect401(res);
    expect(res.body.message).to.match(/kid/);
  });

  it('answers 401 to an HS256 token signed with the RSA public key (algorithm confusion)', async () => {
    const pem = rsa.publicKey.export({ type: 'spki', format: 'pem' }).toString();
    const forged = jwt.sign({ sub: 'attacker', tenant_id: tenant, roles: ['superadmin'] }, pem, {
      algorithm: 'HS256', keyid: rsa.kid, issuer: ISSUER, audience: AUDIENCE, expiresIn: 600,
    } as jwt.SignOptions);
    const res = await get(forged);
    expect401(res);
    expect(res.body.message).to.match(/HS256.*not accepted/);
  });

  it('answers 401 when an ES256 header names an RSA key (algorithm pinned per key)', async () => {
    const forged = jwt.sign({ sub: 'u', tenant_id: tenant }, ec.privateKey, { algorithm: 'ES256', keyid: rsa.kid, issuer: ISSUER, audience: AUDIENCE, expiresIn: 600 });
    const res = await get(forged);
    expect401(res);
    expect(res.body.message).to.match(/does not fit its key/);
  });

  it('answers 401 to a token signed by a key that is not in the JWKS', async () => {
    const stranger = makeKey(rsa.kid, 'RS256');
    expect401(await get(signWith(stranger, { tenant_id: tenant })));
    const res = await get(madeUp('stranger'));
    expect401(res);
    expect(res.body.message).to.match(/unknown key/);
  });

  it('picks up a rotated key once the cooldown has passed since the last fetch, and not before', async () => {
    await afterCooldown();
    const before = jwksFetches();
    // An unknown kid refetches the key set (the cooldown has passed) ...
    expect401(await get(madeUp('rotation')));
    expect(jwksFetches()).to.equal(before + 1);
    // ... then the provider publishes rsa-2: within the cooldown it is not fetched again.
    published = [rsa, ec, later];
    expect401(await get(signWith(later, { tenant_id: tenant })));
    expect(jwksFetches()).to.equal(before + 1);
    await afterCooldown();
    const res = await get(signWith(later, { tenant_id: tenant, roles: ['viewer'] }));
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(jwksFetches()).to.equal(before + 2);
    expect((await get(signWith(later, { tenant_id: tenant, jti: 'again' }))).status).to.equal(200);
    expect(jwksFetches()).to.equal(before + 2);
  });

  it('refetches the JWKS at most once per cooldown for a flood of unknown kids', async () => {
    await afterCooldown();
    const before = jwksFetches();
    const flood = await Promise.all(Array.from({ length: 20 }, (_, i) => get(madeUp(i))));
    for (const res of flood) expect401(res);
    for (let i = 0; i < 5; i++) expect401(await get(madeUp(`sequential-${i}`)));
    expect(jwksFetches()).to.equal(before + 1);
    await afterCooldown();
    for (let i = 0; i < 5; i++) expect401(await get(madeUp(`next-${i}`)));
    expect(jwksFetches()).to.equal(before + 2);
  });

  it('keeps accepting the cached keys while the identity provider is unreachable, and asks it at most once per cooldown', async () => {
    idp.responder = (_req, res) => {
      res.writeHead(503);
      res.end();
    };
    try {
      await afterCooldown();
      const before = jwksFetches();
      for (let i = 0; i < 5; i++) expect401(await get(madeUp(`outage-${i}`)));
      expect(jwksFetches()).to.equal(before + 1);
      expect((await get(signWith(rsa, { tenant_id: tenant, jti: 'outage-rsa' }))).status).to.equal(200);
      expect((await get(signWith(ec, { tenant_id: tenant, jti: 'outage-ec' }))).status).to.equal(200);
      expect((await get(signWith(later, { tenant_id: tenant, jti: 'outage-later' }))).status).to.equal(200);
      expect(jwksFetches()).to.equal(before + 1);
      await afterCooldown();
      expect401(await get(madeUp('outage-after')));
      expect(jwksFetches()).to.equal(before + 2);
      expect((await get(signWith(rsa, { tenant_id: tenant, jti: 'outage-rsa-2' }))).status).to.equal(200);
    } finally {
      idp.responder = servePublished;
    }
  });

  it('does not accept the HS256 test secret when only a JWKS is configured', async () => {
    expect401(await get(signToken({ tenantId: tenant, role: 'admin' })));
  });
});

describe('the test key in production', () => {
  let t: TestApp;

  before(async () => {
    t = await startTestApp({ env: { NODE_ENV: 'production', ALLOW_PRIVATE_NETWORK_FETCH: 'false', TEST_API_KEY: TEST_KEY } });
  });
  after(() => t?.close());

  it('answers 401 to the test key when NODE_ENV is production', async () => {
    const res = await t.http.get('/api/v1/metadata/schemas').set(superadmin('anything'));
    expect401(res);
  });

  it('still accepts a signed JWT in production', async () => {
    const res = await t.http.post('/api/v1/admin/tenants').set(bearer(signToken({ roles: ['superadmin'] }))).send({ name: 'Prod tenant' });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
  });
});
