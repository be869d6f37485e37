import type { JsonSchema } from './route.js';

/**
 * JSON Schemas for route specs (the OpenAPI document) shared by every pack that serves records:
 * a record, a page of records, and the data API's list query.
 */

/** Bounds of a list query (core/data/list-query.ts checks them; the list query's schema below states them). */
export const LIST_LIMITS = { defaultLimit: 50, maxLimit: 200, maxOffset: 100_000, maxInValues: 100 };

const SERVER_FIELD_SCHEMAS = {
  id: { type: 'string', format: 'uuid' },
  createdAt: { type: 'string', format: 'date-time' },
  updatedAt: { type: 'string', format: 'date-time' },
  version: { type: 'integer', minimum: 1 },
};

/**
 * A record as the API returns it: the schema's properties, flat, beside the server-managed fields. A localised
 * property (`x-localized`, CONTRACT.md 17.2) is also null (`?fallback=false`) or `{ "<locale>": value }` (`?locale=*`).
 */
export function recordResponse(definition: { schema: { properties: Record<string, unknown> } }): JsonSchema {
  const properties = Object.fromEntries(Object.entries(definition.schema.properties).map(([name, prop]) => [name, asRead(prop as JsonSchema)]));
  return { type: 'object', properties: { ...SERVER_FIELD_SCHEMAS, ...properties } };
}

/**
 * A property as reads return it: a localised one (`x-localized`, CONTRACT.md 17.2) is also null (`?fallback=false`)
 * or `{ "<locale>": value }` (`?locale=*`); any other as it is.
 */
export function asRead(prop: JsonSchema): JsonSchema {
  if (prop?.['x-localized'] !== true) return prop;
  return { anyOf: [prop, { type: 'null' }, { type: 'object', description: '?locale=*: each locale\'s value', additionalProperties: { anyOf: [prop, { type: 'null' }] } }] };
}

/** `?locale=` and `?fallback=` of the routes that read or write localised fields (CONTRACT.md 17.2). */
export const LOCALE_QUERY_PROPERTIES = {
  locale: { type: 'string', 'x-locale': 'any', description: 'A locale of the site (its localised fields\' values), or * for every locale\'s' },
  fallback: { type: 'string', enum: ['true', 'false'], description: 'false: a localised field without a value of its own in the locale is null' },
} as const;

/**
 * `?locale=` of a write (CONTRACT.md 17.2): the locale whose values of the localised fields it sets, not `*`.
 * `x-locale` says which values a `locale` parameter takes, `one` locale of the tenant or `any` (also `*`): each
 * document enumerates them (core/openapi/data-paths.ts, narrowLocales).
 */
export const WRITE_LOCALE_QUERY = { type: 'string', 'x-locale': 'one', description: 'A locale of the site: the localised fields named set its values (default: the default locale\'s)' } as const;

/**
 * `{ items, pagination }` as CONTRACT.md section 1 fixes it. The items' `required` is left out: `fields=`
 * returns partial items.
 */
export function pageResponse(item: JsonSchema): JsonSchema {
  const { required: _partial, ...partialItem } = item;
  return {
    type: 'object',
    properties: {
      items: { type: 'array', items: partialItem },
      pagination: {
        type: 'object',
        properties: {
          limit: { type: 'integer' }, offset: { type: 'integer' }, total: { type: ['integer', 'null'] },
          hasMore: { type: 'boolean' }, nextCursor: { type: ['string', 'null'] },
        },
      },
    },
  };
}

/**
 * `offset` of every paged list: 0 to LIST_LIMITS.maxOffset (100,000; docs/data-api.md), beyond which the cursor
 * pages. A route's query schema needs a maximum on each integer (PackRouter checks it at declaration), so that no
 * number reaches SQL that the engine cannot bind.
 */
export const OFFSET_QUERY = { type: 'integer', minimum: 0, maximum: LIST_LIMITS.maxOffset, default: 0 } as const;

/**
 * An http or https URL as a body field: what the service fetches or links to (core/fetch refuses other schemes), said
 * in the schema so that the document does not offer `0` as a URL.
 */
export const HTTP_URL = { type: 'string', format: 'uri', pattern: '^https?://', maxLength: 2000 } as const;

/** The paging of a list that is not a record list (revisions, the audit log): limit, offset, cursor, count. */
export const PAGE_QUERY_PROPERTIES = {
  limit: { type: 'integer', minimum: 1, maximum: LIST_LIMITS.maxLimit, default: LIST_LIMITS.defaultLimit },
  offset: OFFSET_QUERY,
  cursor: { type: 'string', maxLength: 64, description: 'nextCursor of the previous page' },
  count: { type: 'boolean', description: 'false leaves pagination.total null' },
} as const;

/** The list query of CONTRACT.md section 3; `filter[field]` and `filter[field][op]` come on top. */
export const listQuerySchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  patternProperties: { '^filter\\[': { type: 'string', description: 'filter[field]=v or filter[field][op]=v' } },
  properties: {
    limit: { type: 'integer', minimum: 1, maximum: LIST_LIMITS.maxLimit, default: LIST_LIMITS.defaultLimit },
    offset: OFFSET_QUERY,
    cursor: { type: 'string', description: 'nextCursor of the previous page (keyset paging)' },
    sort: { type: 'string', description: 'comma list, - for descending; default -createdAt' },
    fields: { type: 'string', description: 'comma list of fields to return' },
    count: { type: 'boolean', description: 'false leaves pagination.total null' },
  },
};

/** A regular expression group (ECMA-262 with the u flag, as ajv and the document read it) matching exactly one of the names. */
export function oneOfPattern(names: string[]): string {
  return `(?:${names.map((n) => n.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join('|')})`;
}
