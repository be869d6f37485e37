import type { RouteFamily } from '../http/envelope.js';
import type { JsonSchema } from '../http/route.js';
import { componentRef } from './openapi-schema.js';

/** The envelopes of CONTRACT.md section 1 as OpenAPI components, and the wrappers that use them. */
export const ENVELOPE_COMPONENTS: Record<string, JsonSchema> = {
  ErrorDetail: {
    type: 'object',
    description: 'One failing input: a JSON pointer into the body (or `query/<name>`) and what is wrong with it.',
    required: ['path', 'message'],
    properties: { path: { type: 'string' }, message: { type: 'string' } },
  },
  Pagination: {
    type: 'object',
    required: ['limit', 'offset', 'total', 'hasMore', 'nextCursor'],
    properties: {
      limit: { type: 'integer' },
      offset: { type: 'integer' },
      total: { type: ['integer', 'null'], description: 'null when the request passed count=false' },
      totalEstimated: { type: 'boolean', description: 'Lists of the data API: true when `total` is the planner\'s estimate (count=estimated)' },
      hasMore: { type: 'boolean' },
      nextCursor: { type: ['string', 'null'], description: 'Pass as `cursor` for the next page (keyset paging)' },
    },
  },
  BffError: {
    type: 'object',
    description: 'Error envelope of the domain (BFF) endpoints.',
    required: ['status', 'data', 'message', 'error'],
    properties: {
      status: { const: 'error' },
      data: { type: 'null' },
      message: { type: 'string' },
      error: {
        type: 'object',
        required: ['code', 'details'],
        properties: { code: { type: 'string' }, details: { type: 'array', items: { $ref: componentRef('ErrorDetail') } } },
      },
    },
  },
  JSendFail: {
    type: 'object',
    description: 'JSend failure (4xx) of the universal data API (/metadata, /data).',
    required: ['status', 'data'],
    properties: {
      status: { const: 'fail' },
      data: {
        type: 'object',
        required: ['code', 'message', 'errors'],
        properties: {
          code: { type: 'string' },
          message: { type: 'string' },
          errors: { type: 'array', items: { $ref: componentRef('ErrorDetail') } },
        },
      },
    },
  },
  JSendError: {
    type: 'object',
    description: 'JSend error (5xx) of the universal data API; never carries a stack trace, SQL or a secret.',
    required: ['status', 'code', 'message'],
    properties: { status: { const: 'error' }, code: { type: 'string' }, message: { type: 'string' } },
  },
};

/** The success envelope of a route family around the schema of `data`. */
export function successSchema(family: RouteFamily, data: JsonSchema): JsonSchema {
  if (family === 'jsend') {
    return { type: 'object', required: ['status', 'data'], properties: { status: { const: 'success' }, data } };
  }
  return {
    type: 'object',
    required: ['status', 'data', 'message', 'error'],
    properties: { status: { const: 'success' }, data, message: { type: 'null' }, error: { type: 'null' } },
  };
}

/** The error envelope of a route family for one status, with the codes it may carry. */
export function errorSchema(family: RouteFamily, status: number, codes: string[]): JsonSchema {
  const code = { type: 'string', enum: codes };
  if (family === 'bff') {
    return { allOf: [{ $ref: componentRef('BffError') }, { type: 'object', properties: { error: { type: 'object', properties: { code } } } }] };
  }
  if (status >= 500) return { allOf: [{ $ref: componentRef('JSendError') }, { type: 'object', properties: { code } }] };
  return { allOf: [{ $ref: componentRef('JSendFail') }, { type: 'object', properties: { data: { type: 'object', properties: { code } } } }] };
}

/** A page of items, as every list answers. */
export function pageSchema(item: JsonSchema): JsonSchema {
  return {
    type: 'object',
    required: ['items', 'pagination'],
    properties: { items: { type: 'array', items: item }, pagination: { $ref: componentRef('Pagination') } },
  };
}
