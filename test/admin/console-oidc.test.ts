import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto';
import { expect } from 'chai';
import jwt from 'jsonwebtoken';
import type { Browser, Page } from 'playwright-core';
import { ensureConsoleBuilt, launchBrowser, screenshot } from '../helpers/browser.js';
import { startReceiver, type HttpReceiver, type ReceivedRequest } from '../helpers/http-receiver.js';
import { createTenant, startTestApp, type TestApp } from '../helpers/test-app.js';

/**
 * Signing in to the console with OpenID Connect (authorization code with PKCE, by oidc-client-ts in the
 * browser) against a real identity provider on loopback: discovery, an authorize endpoint that sends the
 * browser back with a code, a token endpoint that checks the PKCE verifier against the challenge and answers
 * RS256 tokens, and the JWKS the service verifies them with. The service runs with the JWKS only (no HS256
 * secret), as in production.
 */
describe('admin console: OpenID Connect sign-in (headless Chromium)', function () {
  this.timeout(120_000);
  const CLIENT_ID = 'admin-console';
  const AUDIENCE = 'platform-api';
  const key = { kid: 'idp-key-1', ...generateKeyPairSync('rsa', { modulusLength: 2048 }) };
  let idp: HttpReceiver;
  let t: TestApp;
  let tenant: string;
  let browser: Browser;
  let page: Page;
  /** Codes the authorize endpoint handed out: the PKCE challenge and nonce each was asked with. */
  const codes = new Map<string, { challenge: string; method: string; redirectUri: string; nonce: string | null }>();
  const tokenAnswers: Array<{ status: number; verifierMatched: boolean }> = [];

  const sign = (claims: Record<string, unknown>, audience: string) =>
    jwt.sign({ sub: 'idp-user-42', ...claims }, key.privateKey, { algorithm: 'RS256', keyid: key.kid, issuer: idp.url, audience, expiresIn: 600 });

  function answer(res: import('node:http').ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
    // The console calls discovery and the token endpoint with fetch from its own origin: CORS, as real providers do.
    res.writeHead(status, { 'Content-Type': 'application/json', 'Access-Control-Allow-Origin': '*', 'Access-Control-Allow-Headers': '*', ...headers });
    res.end(body === null ? '' : JSON.stringify(body));
  }

  function provider(req: ReceivedRequest, res: import('node:http').ServerResponse) {
    const url = new URL(req.path, idp.url);
    if (req.method === 'OPTIONS') return answer(res, 204, null);
    if (url.pathname === '/.well-known/openid-configuration') {
      return answer(res, 200, {
        issuer: idp.url, authorization_endpoint: `${idp.url}/authorize`, token_endpoint: `${idp.url}/token`, jwks_uri: `${idp.url}/jwks.json`,
        response_types_supported: ['code'], code_challenge_methods_supported: ['S256'], subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['RS256'],
      });
    }
    if (url.pathname === '/jwks.json') {
      return answer(res, 200, { keys: [{ ...key.publicKey.export({ format: 'jwk' }), kid: key.kid, alg: 'RS256', use: 'sig' }] });
    }
    if (url.pathname === '/authorize') {
      // The user is signed in at the provider already: it sends the browser straight back with a code.
      const q = url.searchParams;
      const code = randomBytes(16).toString('hex');
      codes.set(code, { challenge: q.get('code_challenge') ?? '', method: q.get('code_challenge_method') ?? '', redirectUri: q.get('redirect_uri') ?? '', nonce: q.get('nonce') });
      const back = new URL(q.get('redirect_uri')!);
      back.searchParams.set('code', code);
      back.searchParams.set('state', q.get('state') ?? '');
      res.writeHead(302, { Location: back.toString() });
      res.end();
      return;
    }
    if (url.pathname === '/token' && req.method === 'POST') {
      const form = new URLSearchParams(req.body);
      const issued = codes.get(form.get('code') ?? '');
      const verifier = form.get('code_verifier') ?? '';
      const verifierMatched = !!issued && issued.method === 'S256'
        && createHash('sha256').update(verifier).digest('base64url') === issued.challenge;
      if (!issued || !verifierMatched || form.get('redirect_uri') !== issued.redirectUri || form.get('client_id') !== CLIENT_ID) {
        tokenAnswers.push({ status: 400, verifierMatched });
        return answer(res, 400, { error: 'invalid_grant' });
      }
      codes.delete(form.get('code')!);
      tokenAnswers.push({ status: 200, verifierMatched });
      return answer(res, 200, {
        token_type: 'Bearer', expires_in: 600, scope: 'openid profile email',
        access_token: sign({ tenant_id: tenant, roles: ['admin'], email: 'ines@example.org' }, AUDIENCE),
        id_token: sign({ email: 'ines@example.org', name: 'Inés', ...(issued.nonce ? { nonce: issued.nonce } : {}) }, CLIENT_ID),
      });
    }
    return answer(res, 404, { error: 'not_found' });
  }

  before(async function () {
    this.timeout(180_000);
    ensureConsoleBuilt();
    idp = await startReceiver();
    idp.responder = provider;
    t = await startTestApp({
      env: {
        AUTH_JWKS_URI: `${idp.url}/jwks.json`, AUTH_ISSUER: idp.url, AUTH_AUDIENCE: AUDIENCE, AUTH_JWT_SECRET: '',
        ADMIN_OIDC_CLIENT_ID: CLIENT_ID,
      },
    });
    tenant = await createTenant(t, 'oidc');
    browser = await launchBrowser();
    page = await (await browser.newContext({ viewport: { width: 1280, height: 860 } })).newPage();
    page.setDefaultTimeout(20_000);
  });

  afterEach(async function () {
    if (this.currentTest?.state === 'failed' && page) await screenshot(page, `failed-oidc-${this.currentTest.title.slice(0, 40).replace(/\W+/g, '-')}`);
  });

  after(async () => {
    await browser?.close();
    await t?.close();
    await idp?.stop();
  });

  it('signs in through the identity provider (code + PKCE) and acts on the tenant of the token', async () => {
    await page.goto(`${t.baseUrl}/admin/`);
    // With an identity provider configured and no test key outside development, the page offers it.
    const button = page.getByRole('button', { name: 'Sign in with your identity provider' });
    await button.click();
    await page.waitForURL(`${t.baseUrl}/admin/`);
    await page.getByTestId('current-tenant').filter({ hasText: `Tenant: ${tenant}` }).waitFor();
    await page.getByTestId('dashboard-tenant').filter({ hasText: tenant }).waitFor();
    await screenshot(page, 'oidc-signed-in');

    // The browser went to the provider's authorize endpoint with a S256 challenge, and the token endpoint
    // checked the verifier that came with the code.
    const authorize = idp.requests.find((r) => r.path.startsWith('/authorize'))!;
    const q = new URL(authorize.path, idp.url).searchParams;
    expect(q.get('response_type')).to.equal('code');
    expect(q.get('client_id')).to.equal(CLIENT_ID);
    expect(q.get('code_challenge_method')).to.equal('S256');
    expect(q.get('redirect_uri')).to.equal(`${t.baseUrl}/admin/callback`);
    expect(tokenAnswers).to.deep.equal([{ status: 200, verifierMatched: true }]);

    // The access token (RS256, from the provider) is what the console now sends; it lives in sessionStorage.
    const token = await page.evaluate('sessionStorage.getItem("console.token")') as string;
    expect(jwt.decode(token, { complete: true })?.header).to.include({ alg: 'RS256', kid: key.kid });
    expect(await page.context().cookies()).to.deep.equal([]);
    const me = await t.http.get('/api/v1/auth/me').set('Authorization', `Bearer ${token}`);
    expect(me.body.data).to.include({ userId: 'idp-user-42', tenantId: tenant, role: 'admin' });

    // And the API accepts it for the console's screens: a records table of the tenant.
    const listed = page.waitForResponse((r) => r.url().includes('/api/v1/data/cms/page?'));
    await page.locator('nav[aria-label="Console"] a[href="/admin/cms.page"]').click();
    expect((await listed).status()).to.equal(200);
  });

  it('refuses a code traded with the wrong PKCE verifier (the provider checks it, the console stays signed out)', async () => {
    const context = await browser.newContext();
    const fresh = await context.newPage();
    try {
      // A code is taken over by someone without the verifier: the provider answers invalid_grant.
      await fresh.route(`${idp.url}/token`, async (route) => {
        const body = new URLSearchParams(route.request().postData() ?? '');
        body.set('code_verifier', randomBytes(32).toString('base64url'));
        await route.continue({ postData: body.toString() });
      });
      await fresh.goto(`${t.baseUrl}/admin/`);
      const traded = fresh.waitForResponse(`${idp.url}/token`);
      await fresh.getByRole('button', { name: 'Sign in with your identity provider' }).click();
      expect((await traded).status()).to.equal(400);
      expect(tokenAnswers.at(-1)).to.deep.equal({ status: 400, verifierMatched: false });
      // Back on the sign-in page, signed out.
      await fresh.waitForURL(`${t.baseUrl}/admin/login`);
      await fresh.getByRole('alert').filter({ hasText: 'Sign-in with the identity provider failed' }).waitFor();
      expect(await fresh.evaluate('sessionStorage.getItem("console.token")')).to.equal(null);
    } finally {
      await context.close();
    }
  });
});
