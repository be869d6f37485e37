import { createHash } from 'node:crypto';
import { HTTP_URL, type PackContext, type PackRouter, ValidationFailed } from '../../core/pack-api.js';
import { fetchHtmlPage } from './site-crawler.js';
import { normaliseUrl } from './url-normalise.js';

interface IngestBody {
  html?: string;
  url?: string;
  title?: string;
  use_ai?: boolean;
}

/**
 * POST /ai/ingest-web: the main content of a page (given as HTML, or fetched from the URL) without
 * navigation, header, footer and boilerplate, as knowledge chunks with sourceModule "web". The same
 * URL ingested again replaces its entries.
 */
export function ingestRoutes(router: PackRouter, pack: PackContext): void {
  router.post('/ai/ingest-web', {
    summary: 'Ingest a web page (html or url) into the knowledge store',
    tags: ['ai'], auth: 'tenant', role: 'editor', status: 201,
    body: {
      type: 'object',
      additionalProperties: false,
      anyOf: [{ required: ['html'] }, { required: ['url'] }],
      properties: {
        html: { type: 'string', minLength: 1, maxLength: 900_000 },
        url: HTTP_URL,
        title: { type: 'string', minLength: 1, maxLength: 300 },
        use_ai: { type: 'boolean', default: false },
      },
    },
    response: { type: 'object', properties: { entries: { type: 'array', items: { type: 'object', properties: { id: { type: 'string' }, title: { type: 'string' } } } } } },
    errors: ['validation_failed', 'url_not_allowed', 'upstream_failed', 'module_disabled'],
  }, async (ctx) => {
    const body = ctx.state.body as IngestBody;
    let url = body.url ? checkedUrl(body.url) : null;
    let html = body.html;
    if (html === undefined) {
      const fetched = await fetchHtml(pack, url!);
      html = fetched.html;
      url = fetched.url;
    }
    // The HTML tools (linkedom, Readability, Turndown) load with the first ingest, not with the service.
    const { extractPage } = await import('./page-extractor.js');
    const page = extractPage(html, url ?? 'http://localhost/');
    if (!page.markdown.trim()) throw ValidationFailed('The page has no readable main content', [{ path: body.html ? '/html' : '/url', message: 'has no main content' }]);
    const sourceRef = url ?? `html:${createHash('sha256').update(html).digest('hex').slice(0, 32)}`;
    const entries = await pack.knowledge.upsertForSource(ctx.state.rc, {
      sourceModule: 'web', sourceRef, title: body.title ?? page.title, content: page.markdown, url,
    });
    return { entries };
  });
}

function checkedUrl(raw: string): string {
  try {
    const url = new URL(raw);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('scheme');
    return normaliseUrl(url.toString());
  } catch {
    throw ValidationFailed('url must be an http or https URL', [{ path: '/url', message: 'must be an http or https URL' }]);
  }
}

async function fetchHtml(pack: PackContext, url: string): Promise<{ html: string; url: string }> {
  await pack.fetch.assertAllowedUrl(url);
  const page = await fetchHtmlPage(pack.fetch, url, null, 0, true);
  if ('reason' in page) {
    throw ValidationFailed(`${url} cannot be ingested (${page.reason === 'too_large' ? 'larger than 5 MiB' : 'not an HTML page'})`, [{ path: '/url', message: 'must point at an HTML page of at most 5 MiB' }]);
  }
  return { html: page.html, url };
}
