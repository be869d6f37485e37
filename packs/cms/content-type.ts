import type { SchemaInput } from '../../core/pack-api.js';

/** Content types without slug, status and publishing (they are not content a site shows). */
export const NON_CONTENT_TYPES = new Set(['form_submission']);

/** Content types that are published but not indexed as knowledge. */
export const NOT_INDEXED_TYPES = new Set(['form', 'form_submission']);

export const STATUSES = ['draft', 'published', 'archived'] as const;

export const SLUG_PATTERN = '^[a-z0-9]+(?:-[a-z0-9]+)*$';

/**
 * The registration hook of the open `cms` namespace: every content type a tenant registers gets `slug`
 * (unique per tenant and type), `status` (draft | published | archived, default draft) and `publishedAt`.
 */
export function withContentFields(input: SchemaInput): SchemaInput {
  if (NON_CONTENT_TYPES.has(input.name)) return input;
  const schema = input.schema && typeof input.schema === 'object' ? input.schema : {};
  const properties = { ...(schema.properties ?? {}) };
  properties.slug = { type: 'string', pattern: SLUG_PATTERN, maxLength: 200 };
  properties.status = { type: 'string', enum: [...STATUSES], default: 'draft' };
  properties.publishedAt = { type: ['string', 'null'], format: 'date-time' };
  const unique = [...(input.unique ?? [])];
  if (!unique.some((set) => set.length === 1 && set[0] === 'slug')) unique.push(['slug']);
  const indexes = [...(input.indexes ?? [])];
  if (!indexes.some((set) => set.length === 1 && set[0] === 'status')) indexes.push(['status']);
  return { ...input, schema: { ...schema, properties }, unique, indexes };
}
