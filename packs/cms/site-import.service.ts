import type { DataRecord, PackContext, RequestContext } from '../../core/pack-api.js';
import { improveWithAi, type AiStatus } from './ai-assist.js';
import { suggestFixes, type Suggestion } from './import-suggestions.js';
import type { Branding, ExtractedPage, NavigationItem } from './page-extractor.js';
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
  // The HTML tools (linkedom, Readability, Turndown) load with the first import, not with the service.
  const { extractPage } = await import('./page-extractor.js');
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
    // Pages imported before, by sourceUrl, in one query.
    const stored = await storedByUrl(pack, rc, extracted.map((page) => page.url));
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
      planned.push(planPage(page, stored.get(page.url) ?? null, title, description, options.publish));
    }
    const pages = options.dry_run ? planned.map(describe) : await writePages(pack, rc, planned);
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

/** The stored pages whose sourceUrl is one of `urls` (at most 100 per query), the first of each. */
async function storedByUrl(pack: PackContext, rc: RequestContext, urls: string[]): Promise<Map<string, DataRecord>> {
  const stored = new Map<string, DataRecord>();
  const unique = [...new Set(urls)];
  for (let i = 0; i < unique.length; i += 100) {
    const chunk = unique.slice(i, i + 100);
    const found = await pack.records.list(rc, 'cms', 'page', { filter: [{ field: 'sourceUrl', op: 'in', value: chunk }], limit: 200, count: false });
    for (const item of found.items) {
      const url = String(item.sourceUrl);
      if (!stored.has(url)) stored.set(url, item);
    }
  }
  return stored;
}

function planPage(page: ExtractedPage, existing: DataRecord | null, title: string, description: string | null, publish: boolean): PlannedPage {
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

/**
 * Writes the planned pages in the import's transaction: the pages imported before that changed as merge
 * patches, one each; the new ones with free slugs through the kernel's bulk path (the validation, hooks and
 * events of single writes, multi-row statements).
 */
async function writePages(pack: PackContext, rc: RequestContext, planned: PlannedPage[]): Promise<ImportedPage[]> {
  const written = new Map<PlannedPage, DataRecord>();
  for (const plan of planned) {
    if (plan.action === 'skip') written.set(plan, plan.existing!);
    else if (plan.existing) written.set(plan, await pack.records.update(rc, 'cms', 'page', plan.existing.id, plan.document));
  }
  const created = planned.filter((plan) => plan.action === 'create');
  const slugs = await freeSlugs(pack, rc, created.map((plan) => slugFromPath(new URL(plan.extracted.url).pathname)));
  const { items } = await pack.bulk.writeAll(rc, 'cms', 'page', created.map((plan, i) => ({ ...plan.document, slug: slugs[i] })));
  created.forEach((plan, i) => written.set(plan, items[i]));
  return planned.map((plan) => {
    const record = written.get(plan)!;
    return { ...describe(plan), slug: String(record.slug), id: record.id, status: String(record.status) };
  });
}

/** Suffixes tried in one query per page; a slug taken that often is looked for one by one (uniqueSlug's rule). */
const SLUG_TRIES = 5;

/**
 * A free page slug for each text, as uniqueSlug gives it (`about`, else `about-2`, `about-3`, …), also free
 * of the ones handed to the texts before it, looked up together: one query per 100 candidates.
 */
async function freeSlugs(pack: PackContext, rc: RequestContext, texts: string[]): Promise<string[]> {
  const candidate = (base: string, n: number) => (n === 1 ? base : `${base.slice(0, 75)}-${n}`);
  const bases = texts.map(slugify);
  const candidates = [...new Set(bases.flatMap((base) => Array.from({ length: SLUG_TRIES }, (_, i) => candidate(base, i + 1))))];
  const taken = new Set<string>();
  const look = async (values: string[]) => {
    const found = await pack.records.list(rc, 'cms', 'page', { filter: [{ field: 'slug', op: 'in', value: values }], limit: 200, count: false, fields: ['slug'] });
    for (const item of found.items) taken.add(String(item.slug));
  };
  for (let i = 0; i < candidates.length; i += 100) await look(candidates.slice(i, i + 100));
  const slugs: string[] = [];
  for (const base of bases) {
    let n = 1;
    while (n <= SLUG_TRIES && taken.has(candidate(base, n))) n++;
    for (; n > SLUG_TRIES && n < 1000; n++) {
      if (taken.has(candidate(base, n))) continue;
      await look([candidate(base, n)]);
      if (!taken.has(candidate(base, n))) break;
    }
    const slug = candidate(base, n);
    taken.add(slug);
    slugs.push(slug);
  }
  return slugs;
}

/** `/` → home, `/about/team` → about-team. */
export function slugFromPath(path: string): string {
  const words = path.replace(/\.[a-z0-9]+$/i, '').split('/').filter(Boolean).join(' ');
  return words || 'home';
}
