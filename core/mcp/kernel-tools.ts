import type { RecordPolicies } from '../data/record-policies.js';
import { pageResponse } from '../http/response-schemas.js';
import type { JsonSchema } from '../http/route.js';
import { ModuleDisabled } from '../base/errors.js';
import { OPERATORS, queryFromString } from '../data/list-query.js';
import { KNOWLEDGE_LIMITS } from '../knowledge/knowledge.service.js';
import { schemaItemResponse, toSchemaItem } from '../metadata/schema-definition.js';
import type { IdempotencyKeys } from '../http/idempotency.js';
import type { DataRecord } from '../data/records.service.js';
import { idempotentCall } from './idempotent-call.js';
import type { McpToolDefinition, ToolCall } from '../kernel/mcp-tool.js';

/**
 * The kernel's MCP tools (CONTRACT.md section 14): the tenant's knowledge, its schemas and its records,
 * through the same services as /ai, /metadata and /data, so validation, hooks and events are the same.
 */

const IDENTIFIER = { type: 'string', pattern: '^[a-z][a-z0-9_]{0,39}$' };
const SCALAR = { type: ['string', 'number', 'boolean'] };
const EXPAND = { anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' }, maxItems: 20 }], description: 'relation fields whose records to embed, e.g. ["customer", "customer.company"]' };
const SCALARS = { type: 'array', items: SCALAR, minItems: 1, maxItems: 100 };

const record: JsonSchema = {
  type: 'object',
  description: 'A record: the schema\'s fields, flat, beside id, createdAt, updatedAt and version',
  properties: { id: { type: 'string' }, createdAt: { type: 'string' }, updatedAt: { type: 'string' }, version: { type: 'integer' } },
};
const oneRecord: JsonSchema = { type: 'object', required: ['item'], properties: { item: record } };

export const knowledgeHits: JsonSchema = pageResponse({
  type: 'object',
  properties: {
    id: { type: 'string' }, title: { type: 'string' }, snippet: { type: 'string', description: 'HTML-escaped, matches in <mark>' },
    url: { type: ['string', 'null'] }, sourceModule: { type: 'string' },
    locale: { type: ['string', 'null'], description: 'The locale of a localised source\'s entry (CONTRACT.md 17.2)' }, score: { type: 'number' },
  },
});

/** The data API's list query as an object: `filter: { status: "open", amount: { gte: 100 }, stage: ["a", "b"] }`. */
const queryInput: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['namespace', 'schema'],
  properties: {
    namespace: IDENTIFIER,
    schema: IDENTIFIER,
    filter: {
      type: 'object',
      description: `field → value (equals), → [values] (in), or → { op: value } with op in ${OPERATORS.join(', ')} (in/nin take arrays, like takes % wildcards, exists takes true/false)`,
      maxProperties: 20,
      additionalProperties: {
        anyOf: [
          SCALAR,
          SCALARS,
          { type: 'object', minProperties: 1, propertyNames: { enum: [...OPERATORS] }, additionalProperties: { anyOf: [SCALAR, SCALARS] } },
        ],
      },
    },
    sort: { anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' }, maxItems: 4 }], description: 'fields, - for descending; default -createdAt' },
    limit: { type: 'integer', minimum: 1, maximum: 200, default: 50 },
    offset: { type: 'integer', minimum: 0 },
    cursor: { type: 'string', description: 'nextCursor of the previous page' },
    fields: { anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' }, maxItems: 100 }], description: 'the fields to return' },
    count: { type: 'boolean', description: 'false leaves pagination.total null' },
    expand: EXPAND,
  },
};

type Scalar = string | number | boolean;
type FilterValue = Scalar | Scalar[] | Record<string, Scalar | Scalar[]>;

interface QueryArgs {
  namespace: string;
  schema: string;
  filter?: Record<string, FilterValue>;
  sort?: string | string[];
  limit?: number;
  offset?: number;
  cursor?: string;
  fields?: string | string[];
  count?: boolean;
  expand?: string | string[];
}

/** The object form of the query as a query string (`filter[amount][gte]=100`), read into a RecordQuery with queryFromString. */
export function toListQuery(args: QueryArgs): Record<string, string> {
  const text = (v: Scalar | Scalar[]) => (Array.isArray(v) ? v.map(String).join(',') : String(v));
  const query: Record<string, string> = {};
  for (const [field, value] of Object.entries(args.filter ?? {})) {
    if (Array.isArray(value)) query[`filter[${field}][in]`] = text(value);
    else if (typeof value === 'object') for (const [op, v] of Object.entries(value)) query[`filter[${field}][${op}]`] = text(v);
    else query[`filter[${field}]`] = text(value);
  }
  if (args.sort !== undefined) query.sort = text(args.sort);
  if (args.fields !== undefined) query.fields = text(args.fields);
  if (args.limit !== undefined) query.limit = String(args.limit);
  if (args.offset !== undefined) query.offset = String(args.offset);
  if (args.cursor !== undefined) query.cursor = args.cursor;
  if (args.count !== undefined) query.count = String(args.count);
  if (args.expand !== undefined) query.expand = text(args.expand);
  return query;
}

/** A namespace owned by a licensed pack is refused (module_disabled) while the tenant's module is off, as on /data. */
async function requireNamespace({ rc, pack }: ToolCall, namespace: string): Promise<void> {
  const module = pack.schemas.moduleOf(namespace);
  if (!module) return;
  const found = await pack.tenants.lookup(rc, rc.tenantId ?? '', module);
  if (!found?.moduleEnabled) throw ModuleDisabled(module);
}

/** The kernel's tools; `idempotency` is the store of the Idempotency-Key header, shared with the routes. */
export function kernelTools(idempotency: IdempotencyKeys, policies: RecordPolicies): Record<string, McpToolDefinition> {
  return {
    search_knowledge: {
      title: 'Search knowledge',
      description: 'Full-text search in the tenant\'s knowledge (published content, ingested web pages), ranked, with snippet, sourceModule and url.',
      public: true,
      input: {
        type: 'object', additionalProperties: false, required: ['query'],
        properties: {
          query: { type: 'string', minLength: 1, maxLength: 200 },
          limit: { type: 'integer', minimum: 1, maximum: KNOWLEDGE_LIMITS.maxLimit, default: KNOWLEDGE_LIMITS.defaultLimit },
        },
      },
      output: knowledgeHits,
      handler: (args: { query: string; limit?: number }, { rc, pack }) => pack.knowledge.search(rc, args.query, { limit: args.limit }),
    },

    list_schemas: {
      title: 'List schemas',
      description: 'The record schemas the tenant sees (the platform\'s and its own), optionally of one namespace; each with its JSON Schema.',
      input: { type: 'object', additionalProperties: false, properties: { namespace: IDENTIFIER } },
      output: pageResponse(schemaItemResponse),
      handler: async (args: { namespace?: string }, { rc, pack }) => {
        const all = (await pack.schemas.list(rc, args.namespace)).map((s) => toSchemaItem(s, pack.schemas.sealedBy(s.namespace, s.name) !== null));
        // Under role policies: the readable schemas with their readable properties, as GET /metadata/schemas shows them.
        const items = (await Promise.all(all.map((item) => policies.visibleSchema(rc, item)))).filter((item) => item !== null);
        return { items, pagination: { limit: items.length, offset: 0, total: items.length, hasMore: false, nextCursor: null } };
      },
    },

    query_records: {
      title: 'Query records',
      description: 'List records of a schema with the data API\'s query language as an object: filter, sort, limit, offset, cursor, fields, count.',
      input: queryInput,
      output: pageResponse(record),
      handler: async (args: QueryArgs, call) => {
        await requireNamespace(call, args.namespace);
        return call.pack.records.list(call.rc, args.namespace, args.schema, queryFromString(toListQuery(args)));
      },
    },

    get_record: {
      title: 'Get a record',
      description: 'One record by id; expand embeds the records its relation fields refer to.',
      input: {
        type: 'object', additionalProperties: false, required: ['namespace', 'schema', 'id'],
        properties: { namespace: IDENTIFIER, schema: IDENTIFIER, id: { type: 'string', minLength: 1, maxLength: 64 }, expand: EXPAND },
      },
      output: oneRecord,
      handler: async (args: { namespace: string; schema: string; id: string; expand?: string | string[] }, call) => {
        await requireNamespace(call, args.namespace);
        const expand = Array.isArray(args.expand) ? args.expand.join(',') : args.expand;
        return { item: await call.pack.records.get(call.rc, args.namespace, args.schema, args.id, { expand }) };
      },
    },

    create_record: {
      title: 'Create a record',
      description: 'Creates a record, validated against its schema, with the same hooks and events as POST /data/{ns}/{schema}. '
        + 'idempotencyKey works like the Idempotency-Key header.',
      role: 'editor',
      input: {
        type: 'object', additionalProperties: false, required: ['namespace', 'schema', 'data'],
        properties: {
          namespace: IDENTIFIER, schema: IDENTIFIER,
          data: { type: 'object', description: 'the record\'s fields (without id, createdAt, updatedAt, version)' },
          idempotencyKey: { type: 'string', minLength: 1, maxLength: 255 },
        },
      },
      output: oneRecord,
      handler: async (args: { namespace: string; schema: string; data: Record<string, unknown>; idempotencyKey?: string }, call) => {
        await requireNamespace(call, args.namespace);
        const create = async () => ({ item: await call.pack.records.create(call.rc, args.namespace, args.schema, args.data) });
        if (args.idempotencyKey === undefined) return create();
        // The key space of POST /data/{ns}/{schema}: a retry over HTTP with the same key replays this call.
        const route = {
          method: 'POST', path: `/api/v1/data/${args.namespace}/${args.schema}`, family: 'jsend' as const, status: 201,
          headers: (data: unknown) => ({ etag: `"${(data as { item: DataRecord }).item.version}"` }),
        };
        return idempotentCall(idempotency, call.rc, route, args.idempotencyKey, args.data, create);
      },
    },

    update_record: {
      title: 'Update a record',
      description: 'Applies a JSON merge patch (RFC 7396) to a record, validated after merging; ifMatch is the version the change expects (else version_mismatch).',
      role: 'editor',
      input: {
        type: 'object', additionalProperties: false, required: ['namespace', 'schema', 'id', 'patch'],
        properties: {
          namespace: IDENTIFIER, schema: IDENTIFIER, id: { type: 'string', minLength: 1, maxLength: 64 },
          patch: { type: 'object' },
          ifMatch: { anyOf: [{ type: 'integer', minimum: 1 }, { type: 'string', maxLength: 40 }] },
        },
      },
      output: oneRecord,
      handler: async (args: { namespace: string; schema: string; id: string; patch: Record<string, unknown>; ifMatch?: number | string }, call) => {
        await requireNamespace(call, args.namespace);
        const ifMatch = args.ifMatch === undefined ? null : String(args.ifMatch);
        return { item: await call.pack.records.update(call.rc, args.namespace, args.schema, args.id, args.patch, { ifMatch }) };
      },
    },
  };
}
