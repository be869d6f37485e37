import { HttpReceiver } from '../../helpers/http-receiver.js';
import { createTenant, sharedTestApp, type TestApp } from '../../helpers/test-app.js';

/** A word that appears only in the footer of every page: it must never reach pages or knowledge. */
export const FOOTER_WORD = 'zanzibarfooter';

const layout = (title: string, description: string | null, main: string) => `<!doctype html>
<html lang="en"><head>
<meta charset="utf-8"><title>${title}</title>
${description ? `<meta name="description" content="${description}">` : ''}
<meta name="theme-color" content="#0a7cff">
<link rel="icon" href="/favicon.png">
<style>:root { --brand-primary: #0a7cff; --brand-accent: #ff7800; --shadow: rgb(0, 0, 0); --gap: 8px; }</style>
</head><body>
<header><a href="/" class="brand"><img src="/logo.png" alt="Acme Roasters logo"></a>
<nav><a href="/">Home</a> <a href="/about">About us</a> <a href="/blog/">Blog</a> <a href="/private">Members</a></nav></header>
<main>${main}</main>
<footer><p>© Acme Roasters. Subscribe to the ${FOOTER_WORD} newsletter.</p><a href="/imprint.pdf">Imprint</a></footer>
</body></html>`;

export interface TestSitePages {
  [path: string]: string | { status?: number; type?: string; body: string };
}

/** The four-page site (plus a page robots.txt forbids): depth 0 → 1 page, 1 → 3, 2 → 4. */
export function testSitePages(overrides: TestSitePages = {}): TestSitePages {
  return {
    '/robots.txt': 'User-agent: *\nDisallow: /private\n',
    '/': layout('Acme Roasters', 'Fresh coffee roasted daily in Lisbon.', `
      <article><h1>Welcome to Acme Roasters</h1>
      <p>We roast single-origin coffee beans every morning in small batches, so that every cup you brew at home tastes as fresh as it does in our café.</p>
      <h2>Our beans</h2>
      <p>Ethiopian Yirgacheffe, Colombian Huila and Brazilian Cerrado, each roasted light to keep their character. Read <a href="/about?utm_source=home#team">about us</a>.</p>
      </article>`),
    '/about': layout('About Acme', null, `
      <article><h1>About us</h1>
      <p>Acme Roasters was founded in 2015 by two friends who wanted better coffee in their neighbourhood.
      Today our team of twelve roasts, packs and ships every order by hand from our workshop near the river.</p>
      <p>We buy green coffee directly from farmers and pay well above fair-trade prices for quality lots.</p></article>`),
    '/blog': layout('Acme Roasters', 'News from the roastery.', `
      <h1>Blog</h1><ul><li><a href="/blog/first-post">Our first harvest trip</a></li></ul>`),
    '/blog/first-post': layout('Our first harvest trip', 'A visit to Huila.', `
      <article><h1>Our first harvest trip</h1>
      <p>In March we travelled to Huila in Colombia to meet the farmers behind our favourite lot.
      We walked the steep hillsides, watched the cherries being picked by hand and cupped the fresh harvest together.</p>
      <p>The trip taught us how much care goes into every bag of green coffee before it reaches our roaster.</p></article>`),
    '/private': layout('Members', null, '<p>Secret members area with a password.</p>'),
    '/logo.png': { type: 'image/png', body: 'PNG' },
    '/favicon.png': { type: 'image/png', body: 'PNG' },
    ...overrides,
  };
}

export async function startTestSite(overrides: TestSitePages = {}): Promise<HttpReceiver> {
  const site = await new HttpReceiver().start();
  site.serve(testSitePages(overrides));
  return site;
}

/** The paths the site was asked for (GET only). */
export function fetchedPaths(site: HttpReceiver): string[] {
  return site.requests.filter((r) => r.method === 'GET').map((r) => r.path);
}

export interface SiteFixture {
  t: TestApp;
  site: HttpReceiver;
  tenant: string;
}

/** Mocha hooks for a describe block: the shared app, one test site, and a fresh tenant per test. */
export function useSiteFixture(tenantPrefix: string): SiteFixture {
  const fx = {} as SiteFixture;
  before(async () => {
    fx.t = await sharedTestApp();
    fx.site = await startTestSite();
  });
  after(async () => {
    await fx.site.stop();
  });
  beforeEach(async () => {
    fx.tenant = await createTenant(fx.t, tenantPrefix);
  });
  return fx;
}
