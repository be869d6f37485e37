import type { DataRecord, PackContext, RequestContext } from '../../core/pack-api.js';
import { improveWithAi, type AiStatus } from './ai-assist.js';
import { uniqueSlug } from './content-publish.hook.js';
import { suggestFixes, type Suggestion } from './import-suggestions.js';
import { extractPage, type Branding, type ExtractedPage, type NavigationItem } from './page-extractor.js';
import { crawlSite, type ExcludedUrl } from './site-crawler.js';
import { slugify } from './slug.js';

export interface ImportOptions {
  url: string;
  depth: number;
  use_ai: boolean;
  dry_run: boolean;
  apply_suggestions: boolean;
  apply_navigation: boolean;
  apply_branding: boolean;
  publish: boolean;
}

export interface ImportedPage {
  url: string;
  slug: string;
  title: string;
  description: string | null;
  action: 'create' | 'update' | 'skip';
  id: string | null;
  status: string;
  wordCount: number;
}

export interface ImportResult {
  dryRun: boolean;
  ai: AiStatus | 'off';
  pages: ImportedPage[];
  navigation: NavigationItem[];
  branding: Branding | null;
  suggestions: Suggestion[];
  excluded: ExcludedUrl[];
  applied: { navigation: boolean; branding: boolean; suggestions: number; published: number };
  stats: { pagesCrawled: number; excluded: number; created: number; updated: number; skipped: number; durationMs: number };
}

interface PlannedPage {
  extracted: ExtractedPage;
  existing: DataRecord | null;
  document: Record<string, unknown>;
  action: ImportedPage['action'];
}

/**
 * Imports a whole site into `page` content: crawl (same origin, robots.txt), extract, suggest, optionally
 * improve with the LLM, then (unless dry_run) write every page, the navigation and the branding in one
 * transaction. A page is matched to an earlier import by its sourceUrl: changed → update, unchanged → skip.
 */
export async function importSite(pack: PackContext, rc: RequestContext, options: ImportOptions): Promise<ImportResult> {
  const started = Date.now();
  // Each page is parsed once: when the crawler asks for its links, or after the crawl for the last level.
  const extractedByUrl = new Map<string, ExtractedPage>();
  const crawl = await crawlSite(pack.fetch, options.url, options.depth, (page) => {
    const extracted = extractPage(page.html, page.url);
    extractedByUrl.set(page.url, extracted);
    return extracted.links;
  });
  const extracted = crawl.pages.map((p) => extractedByUrl.get(p.url) ?? extractPage(p.html, p.url));

  const suggestions = suggestFixes(extracted);
  let ai: ImportResult['ai'] = 'off';
  const improved = new Map<string, { title?: string; description?: string }>();
  if (options.use_ai) {
    const result = await improveWithAi(pack, extracted);
    ai = result.status;
    result.pages.forEach((v, k) => improved.set(k, v));
    suggestions.push(...result.suggestions);
  }

  const start = extracted[0] ?? null;
  const navigation = start?.navigation ?? [];
  const branding = start?.branding ?? null;
  let appliedSuggestions = 0;

  const run = async (rc: RequestContext) => {
    const planned: PlannedPage[] = [];
    for (const page of extracted) {
      let title = page.title;
      let description = page.description;
      if (options.apply_suggestions) {
        for (const s of suggestions) {
          if (s.url !== page.url || !s.fix) continue;
          if (s.fix.field === 'title') title = s.fix.value;
          else if (!description) description = s.fix.value;
          appliedSuggestions += 1;
        }
        const better = improved.get(page.url);
        if (better?.title) { title = better.title; appliedSuggestions += 1; }
        if (better?.description) { description = better.description; appliedSuggestions += 1; }
      }
      planned.push(await planPage(pack, rc, page, title, description, options.publish));
    }
    const pages: ImportedPage[] = [];
    for (const plan of planned) pages.push(await (options.dry_run ? describe(plan) : writePage(pack, rc, plan)));
    if (!options.dry_run && rc.tenantId) {
      if (options.apply_navigation) await pack.use('tenant-admin.siteProfile').patchSiteConfig(rc, rc.tenantId, { navigation });
      if (options.apply_branding && branding) await pack.use('tenant-admin.siteProfile').patchBranding(rc, rc.tenantId, brandingPatch(branding));
    }
    return pages;
  };
  const pages = options.dry_run ? await run(rc) : await pack.db.transaction(rc, run);

  const count = (action: ImportedPage['action']) => pages.filter((p) => p.action === action).length;
  return {
    dryRun: options.dry_run,
    ai,
    pages,
    navigation,
    branding,
    suggestions,
    excluded: crawl.excluded,
    applied: {
      navigation: !options.dry_run && options.apply_navigation,
      branding: !options.dry_run && options.apply_branding && branding !== null,
      suggestions: options.dry_run ? 0 : appliedSuggestions,
      published: options.dry_run ? 0 : pages.filter((p) => p.status === 'published' && p.action !== 'skip').length,
    },
    stats: {
      pagesCrawled: crawl.pages.length, excluded: crawl.excluded.length,
      created: count('create'), updated: count('update'), skipped: count('skip'), durationMs: Date.now() - started,
    },
  };
}

const HEX_COLOR = /^#([0-9a-f]{3}|[0-9a-f]{6})$/i;
const COLOR_ROLES: Array<[string, RegExp]> = [
  ['primary', /primary|brand|main/i], ['secondary', /secondary/i], ['accent', /accent|highlight/i],
  ['background', /background|bg/i], ['text', /text|foreground|fg/i],
];

/** The branding document's shape: logo, favicon and hex colours by role (CSS custom properties by name, theme-color as primary). */
export function brandingPatch(branding: Branding): Record<string, unknown> {
  const colors: Record<string, string> = {};
  for (const [name, value] of Object.entries(branding.colors)) {
    if (!HEX_COLOR.test(value)) continue;
    const role = COLOR_ROLES.find(([role, pattern]) => pattern.test(name) && !colors[role]);
    if (role) colors[role[0]] = value;
  }
  if (branding.themeColor && HEX_COLOR.test(branding.themeColor) && !colors.primary) colors.primary = branding.themeColor;
  return {
    ...(branding.logoUrl ? { logoUrl: branding.logoUrl } : {}),
    ...(branding.faviconUrl ? { faviconUrl: branding.faviconUrl } : {}),
    ...(Object.keys(colors).length ? { colors } : {}),
  };
}

async function planPage(pack: PackContext, rc: RequestContext, page: ExtractedPage, title: string, description: string | null, publish: boolean): Promise<PlannedPage> {
  const found = await pack.records.list(rc, 'cms', 'page', { 'filter[sourceUrl]': page.url, limit: '1', count: 'false' });
  const existing = (found.items[0] as DataRecord | undefined) ?? null;
  const document: Record<string, unknown> = {
    title: title || page.url,
    content: page.markdown,
    seo: { title: title || page.url, ...(description ? { description } : {}) },
    sourceUrl: page.url,
  };
  if (publish) document.status = 'published';
  if (!existing) return { extracted: page, existing, document, action: 'create' };
  const unchanged = existing.title === document.title && existing.content === document.content
    && JSON.stringify(existing.seo ?? {}) === JSON.stringify(document.seo) && (!publish || existing.status === 'published');
  return { extracted: page, existing, document, action: unchanged ? 'skip' : 'update' };
}

function describe(plan: PlannedPage): ImportedPage {
  const path = new URL(plan.extracted.url).pathname;
  return {
    url: plan.extracted.url,
    slug: String(plan.existing?.slug ?? slugify(slugFromPath(path))),
    title: String(plan.document.title),
    description: ((plan.document.seo as { description?: string }).description) ?? null,
    action: plan.action,
    id: plan.existing?.id ?? null,
    status: String(plan.document.status ?? plan.existing?.status ?? 'draft'),
    wordCount: plan.extracted.wordCount,
  };
}

async function writePage(pack: PackContext, rc: RequestContext, plan: PlannedPage): Promise<ImportedPage> {
  let record: DataRecord;
  if (plan.action === 'skip') record = plan.existing!;
  else if (plan.existing) record = await pack.records.update(rc, 'cms', 'page', plan.existing.id, plan.document);
  else {
    const slug = await uniqueSlug(rc, pack, 'page', '', slugFromPath(new URL(plan.extracted.url).pathname));
    record = await pack.records.create(rc, 'cms', 'page', { ...plan.document, slug });
  }
  return { ...describe(plan), slug: String(record.slug), id: record.id, status: String(record.status) };
}

/** `/` → home, `/about/team` → about-team. */
export function slugFromPath(path: string): string {
  const words = path.replace(/\.[a-z0-9]+$/i, '').split('/').filter(Boolean).join(' ');
  return words || 'home';
}
