import type { JsonSchema } from '../../core/pack-api.js';

/** Response schemas of the CMS routes (documentation for the OpenAPI document). */

const pagination: JsonSchema = {
  type: 'object',
  properties: {
    limit: { type: 'integer' }, offset: { type: 'integer' }, total: { type: ['integer', 'null'] },
    hasMore: { type: 'boolean' }, nextCursor: { type: ['string', 'null'] },
  },
};

const record: JsonSchema = {
  type: 'object',
  description: 'A content item: its fields plus id, createdAt, updatedAt and version',
  properties: { id: { type: 'string' }, slug: { type: 'string' }, status: { type: 'string', enum: ['draft', 'published', 'archived'] }, createdAt: { type: 'string' }, updatedAt: { type: 'string' }, version: { type: 'integer' } },
};

export const contentItemResponse = record;
export const contentListResponse: JsonSchema = { type: 'object', properties: { items: { type: 'array', items: record }, pagination } };

export const knowledgeSearchResponse: JsonSchema = {
  type: 'object',
  properties: {
    items: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          id: { type: 'string' }, title: { type: 'string' }, snippet: { type: 'string', description: 'HTML-escaped, matches in <mark>' },
          url: { type: ['string', 'null'] }, sourceModule: { type: 'string' },
          locale: { type: ['string', 'null'], description: 'The locale of a localised source\'s entry (CONTRACT.md 17.2)' }, score: { type: 'number' },
        },
      },
    },
    pagination,
  },
};

export const importResponse: JsonSchema = {
  type: 'object',
  properties: {
    dryRun: { type: 'boolean' },
    ai: { type: 'string', enum: ['off', 'used', 'unavailable', 'failed'] },
    pages: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          url: { type: 'string' }, slug: { type: 'string' }, title: { type: 'string' }, description: { type: ['string', 'null'] },
          action: { type: 'string', enum: ['create', 'update', 'skip'] }, id: { type: ['string', 'null'] }, status: { type: 'string' }, wordCount: { type: 'integer' },
        },
      },
    },
    navigation: { type: 'array', items: { type: 'object', properties: { label: { type: 'string' }, href: { type: 'string' } } } },
    branding: {
      type: ['object', 'null'],
      properties: { themeColor: { type: ['string', 'null'] }, logoUrl: { type: ['string', 'null'] }, faviconUrl: { type: ['string', 'null'] }, colors: { type: 'object' } },
    },
    suggestions: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          type: { type: 'string', enum: ['missing_description', 'duplicate_title', 'thin_page', 'ai'] }, url: { type: 'string' }, message: { type: 'string' },
          fix: { type: 'object', properties: { field: { type: 'string' }, value: { type: 'string' } } },
        },
      },
    },
    excluded: { type: 'array', items: { type: 'object', properties: { url: { type: 'string' }, reason: { type: 'string' } } } },
    applied: { type: 'object', properties: { navigation: { type: 'boolean' }, branding: { type: 'boolean' }, suggestions: { type: 'integer' }, published: { type: 'integer' } } },
    stats: { type: 'object', properties: { pagesCrawled: { type: 'integer' }, excluded: { type: 'integer' }, created: { type: 'integer' }, updated: { type: 'integer' }, skipped: { type: 'integer' }, durationMs: { type: 'integer' } } },
  },
};
