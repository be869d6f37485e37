import { type FilterHook, type HookPayload, nowIso, type PackContext, type RequestContext } from '../../core/pack-api.js';
import { NON_CONTENT_TYPES, NOT_INDEXED_TYPES } from './content-type.js';
import { slugify } from './slug.js';

/**
 * Filter hooks of every cms content type, inside the write transaction: a slug from the title when
 * absent (unique per tenant and type), `publishedAt` when first published, and the knowledge entry
 * kept in step (published: indexed; anything else or deleted: removed). Being inside the transaction,
 * published content is searchable as soon as the write commits, and a rolled-back write leaves no entry.
 */
export const prepareContent: FilterHook = async (payload, rc, pack) => {
  if (NON_CONTENT_TYPES.has(payload.schema)) return;
  const data = { ...payload.data };
  if (typeof data.slug !== 'string' || data.slug === '') {
    data.slug = await uniqueSlug(rc, pack, payload.schema, payload.id, slugSource(data, payload.id));
  }
  if (data.status === 'published' && !data.publishedAt) data.publishedAt = nowIso();
  await syncKnowledge(rc, pack, payload, data);
  return data;
};

export const removeContent: FilterHook = async (payload, rc, pack) => {
  if (NOT_INDEXED_TYPES.has(payload.schema)) return;
  await pack.knowledge.removeSource(rc, 'cms', sourceRef(payload.schema, payload.id));
};

function slugSource(data: Record<string, unknown>, id: string): string {
  for (const key of ['title', 'name', 'label']) {
    if (typeof data[key] === 'string' && (data[key] as string).trim()) return data[key] as string;
  }
  return id.slice(-12);
}

/** The slug of `text`, or that slug with -2, -3, … when another record of the type holds it. */
export async function uniqueSlug(rc: RequestContext, pack: PackContext, schema: string, id: string, text: string): Promise<string> {
  const base = slugify(text);
  for (let n = 1; n < 1000; n++) {
    const candidate = n === 1 ? base : `${base.slice(0, 75)}-${n}`;
    const found = await pack.records.list(rc, 'cms', schema, { filter: [{ field: 'slug', op: 'eq', value: candidate }], limit: 2, count: false, fields: ['slug'] });
    if (!found.items.some((item) => item.id !== id)) return candidate;
  }
  return `${base.slice(0, 60)}-${id.slice(-12)}`;
}

export function sourceRef(schema: string, id: string): string {
  return `${schema}:${id}`;
}

/** Where a published item lives on the tenant's site (pages at /{slug}, posts at /blog/{slug}). */
export function contentPath(schema: string, slug: string): string {
  if (schema === 'page') return `/${slug}`;
  if (schema === 'post') return `/blog/${slug}`;
  return `/${schema}/${slug}`;
}

/**
 * The knowledge entries of published content, one set per locale that has values of its own (CONTRACT.md 17.2):
 * the default locale's always, and each other locale's with its values in place of the default's. The stored
 * document holds the other locales' values under `$locales` (core/data/locales.ts), which hooks are handed.
 */
async function syncKnowledge(rc: RequestContext, pack: PackContext, { action, schema, id }: HookPayload, data: HookPayload['data']): Promise<void> {
  if (NOT_INDEXED_TYPES.has(schema)) return;
  // A record being created has no entries yet (a delete removes them): no statement for it.
  if (action !== 'create') await pack.knowledge.removeSource(rc, 'cms', sourceRef(schema, id));
  if (data.status !== 'published') return;
  const { $locales: translations, ...document } = data as Record<string, unknown> & { $locales?: Record<string, Record<string, unknown>> };
  const { defaultLocale } = await pack.locales.localesOf(rc, rc.tenantId!);
  const locales: Array<[string, Record<string, unknown>]> = [[defaultLocale, {}], ...Object.entries(translations ?? {}).filter(([locale]) => locale !== defaultLocale)];
  for (const [locale, values] of locales) {
    const localized = { ...document, ...values };
    await pack.knowledge.upsertForSource(rc, {
      sourceModule: 'cms',
      sourceRef: sourceRef(schema, id),
      locale,
      title: String(localized.title ?? localized.name ?? localized.slug),
      content: searchableText(localized),
      url: contentPath(schema, String(localized.slug)),
      // A post is one entry, found once per search (CONTRACT 11.6); pages are chunked by their headings.
      chunked: schema !== 'post',
    });
  }
}

/** The Markdown `content` of a page or post; for other types, their other text fields. */
function searchableText(data: Record<string, unknown>): string {
  const seo = data.seo as { description?: string } | undefined;
  const parts: string[] = [];
  if (typeof data.content === 'string') parts.push(data.content);
  else {
    for (const [key, value] of Object.entries(data)) {
      if (typeof value === 'string' && !['title', 'slug', 'status', 'publishedAt', 'sourceUrl'].includes(key)) parts.push(value);
    }
  }
  if (seo?.description) parts.push(seo.description);
  return parts.join('\n\n');
}
