import { Readability } from '@mozilla/readability';
import { parseHTML as linkedomParse } from 'linkedom';
import TurndownService from 'turndown';
import { normaliseUrl } from './url-normalise.js';

export interface NavigationItem {
  label: string;
  /** Path on the site (same origin) or absolute URL (elsewhere). */
  href: string;
}

export interface Branding {
  themeColor: string | null;
  logoUrl: string | null;
  faviconUrl: string | null;
  /** CSS custom properties holding colours, by name without the leading `--`. */
  colors: Record<string, string>;
}

export interface ExtractedPage {
  url: string;
  title: string;
  description: string | null;
  /** The main content as Markdown, without navigation, header, footer and boilerplate. */
  markdown: string;
  /** Same-origin links found on the page, normalised. */
  links: string[];
  navigation: NavigationItem[];
  branding: Branding;
  wordCount: number;
}

/** Elements that are never main content. */
const BOILERPLATE = 'script, style, noscript, template, iframe, svg, nav, header, footer, aside, form, [role=navigation], [role=banner], [role=contentinfo], [aria-hidden=true], .cookie, .cookies, #cookie-banner';

const turndown = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-' });
turndown.remove(['script', 'style', 'noscript', 'iframe']);

const MAX_NAV_ITEMS = 30;

/** linkedom's document (its types model the browser's window, which the Node lib lacks). */
function parseHTML(html: string): { document: any } {
  return linkedomParse(html) as unknown as { document: any };
}
const COLOR_VALUE = /^(#[0-9a-f]{3,8}|rgba?\([^)]{1,60}\)|hsla?\([^)]{1,60}\))$/i;

/** Extracts title, description, main content (Markdown), links, navigation and branding from one HTML page. */
export function extractPage(html: string, pageUrl: string): ExtractedPage {
  const { document } = parseHTML(html);
  const base = new URL(pageUrl);
  const meta = (selector: string) => document.querySelector(selector)?.getAttribute('content')?.trim() || null;

  const links = new Set<string>();
  for (const a of document.querySelectorAll('a[href]')) {
    const url = resolveLink(a.getAttribute('href'), base);
    if (url && new URL(url).origin === base.origin) links.add(url);
  }

  const title = (document.querySelector('title')?.textContent ?? '').replace(/\s+/g, ' ').trim()
    || meta('meta[property="og:title"]')
    || (document.querySelector('h1')?.textContent ?? '').trim();

  const page: ExtractedPage = {
    url: pageUrl,
    title: title.slice(0, 300),
    description: (meta('meta[name="description"]') ?? meta('meta[property="og:description"]'))?.slice(0, 1000) ?? null,
    markdown: '',
    links: [...links],
    navigation: extractNavigation(document, base),
    branding: extractBranding(document, base, meta),
    wordCount: 0,
  };
  page.markdown = mainContentMarkdown(html);
  if (!page.title) page.title = firstHeading(page.markdown) ?? base.pathname;
  page.wordCount = (page.markdown.match(/[\p{L}\p{N}]+/gu) ?? []).length;
  return page;
}

/** The main content: boilerplate elements removed, then @mozilla/readability, then turndown. */
export function mainContentMarkdown(html: string): string {
  const { document } = parseHTML(html);
  // Text without any element ("0") gives a document without a root element: nothing to read.
  if (!document.documentElement) return '';
  for (const el of document.querySelectorAll(BOILERPLATE)) el.remove();
  const article = new Readability(document, { charThreshold: 20, keepClasses: false }).parse();
  let content = article?.content ?? '';
  if (!content.trim()) {
    const main = document.querySelector('main, article, [role=main]') ?? document.querySelector('body');
    content = main?.innerHTML ?? '';
  }
  return turndown.turndown(content).replace(/\n{3,}/g, '\n\n').trim();
}

function firstHeading(markdown: string): string | null {
  const m = /^#{1,6}\s+(.+)$/m.exec(markdown);
  return m ? m[1]!.trim() : null;
}

function resolveLink(href: string | null | undefined, base: URL): string | null {
  if (!href || href.startsWith('#') || /^(mailto|tel|javascript|data):/i.test(href)) return null;
  try {
    return normaliseUrl(new URL(href, base).toString());
  } catch {
    return null;
  }
}

/** What the site config accepts as a navigation href (schemas/tenant-admin/site-config.schema.json): no javascript:, data: or other schemes. */
const NAVIGATION_HREF = /^(https?:\/\/|\/|#|mailto:|tel:)/;

/** The links of the first `nav` (else the header), in document order, deduplicated; links the site config refuses are skipped. */
function extractNavigation(document: any, base: URL): NavigationItem[] {
  const container = document.querySelector('nav') ?? document.querySelector('header, [role=banner]');
  if (!container) return [];
  const items: NavigationItem[] = [];
  const seen = new Set<string>();
  for (const a of container.querySelectorAll('a[href]')) {
    const url = resolveLink(a.getAttribute('href'), base);
    const label = (a.textContent ?? '').replace(/\s+/g, ' ').trim() || a.getAttribute('aria-label') || a.getAttribute('title') || '';
    if (!url || !label || seen.has(url)) continue;
    seen.add(url);
    const parsed = new URL(url);
    const href = parsed.origin === base.origin ? `${parsed.pathname}${parsed.search}` : url;
    if (!NAVIGATION_HREF.test(href) || href.length > 2000) continue;
    items.push({ label: label.slice(0, 100), href });
    if (items.length >= MAX_NAV_ITEMS) break;
  }
  return items;
}

function extractBranding(document: any, base: URL, meta: (selector: string) => string | null): Branding {
  const absolute = (href: string | null | undefined) => {
    if (!href) return null;
    try { return new URL(href, base).toString(); } catch { return null; }
  };
  const logo = document.querySelector('header img[src*="logo" i], img[class*="logo" i], img[id*="logo" i], .logo img, #logo img, header img, [role=banner] img, img[alt*="logo" i]');
  const favicon = document.querySelector('link[rel~="icon"], link[rel="shortcut icon"], link[rel="apple-touch-icon"]');
  const colors: Record<string, string> = {};
  for (const style of document.querySelectorAll('style')) {
    const css: string = style.textContent ?? '';
    for (const m of css.matchAll(/--([A-Za-z0-9_-]{1,60})\s*:\s*([^;}{]{1,80})/g)) {
      const value = m[2]!.trim();
      if (COLOR_VALUE.test(value) && Object.keys(colors).length < 30) colors[m[1]!] = value;
    }
  }
  const themeColor = meta('meta[name="theme-color"]');
  return {
    themeColor: themeColor && COLOR_VALUE.test(themeColor) ? themeColor : null,
    logoUrl: absolute(logo?.getAttribute('src')),
    faviconUrl: absolute(favicon?.getAttribute('href')) ?? `${base.origin}/favicon.ico`,
    colors,
  };
}
