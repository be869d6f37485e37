import robotsParserModule from 'robots-parser';
import { FetchError, type PackContext, UpstreamFailed } from '../../core/pack-api.js';
import { looksLikeAsset, normaliseUrl } from './url-normalise.js';

// robots-parser is CommonJS: under NodeNext its default import may be the module object.
const robotsParser = ((robotsParserModule as any).default ?? robotsParserModule) as unknown as (url: string, robotstxt: string) => RobotsTxt;

interface RobotsTxt {
  isAllowed(url: string, ua?: string): boolean | undefined;
}

export const CRAWL_LIMITS = { maxPages: 50, maxDepth: 3, timeoutMs: 10_000, maxBytes: 5 * 1024 * 1024, maxRedirects: 3, concurrency: 4 };
export const USER_AGENT = 'HeadlessPlatformImporter/1.0';

export interface CrawledPage {
  url: string;
  depth: number;
  html: string;
}

export interface ExcludedUrl {
  url: string;
  reason: 'robots_txt' | 'not_html' | 'too_large' | 'http_error' | 'fetch_failed' | 'off_origin' | 'page_limit';
}

export interface CrawlResult {
  pages: CrawledPage[];
  excluded: ExcludedUrl[];
}

/**
 * A same-origin, breadth-first crawler over the fetch service (SSRF guard, timeouts and size caps there):
 * at most 50 pages to `depth` links from the start page, robots.txt respected, HTML only, every URL
 * normalised so each page is fetched once. `linksOf` gives the same-origin links of a fetched page.
 */
export async function crawlSite(
  fetch: PackContext['fetch'], startUrl: string, depth: number, linksOf: (page: CrawledPage) => string[],
): Promise<CrawlResult> {
  await fetch.assertAllowedUrl(startUrl);
  const start = normaliseUrl(startUrl);
  const origin = new URL(start).origin;
  const robots = await loadRobots(fetch, origin);
  const pages: CrawledPage[] = [];
  const excluded: ExcludedUrl[] = [];
  const seen = new Set<string>([start]);
  let frontier = [start];

  for (let level = 0; level <= depth && frontier.length; level++) {
    const allowed: string[] = [];
    for (const url of frontier) {
      if (robots && robots.isAllowed(url, USER_AGENT) === false) excluded.push({ url, reason: 'robots_txt' });
      else if (pages.length + allowed.length >= CRAWL_LIMITS.maxPages) excluded.push({ url, reason: 'page_limit' });
      else allowed.push(url);
    }
    // A few fetches at a time; results are taken in link order, so the outcome does not depend on timing.
    const fetched: Array<CrawledPage | ExcludedUrl> = [];
    for (let i = 0; i < allowed.length; i += CRAWL_LIMITS.concurrency) {
      fetched.push(...await Promise.all(allowed.slice(i, i + CRAWL_LIMITS.concurrency).map((url) => fetchHtmlPage(fetch, url, origin, level, url === start))));
    }
    const next: string[] = [];
    for (const page of fetched) {
      if ('reason' in page) {
        excluded.push(page);
        continue;
      }
      pages.push(page);
      if (level < depth) {
        for (const link of linksOf(page)) {
          if (seen.has(link) || new URL(link).origin !== origin || looksLikeAsset(link)) continue;
          seen.add(link);
          next.push(link);
        }
      }
    }
    frontier = next;
  }
  return { pages, excluded };
}

async function loadRobots(fetch: PackContext['fetch'], origin: string) {
  const robotsUrl = `${origin}/robots.txt`;
  try {
    const res = await fetch.fetch(robotsUrl, { timeoutMs: CRAWL_LIMITS.timeoutMs, maxBytes: 512 * 1024, maxRedirects: 2, headers: { 'User-Agent': USER_AGENT } });
    if (res.status >= 400) return null;
    return robotsParser(robotsUrl, res.body.toString('utf8'));
  } catch (err) {
    if (err instanceof FetchError) return null;
    throw err;
  }
}

/**
 * Fetches one HTML page (10 s, 5 MiB, 3 redirects). Failures are an ExcludedUrl, except for the start page,
 * whose failure throws 502 upstream_failed. `origin` null accepts redirects to another origin.
 */
export async function fetchHtmlPage(fetch: PackContext['fetch'], url: string, origin: string | null, depth: number, isStart: boolean): Promise<CrawledPage | ExcludedUrl> {
  let res;
  try {
    res = await fetch.fetch(url, {
      timeoutMs: CRAWL_LIMITS.timeoutMs, maxBytes: CRAWL_LIMITS.maxBytes, maxRedirects: CRAWL_LIMITS.maxRedirects,
      headers: { 'User-Agent': USER_AGENT, Accept: 'text/html,application/xhtml+xml' },
    });
  } catch (err) {
    if (!(err instanceof FetchError)) throw err;
    if (isStart) throw UpstreamFailed(`Fetching ${url} failed: ${err.message}`);
    return { url, reason: 'fetch_failed' };
  }
  if (res.status >= 400) {
    if (isStart) throw UpstreamFailed(`${url} answered ${res.status}`);
    return { url, reason: 'http_error' };
  }
  if (origin !== null && new URL(res.url).origin !== origin) return { url, reason: 'off_origin' };
  const type = (res.headers['content-type'] ?? '').toLowerCase();
  if (!type.includes('text/html') && !type.includes('application/xhtml+xml')) return { url, reason: 'not_html' };
  if (res.truncated) return { url, reason: 'too_large' };
  return { url, depth, html: res.body.toString('utf8') };
}
