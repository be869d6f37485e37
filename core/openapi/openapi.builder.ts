import { readFileSync } from 'node:fs';
import type { Config } from '../../config/index.js';
import { familyOf } from '../http/envelope.js';
import { fromRoot } from '../base/package-root.js';
import { honoursPreviews, type HttpMethod, type JsonSchema, type RouteEntry } from '../http/route.js';
import { groupByStatus, routeErrorCodes } from './error-codes.js';
import { IDENTIFIER } from '../metadata/schema-definition.js';
import { ENVELOPE_COMPONENTS, errorSchema, successSchema } from './openapi-envelopes.js';
import { toOpenApiPaths } from './openapi-paths.js';
import { componentName, componentRef, needsComponent, toOpenApiSchema } from './openapi-schema.js';

export type OpenApiOperation = Record<string, any>;
export type OpenApiPathItem = Partial<Record<HttpMethod, OpenApiOperation>>;

export interface OpenApiDocument {
  openapi: '3.1.0';
  info: { title: string; version: string; description: string };
  servers: Array<{ url: string }>;
  tags: Array<{ name: string; description?: string }>;
  paths: Record<string, OpenApiPathItem>;
  components: {
    schemas: Record<string, JsonSchema>;
    securitySchemes: Record<string, Record<string, unknown>>;
    parameters: Record<string, Record<string, unknown>>;
    headers: Record<string, Record<string, unknown>>;
  };
}

const VERSION = (JSON.parse(readFileSync(fromRoot('package.json'), 'utf8')) as { version: string }).version;
const METHODS_WITH_BODY: HttpMethod[] = ['post', 'put', 'patch'];
/** Path parameters that name a namespace, schema or content type: refused unless they are identifiers. */
const IDENTIFIER_PARAMS = new Set(['ns', 'schema', 'name', 'contentType']);

/** Security of a route that needs credentials: a JWT, or (outside production) the test key. */
export function securityFor(config: Config): Array<Record<string, string[]>> {
  return config.isProduction ? [{ bearerAuth: [] }] : [{ bearerAuth: [] }, { testKey: [] }];
}

/**
 * The platform's OpenAPI 3.1 document, generated from the declared routes (the same specs that drive
 * validation and auth), so it cannot drift from the behaviour.
 */
export function buildPlatformDocument(routes: RouteEntry[], config: Config, packModules: Record<string, string | null> = {}): OpenApiDocument {
  const doc: OpenApiDocument = {
    openapi: '3.1.0',
    info: {
      title: 'Headless platform API',
      version: VERSION,
      description: [
        'Multi-tenant backend: the universal data API (`/metadata`, `/data`, JSend envelopes) and the domain packs (BFF envelopes).',
        'Send `Authorization: Bearer <JWT>`; a superadmin names the tenant with `X-Tenant-Id`.',
        'Fetched with a bearer token, this document also lists the tenant\'s registered schemas as concrete `/data/{namespace}/{schema}` paths.',
      ].join('\n\n'),
    },
    servers: [{ url: config.publicBaseUrl }],
    tags: [],
    paths: {},
    components: {
      schemas: structuredClone(ENVELOPE_COMPONENTS),
      securitySchemes: securitySchemes(config),
      parameters: {
        TenantHeader: {
          name: 'X-Tenant-Id', in: 'header', required: false, schema: { type: 'string' },
          description: 'The tenant to act for. Superadmins name it here; other callers act for the tenant of their token and may omit it.',
        },
        IdempotencyKey: {
          name: 'Idempotency-Key', in: 'header', required: false, schema: { type: 'string', maxLength: 255 },
          description: 'Makes a retry safe: the same key and body replay the first answer (header `Idempotent-Replayed: true`); '
            + 'another body answers 422 idempotency_key_reused, a request while the first runs 409 conflict. Kept 24 h.',
        },
      },
      headers: {
        RequestId: { description: 'Id of the request, also in the logs', schema: { type: 'string' } },
      },
    },
  };
  const schemaIds = new Map<JsonSchema, string>();
  const operationIds = new Set<string>();
  const tags = new Map<string, string>();
  for (const entry of routes) {
    for (const { path, params } of toOpenApiPaths(entry.path)) {
      const operation = buildOperation(doc, entry, params, config, schemaIds, packModules[entry.pack] ?? null);
      operation.operationId = uniqueId(operationIds, operationIdOf(entry.method, path));
      for (const tag of operation.tags as string[]) if (!tags.has(tag)) tags.set(tag, `Routes of the ${entry.pack} ${entry.pack === 'kernel' ? '' : 'pack '}`.trim());
      (doc.paths[path] ??= {})[entry.method] = operation;
    }
  }
  doc.tags = [...tags.entries()].map(([name, description]) => ({ name, description }));
  return doc;
}

function securitySchemes(config: Config): OpenApiDocument['components']['securitySchemes'] {
  const schemes: OpenApiDocument['components']['securitySchemes'] = {
    bearerAuth: {
      type: 'http', scheme: 'bearer', bearerFormat: 'JWT',
      description: 'A JWT from the identity provider (RS256/ES256 by JWKS, or HS256). Claims: sub, email, tenant_id, roles (admin, editor, viewer, superadmin).',
    },
  };
  if (!config.isProduction) {
    schemes.testKey = {
      type: 'http', scheme: 'bearer',
      description: 'The TEST_API_KEY as bearer token: a platform superadmin. Accepted outside production only.',
    };
  }
  return schemes;
}

function buildOperation(
  doc: OpenApiDocument, entry: RouteEntry, pathParams: Array<{ name: string; wildcard: boolean }>, config: Config,
  schemaIds: Map<JsonSchema, string>, packModule: string | null,
): OpenApiOperation {
  const { spec, method } = entry;
  const family = spec.family ?? familyOf(entry.path);
  const place = (schema: JsonSchema, fallback: string) => placeSchema(doc, schema, fallback, schemaIds);
  const label = operationIdOf(method, entry.path);

  const parameters: Array<Record<string, unknown>> = pathParams.map(({ name, wildcard }) => ({
    name, in: 'path', required: true,
    // A path segment is never empty (`/data/ns/s/` is the collection, not a record with the id "").
    schema: spec.params?.[name] ? place(spec.params[name], `${label}.path.${name}`) : IDENTIFIER_PARAMS.has(name) ? { type: 'string', pattern: IDENTIFIER.source } : { type: 'string', minLength: 1 },
    ...(name === spec.tenantParam ? { description: 'The tenant id' } : {}),
    ...(wildcard ? { description: 'The rest of the path; may contain slashes', 'x-wildcard': true } : {}),
  }));
  if (spec.auth === 'tenant' && !spec.tenantParam) parameters.push({ $ref: '#/components/parameters/TenantHeader' });
  if (spec.idempotent) parameters.push({ $ref: '#/components/parameters/IdempotencyKey' });
  for (const header of spec.headers ?? []) parameters.push({ in: 'header', ...header });
  const previews = honoursPreviews(spec, method);
  if (previews) {
    const description = 'A preview token (POST /previews): its drafts in place of the live records, no-store; 404 when unknown or expired';
    parameters.push({ name: 'preview', in: 'query', required: false, schema: { type: 'string' }, description });
    parameters.push({ name: 'X-Preview-Token', in: 'header', required: false, schema: { type: 'string' }, description });
  }
  const query = spec.query as { properties?: Record<string, JsonSchema>; required?: string[] } | undefined;
  for (const [name, schema] of Object.entries(query?.properties ?? {})) {
    const isObject = schema.type === 'object';
    parameters.push({
      name, in: 'query', required: (query?.required ?? []).includes(name),
      schema: place(schema, `${label}.query.${name}`),
      ...(typeof schema.description === 'string' ? { description: schema.description } : {}),
      ...(isObject ? { style: 'deepObject', explode: true } : {}),
    });
  }

  const operation: OpenApiOperation = {
    summary: spec.summary,
    ...(spec.description ? { description: spec.description } : {}),
    tags: spec.tags?.length ? [...spec.tags] : [entry.pack],
    parameters,
  };

  if (spec.body === 'raw') {
    operation.requestBody = { required: true, content: { 'application/octet-stream': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } } } };
  } else if (spec.body) {
    operation.requestBody = { required: true, content: { 'application/json': { schema: place(spec.body, `${label}.body`) } } };
  } else if (METHODS_WITH_BODY.includes(method)) {
    operation.requestBody = { required: false, content: { 'application/json': { schema: { type: 'object' } } } };
  }

  const status = String(spec.status ?? 200);
  const data = spec.response ? place(spec.response, `${label}.response`) : {};
  // The content types a handler writes itself (the first is the default; e.g. an export's NDJSON or CSV).
  const produced = spec.produces === undefined ? [] : ([] as string[]).concat(spec.produces);
  const requestIdHeader = { 'X-Request-Id': { $ref: '#/components/headers/RequestId' } };
  operation.responses = {
    [status]: {
      description: spec.summary,
      headers: requestIdHeader,
      content: produced.length ? Object.fromEntries(produced.map((type) => [type, { schema: type.includes('json') ? data : { type: 'string' } }])) : { 'application/json': { schema: successSchema(family, data) } },
    },
  };
  const module = spec.module === undefined ? packModule : spec.module;
  for (const [errorStatus, codes] of groupByStatus([...new Set([...routeErrorCodes(spec, METHODS_WITH_BODY.includes(method) && spec.body !== 'raw', module !== null, entry.path), ...(previews ? ['not_found'] : [])])])) {
    operation.responses[String(errorStatus)] = {
      description: codes.join(', '),
      headers: { ...requestIdHeader, ...errorHeaders(errorStatus) },
      content: { 'application/json': { schema: errorSchema(family, errorStatus, codes) } },
    };
  }

  // Statuses the handler answers itself: without a body, or (an error status of a route that writes its own
  // content type, e.g. the console's page) with a body of that type beside the JSON error of the same status.
  for (const [answer, declared] of Object.entries(spec.answers ?? {})) {
    if (typeof declared === 'object') {
      const schema = successSchema(family, place(declared.response, `${label}.${answer}`));
      operation.responses[answer] = { description: declared.description, headers: requestIdHeader, content: { 'application/json': { schema } } };
      continue;
    }
    const description = declared;
    const ownBody = produced.length && Number(answer) >= 400 ? { [produced[0]!]: { schema: produced[0]!.includes('json') ? {} : { type: 'string' } } } : undefined;
    const existing = operation.responses[answer];
    if (existing) {
      existing.description = `${existing.description}; ${description}`;
      if (ownBody) existing.content = { ...existing.content, ...ownBody };
    } else {
      operation.responses[answer] = { description, headers: requestIdHeader, ...(ownBody ? { content: ownBody } : {}) };
    }
  }

  operation.security = spec.auth === 'public' ? [] : securityFor(config);
  operation['x-auth'] = spec.auth;
  if (spec.role) operation['x-role'] = spec.role;
  if (typeof module === 'string') operation['x-module'] = module;
  else if (typeof module === 'function') operation['x-module'] = 'the licensed module of the namespace';
  return operation;
}

function errorHeaders(status: number): Record<string, unknown> {
  if (status === 401) return { 'WWW-Authenticate': { description: 'Bearer', schema: { type: 'string' } } };
  if (status === 429 || status === 503) return { 'Retry-After': { description: 'Seconds to wait', schema: { type: 'integer' } } };
  return {};
}

/** Inline a plain schema; move one with an `$id` or local references into components.schemas. */
export function placeSchema(doc: OpenApiDocument, schema: JsonSchema, fallbackName: string, ids: Map<JsonSchema, string>): JsonSchema {
  if (!needsComponent(schema)) return toOpenApiSchema(schema, '#');
  let name = ids.get(schema);
  if (!name) {
    const base = componentName(typeof schema.$id === 'string' ? schema.$id : fallbackName);
    name = base;
    for (let i = 2; doc.components.schemas[name]; i += 1) name = `${base}_${i}`;
    doc.components.schemas[name] = toOpenApiSchema(schema, componentRef(name));
    ids.set(schema, name);
  }
  return { $ref: componentRef(name) };
}

/** `get /api/v1/data/{ns}/{schema}` → `getDataNsSchema`. */
export function operationIdOf(method: string, path: string): string {
  const words = path.replace(/^\/api\/v1/, '').split(/[^A-Za-z0-9]+/).filter(Boolean);
  return method + words.map((w) => w[0].toUpperCase() + w.slice(1)).join('');
}

function uniqueId(taken: Set<string>, id: string): string {
  let candidate = id;
  for (let i = 2; taken.has(candidate); i += 1) candidate = `${id}${i}`;
  taken.add(candidate);
  return candidate;
}

/** A string without a NUL character: what the service takes in a path parameter or query value (a URL carries no lone surrogate). */
export const STORABLE_PARAMETER = '^[^\\x00]*$';

/**
 * Says of each free string parameter in a path or query that it holds no NUL character: the service refuses one in
 * any of them (core/http/input-hygiene.ts, 400 validation_failed). Run when every parameter is in the document.
 */
export function markStorableParameters(doc: OpenApiDocument): OpenApiDocument {
  for (const item of Object.values(doc.paths)) {
    for (const operation of Object.values(item)) {
      for (const p of (operation?.parameters ?? []) as Array<Record<string, any>>) {
        if (p.in !== 'query' && p.in !== 'path') continue;
        const schema = p.schema as Record<string, any> | undefined;
        const values = schema?.type === 'object' && schema.additionalProperties && typeof schema.additionalProperties === 'object' ? schema.additionalProperties : schema;
        if (values?.type === 'string' && values.pattern === undefined && values.enum === undefined && values.const === undefined && values.format === undefined) {
          values.pattern = STORABLE_PARAMETER;
        }
      }
    }
  }
  return doc;
}

/**
 * A string without a NUL character: what the service stores from a JSON body. It refuses a lone surrogate too, but
 * no pattern can say so portably: a lone surrogate is not a Unicode scalar value, so validators whose strings are
 * Unicode (Rust's, which Schemathesis uses) refuse a pattern that names one, and then ignore the whole keyword. A
 * JSON text with one is not I-JSON (RFC 7493 2.1); the descriptions say it.
 */
export const STORABLE_STRING = STORABLE_PARAMETER;
/**
 * How deep the document spells out that free JSON (metadata, payloads) holds only storable strings and keys: a
 * recursive component would say it at every depth, but Schemathesis recurses without end on one (its fuzzing phase
 * stops with a RecursionError); at 4 its generator still reached a NUL at depth 7 (a restore's body, MCP params).
 */
const STORABLE_DEPTH = 8;

/**
 * Says of the request bodies what core/http/input-hygiene.ts holds them to (400 validation_failed): no string and no
 * key holds a NUL or a lone surrogate. Free strings gain the pattern (a string with a pattern of its own, beside it in
 * `allOf`), open objects `propertyNames`, and free JSON
 * (an object's other properties, an array's items, a schema without a type) the `StorableJson` components, nested
 * to STORABLE_DEPTH levels. Idempotent; run when every path is in the document.
 */
export function markStorableBodies(doc: OpenApiDocument): OpenApiDocument {
  for (let level = 1; level <= STORABLE_DEPTH; level += 1) {
    const deeper = level < STORABLE_DEPTH ? { $ref: componentRef(`StorableJson${level + 1}`) } : {};
    doc.components.schemas[`StorableJson${level}`] ??= {
      description: 'Any JSON value whose strings and keys hold no NUL character and no lone surrogate (I-JSON, RFC 7493)',
      pattern: STORABLE_STRING, propertyNames: { pattern: STORABLE_STRING }, items: deeper, additionalProperties: deeper,
    };
  }
  const seen = new Set<object>();
  const mark = (schema: unknown): void => {
    if (!schema || typeof schema !== 'object' || seen.has(schema)) return;
    seen.add(schema);
    const s = schema as Record<string, any>;
    if (typeof s.$ref === 'string') {
      const name = s.$ref.split('/').pop()!;
      if (!name.startsWith('StorableJson')) mark(doc.components.schemas[name]);
      return;
    }
    for (const key of ['anyOf', 'oneOf', 'allOf', 'prefixItems']) if (Array.isArray(s[key])) s[key].forEach(mark);
    for (const key of ['properties', 'patternProperties']) if (s[key]) Object.values(s[key]).forEach(mark);
    if (s.enum !== undefined || s.const !== undefined || s.not !== undefined) return;
    const types = ([] as string[]).concat(s.type ?? []);
    const any = types.length === 0 && !s.anyOf && !s.oneOf && !s.allOf;
    if ((any || types.includes('string')) && s.format === undefined && s.contentMediaType === undefined) {
      // A pattern of its own may leave the rest of the string free (a link's `^(https?://|/|#|mailto:|tel:)`): both hold.
      if (s.pattern === undefined) s.pattern = STORABLE_STRING;
      else if (s.pattern !== STORABLE_STRING && !(s.allOf ?? []).some((x: Record<string, unknown>) => x.pattern === STORABLE_STRING)) s.allOf = [...(s.allOf ?? []), { pattern: STORABLE_STRING }];
    }
    if (any || types.includes('object')) {
      if (s.additionalProperties !== false) s.propertyNames ??= { pattern: STORABLE_STRING };
      if (s.additionalProperties === undefined || s.additionalProperties === true) s.additionalProperties = { $ref: componentRef('StorableJson1') };
      else mark(s.additionalProperties);
    }
    if (any || types.includes('array')) {
      if (s.items === undefined || s.items === true) s.items = { $ref: componentRef('StorableJson1') };
      else mark(s.items);
    }
  };
  for (const item of Object.values(doc.paths)) {
    for (const operation of Object.values(item)) {
      // application/json and application/merge-patch+json alike.
      const content: Record<string, { schema?: unknown }> = (operation as Record<string, any>)?.requestBody?.content ?? {};
      for (const [type, media] of Object.entries(content)) if (/[/+]json$/.test(type)) mark(media.schema);
    }
  }
  return doc;
}

/** markStorableParameters and markStorableBodies: what the service refuses as unstorable, said in the document. */
export function markStorableInput(doc: OpenApiDocument): OpenApiDocument {
  return markStorableBodies(markStorableParameters(doc));
}

/** How many operations (method and path pairs) a document lists. */
export function countOperations(doc: OpenApiDocument): number {
  return Object.values(doc.paths).reduce((sum, item) => sum + Object.keys(item).length, 0);
}
