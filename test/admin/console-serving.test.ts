import { expect } from 'chai';
import { ensureConsoleBuilt } from '../helpers/browser.js';
import { sharedTestApp, startTestApp, type TestApp } from '../helpers/test-app.js';
import { as, superadmin } from '../helpers/tokens.js';

describe('GET /admin (the admin console\'s files)', () => {
  let t: TestApp;
  let entry: string;

  before(async function () {
    this.timeout(180_000);
    ensureConsoleBuilt();
    t = await sharedTestApp();
    const index = await t.http.get('/admin/');
    entry = /src="(\/admin\/assets\/index-[^"]+\.js)"/.exec(index.text)![1];
  });

  it('answers index.html for the console\'s own routes (SPA fallback), never cached, under a strict CSP', async () => {
    for (const path of ['/admin', '/admin/', '/admin/shop.product/0190f0e2-aaaa-7000-8000-000000000000', '/admin/tenant']) {
      const res = await t.http.get(path);
      expect(res.status, path).to.equal(200);
      expect(res.headers['content-type']).to.match(/^text\/html/);
      expect(res.headers['cache-control']).to.equal('no-cache');
      expect(res.text).to.contain('<div id="root"></div>');
      const csp = res.headers['content-security-policy'];
      expect(csp).to.contain("script-src 'self'").and.contain("frame-ancestors 'none'").and.contain("object-src 'none'");
      expect(csp).not.to.contain('unsafe-eval');
      expect(csp.match(/script-src[^;]*/)![0]).not.to.contain('unsafe-inline');
    }
    // No inline script in the page: everything runs from the service's own files.
    expect((await t.http.get('/admin/')).text).not.to.match(/<script(?![^>]*\bsrc=)[^>]*>/);
  });

  it('serves hashed assets for a year (immutable), gzipped to clients that accept it', async () => {
    const plain = await t.http.get(entry).set('Accept-Encoding', 'identity');
    expect(plain.status).to.equal(200);
    expect(plain.headers['content-type']).to.match(/^text\/javascript/);
    expect(plain.headers['cache-control']).to.equal('public, max-age=31536000, immutable');
    expect(plain.headers['content-encoding']).to.equal(undefined);
    const zipped = await t.http.get(entry).set('Accept-Encoding', 'gzip, deflate, br');
    expect(zipped.headers['content-encoding']).to.equal('gzip');
    expect(zipped.headers.vary).to.contain('Accept-Encoding');
    expect(zipped.text).to.equal(plain.text);
  });

  it('answers 404 for an unknown asset and never reaches outside the build', async () => {
    expect((await t.http.get('/admin/assets/nothing-here.js')).status).to.equal(404);
    expect((await t.http.get('/admin/assets/..%2F..%2Fpackage.json')).status).to.equal(404);
    const traversal = await t.http.get('/admin/..%2F..%2Fpackage.json');
    expect(traversal.text).not.to.contain('"dependencies"');
  });
});

describe('GET /api/v1/auth/config and /api/v1/auth/me', () => {
  let t: TestApp;

  before(async () => {
    t = await sharedTestApp();
  });

  it('tells a client how to sign in: the test key outside production, no identity provider by default', async () => {
    const res = await t.http.get('/api/v1/auth/config');
    expect(res.status).to.equal(200);
    expect(res.body.data).to.deep.equal({ testKey: true, oidc: null });
  });

  it('names the identity provider and the console\'s public client when configured, and lets the CSP reach it', async () => {
    const oidc = await startTestApp({ env: { AUTH_ISSUER: 'https://id.example.com/realms/acme', ADMIN_OIDC_CLIENT_ID: 'admin-console' } });
    try {
      const res = await oidc.http.get('/api/v1/auth/config');
      expect(res.body.data.oidc).to.deep.equal({ issuer: 'https://id.example.com/realms/acme', clientId: 'admin-console', scope: 'openid profile email' });
      const page = await oidc.http.get('/admin/');
      expect(page.headers['content-security-policy']).to.contain("connect-src 'self' https://id.example.com");
    } finally {
      await oidc.close();
    }
  });

  it('says who the token is: role and tenant of a JWT, superadmin for the test key; 401 without one', async () => {
    const me = await t.http.get('/api/v1/auth/me').set(as('acme', 'editor'));
    expect(me.status).to.equal(200);
    expect(me.body.data).to.include({ tenantId: 'acme', role: 'editor', isSuperadmin: false });
    const key = await t.http.get('/api/v1/auth/me').set(superadmin());
    expect(key.body.data.isSuperadmin).to.equal(true);
    const none = await t.http.get('/api/v1/auth/me');
    expect(none.status).to.equal(401);
    expect(none.headers['www-authenticate']).to.match(/^Bearer/);
  });
});
