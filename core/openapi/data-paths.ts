import type { JsonSchema } from '../http/route.js';
import { asRead, LIST_LIMITS, oneOfPattern } from '../http/response-schemas.js';
import type { RegisteredSchema } from '../metadata/schema-definition.js';
import type { TenantLocales } from '../tenants/tenant-locales.js';
import { IDENTIFIER, SERVER_FIELDS, fieldTypes, isScalar } from '../metadata/schema-definition.js';
import { pageSchema, successSchema } from './openapi-envelopes.js';
import type { OpenApiDocument, OpenApiOperation } from './openapi.builder.js';
import { componentRef, toOpenApiSchema } from './openapi-schema.js';
import { EXPAND_LIMITS, safeRelations } from '../data/relations.js';
import { SAFE_FIELD } from '../db/dialects/dialect.js';

/** The universal data API's generic paths (CONTRACT.md section 3) in the document. */
export const DATA_COLLECTION_PATH = '/api/v1/data/{ns}/{schema}';
export const DATA_RECORD_PATH = '/api/v1/data/{ns}/{schema}/{id}';

const FILTER_OPERATORS = 'eq ne gt gte lt lte in nin like exists';

/** What a concrete path's list and read accept in `sort`, `fields` and `expand`: the schema's own fields and relations. */
interface QueryVocabulary {
  sortable: string[];
  fields: string[];
  relations: string[];
}

/**
 * The list query language of GET /data/{ns}/{schema}, shared by the generic and the concrete paths. On a concrete
 * path (`vocabulary`) the values `sort`, `fields` and `expand` may name are patterns of the schema's fields, as the
 * service checks them; on the generic path any schema may be meant, so they stay free text.
 */
function listParameters(filterParameters: Array<Record<string, unknown>>, vocabulary?: QueryVocabulary): Array<Record<string, unknown>> {
  const sort = vocabulary
    ? { type: 'string', pattern: `^(?:[-+]?${oneOfPattern(vocabulary.sortable)})?$`, default: '-createdAt' }
    : { type: 'string', default: '-createdAt' };
  // Empty is the default (every field, no expansion, the default order), in the service as here.
  const fields = vocabulary ? { type: 'string', pattern: `^(?:${oneOfPattern(vocabulary.fields)}(?:,${oneOfPattern(vocabulary.fields)})*)?$` } : { type: 'string' };
  return [
    { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: LIST_LIMITS.maxLimit, default: LIST_LIMITS.defaultLimit } },
    { name: 'offset', in: 'query', required: false, schema: { type: 'integer', minimum: 0, maximum: LIST_LIMITS.maxOffset, default: 0 }, description: `At most ${LIST_LIMITS.maxOffset.toLocaleString('en')}; page further with the cursor` },
    { name: 'cursor', in: 'query', required: false, schema: { type: 'string' }, description: '`nextCursor` of the previous page (keyset paging)' },
    { name: 'sort', in: 'query', required: false, schema: sort, description: 'Comma list of up to 4 scalar fields, each once, `-` for descending: `-createdAt,title`' },
    { name: 'fields', in: 'query', required: false, schema: fields, description: 'Comma list of fields to return' },
    ...(vocabulary ? expandParameters(vocabulary.relations) : [expandParameter]),
    { name: 'count', in: 'query', required: false, schema: { type: 'string', enum: ['true', 'false', 'estimated'], default: 'true' }, description: '`true`: exact `pagination.total`; `false`: `total` null; `estimated`: on PostgreSQL the planner\'s estimate when above 10,000 (`pagination.totalEstimated` true), else exact' },
    ...readLocaleParameters,
    ...filterParameters,
  ];
}

/** `locale` of a write (CONTRACT.md 17.2): the locale whose values of the localised fields it sets. */
const writeLocaleParameter = {
  name: 'locale', in: 'query', required: false, schema: { type: 'string', maxLength: 35, 'x-locale': 'one' },
  description: 'A locale of the tenant\'s site config: the localised fields named set its values (default: the default locale\'s); another: 400 at /locale',
};

/** `locale` and `fallback` of a read (CONTRACT.md 17.2). */
const readLocaleParameters = [
  {
    ...writeLocaleParameter,
    schema: { ...writeLocaleParameter.schema, 'x-locale': 'any' },
    description: 'Localised fields in this locale of the tenant (falling back to the default locale\'s); `*`: each as `{ "<locale>": value }`; another: 400 at /locale',
  },
  { name: 'fallback', in: 'query', required: false, schema: { type: 'boolean', default: true }, description: 'false: a localised field without a value in the locale is null' },
];

const expandParameter = {
  name: 'expand', in: 'query', required: false, schema: { type: 'string' },
  description: `Comma list of relation fields (\`x-ref\`) to embed in place of their ids, at most ${EXPAND_LIMITS.maxPaths} paths and ${EXPAND_LIMITS.maxDepth} levels: \`category,supplier.country\``,
};

/** `expand` of a concrete path: its relation paths (`a`, `a.b`), none without relations. */
function expandParameters(paths: string[]): Array<Record<string, unknown>> {
  if (!paths.length) return [];
  const step = oneOfPattern(paths);
  return [{ ...expandParameter, schema: { type: 'string', pattern: `^(?:${step}(?:,${step}){0,${EXPAND_LIMITS.maxPaths - 1}})?$` } }];
}


function vocabularyOf(schema: RegisteredSchema, byName: ReadonlyMap<string, RegisteredSchema>): QueryVocabulary {
  const types = fieldTypes(schema.schema);
  const server = SERVER_FIELDS.filter((f) => !types.has(f));
  const relationsOfSchema = (s: RegisteredSchema) => safeRelations(s.schema).filter((r) => SAFE_FIELD.test(r.field));
  const relations: string[] = [];
  for (const r of relationsOfSchema(schema)) {
    relations.push(r.field);
    const target = byName.get(r.target);
    if (EXPAND_LIMITS.maxDepth > 1 && target) for (const deeper of relationsOfSchema(target)) relations.push(`${r.field}.${deeper.field}`);
  }
  return {
    sortable: [...[...types.entries()].filter(([name, type]) => isScalar(type) && SAFE_FIELD.test(name)).map(([name]) => name), ...server],
    fields: [...types.keys(), ...server],
    relations,
  };
}

const genericFilter = {
  name: 'filter', in: 'query', required: false, style: 'deepObject', explode: true,
  schema: { type: 'object', minProperties: 1, propertyNames: { pattern: '^[^\\[\\]]+$' }, additionalProperties: { type: 'string' } },
  description: `filter[field]=v (equals) or filter[field][op]=v with op in ${FILTER_OPERATORS}; \`in\` takes a comma list, \`like\` a % wildcard.`,
};

/** Adds the list query language and identifier patterns to the generic data paths. */
export function describeDataPaths(doc: OpenApiDocument): void {
  for (const path of [DATA_COLLECTION_PATH, DATA_RECORD_PATH]) {
    for (const operation of Object.values(doc.paths[path] ?? {})) {
      for (const param of operation.parameters as Array<Record<string, any>>) {
        if (param.in === 'path' && (param.name === 'ns' || param.name === 'schema')) {
          param.schema = { type: 'string', pattern: IDENTIFIER.source };
          param.description = param.name === 'ns' ? 'The namespace' : 'The schema name';
        }
      }
    }
  }
  const list = doc.paths[DATA_COLLECTION_PATH]?.get;
  if (list) list.parameters.push(...listParameters([genericFilter]));
  doc.paths[DATA_RECORD_PATH]?.get?.parameters.push(expandParameter, ...readLocaleParameters);
  const record = doc.paths[DATA_RECORD_PATH];
  for (const write of [doc.paths[DATA_COLLECTION_PATH]?.post, record?.patch]) {
    write?.parameters.push(writeLocaleParameter);
    // A record (or its merge patch) is a JSON object: without a body the service answers 400, as for any other.
    if (write?.requestBody) write.requestBody = { ...write.requestBody, required: true };
  }
  for (const method of ['patch', 'delete'] as const) {
    record?.[method]?.parameters.push({
      name: 'If-Match', in: 'header', required: false, schema: { type: 'string' },
      description: 'The version the change is based on, as in the ETag: `"3"`; 412 version_mismatch when the record has moved on',
    });
  }
  const etag = { description: 'The record\'s version, for If-Match', schema: { type: 'string' } };
  for (const operation of [doc.paths[DATA_COLLECTION_PATH]?.post, record?.get, record?.patch]) {
    const success = Object.entries((operation?.responses ?? {}) as Record<string, any>).find(([status]) => status.startsWith('2'));
    if (success) success[1].headers = { ...success[1].headers, ETag: etag };
  }
}

/**
 * The tenant's document: the platform document plus, for each schema the tenant sees, concrete paths
 * `/api/v1/data/{namespace}/{name}` and `…/{id}` whose bodies and items are the registered JSON Schema.
 * The operations are specialised from the generic data operations, so errors and security stay the same.
 */
export function addSchemaPaths(doc: OpenApiDocument, schemas: RegisteredSchema[]): OpenApiDocument {
  const collection = doc.paths[DATA_COLLECTION_PATH];
  const record = doc.paths[DATA_RECORD_PATH];
  if (!collection && !record) return doc;
  const byName = new Map(schemas.map((s) => [`${s.namespace}.${s.name}`, s]));
  for (const schema of schemas) {
    const base = `data.${schema.namespace}.${schema.name}`;
    const refs = registerComponents(doc, base, schema);
    const tag = `${schema.namespace}.${schema.name}`;
    doc.tags.push({ name: tag, description: schema.title || schema.description || `Records of ${schema.namespace}.${schema.name}` });
    const concrete = `/api/v1/data/${schema.namespace}/${schema.name}`;
    const words = `${pascal(schema.namespace)}${pascal(schema.name)}`;
    const item = { type: 'object', required: ['item'], properties: { item: { $ref: refs.record } } };

    if (collection) {
      doc.paths[concrete] = {};
      if (collection.get) {
        const op = specialise(collection.get, `list${words}`, tag, `List ${tag} records`, pageSchema({ $ref: refs.listItem }));
        op.parameters = [...op.parameters.filter((p: Record<string, unknown>) => p.in !== 'query'), ...listParameters(filterParameters(schema), vocabularyOf(schema, byName))];
        doc.paths[concrete].get = op;
      }
      if (collection.post) doc.paths[concrete].post = withBody(specialise(collection.post, `create${words}`, tag, `Create a ${tag} record`, item), refs.input);
    }
    if (record) {
      const one = `${concrete}/{id}`;
      doc.paths[one] = {};
      if (record.get) {
        const op = specialise(record.get, `get${words}`, tag, `Read a ${tag} record`, item);
        op.parameters = [...op.parameters.filter((p: Record<string, unknown>) => p.name !== 'expand'), ...expandParameters(vocabularyOf(schema, byName).relations)];
        doc.paths[one].get = op;
      }
      if (record.patch) {
        doc.paths[one].patch = withBody(specialise(record.patch, `update${words}`, tag, `Update a ${tag} record with a JSON merge patch`, item), refs.patch, 'application/merge-patch+json');
      }
      if (record.delete) doc.paths[one].delete = specialise(record.delete, `delete${words}`, tag, `Delete a ${tag} record`, { type: 'null' });
    }
  }
  describeRelations(doc, schemas);
  return doc;
}

/**
 * The values each `?locale=` parameter takes (its schema's `x-locale`, core/http/response-schemas.ts): one of the
 * tenant's locales, or also `*` (every locale) where it says `any`, or nothing (the default's; the empty value too
 * where the parameter has no minLength), as core/data/locales.ts checks them; any other answers 400 at /locale. A
 * tenant's document lists its own locales; the platform document those a tenant has until its site config says
 * otherwise (DEFAULT_LOCALES).
 */
export function narrowLocales(doc: OpenApiDocument, tenant: TenantLocales): OpenApiDocument {
  const narrow = (schema: Record<string, any>) => ({
    ...schema,
    enum: [...(schema.minLength ? [] : ['']), ...tenant.locales, ...(schema['x-locale'] === 'any' ? ['*'] : [])],
  });
  for (const [path, item] of Object.entries(doc.paths)) {
    // New objects, not assignments into the found ones: a path's parameters may be objects shared by every document
    // (another tenant's, and the platform's of a service built later), which must not take this tenant's locales.
    let narrowed: Record<string, unknown> | null = null;
    for (const [method, operation] of Object.entries(item)) {
      const parameters = operation?.parameters as Array<Record<string, any>> | undefined;
      if (!parameters?.some((p) => p.in === 'query' && p.schema?.['x-locale'])) continue;
      narrowed ??= { ...item };
      narrowed[method] = {
        ...operation,
        parameters: parameters.map((p) => (p.in === 'query' && p.schema?.['x-locale'] ? { ...p, schema: narrow(p.schema) } : p)),
      };
    }
    if (narrowed) doc.paths[path] = narrowed as typeof item;
  }
  return doc;
}

/**
 * Relations (CONTRACT.md 12.2) on each record component: `x-relations` (its own `x-ref` properties) and
 * `x-referenced-by` (the relations of other schemas that point at it).
 */
function describeRelations(doc: OpenApiDocument, schemas: RegisteredSchema[]): void {
  for (const schema of schemas) {
    const relations = safeRelations(schema.schema);
    if (!relations.length) continue;
    const own = doc.components.schemas[`data.${schema.namespace}.${schema.name}.record`] as Record<string, unknown> | undefined;
    if (own) own['x-relations'] = relations;
    for (const r of relations) {
      const target = doc.components.schemas[`data.${r.target}.record`] as Record<string, unknown> | undefined;
      if (!target) continue;
      const list = (target['x-referenced-by'] ??= []) as unknown[];
      list.push({ source: `${schema.namespace}.${schema.name}`, field: r.field, many: r.many, onDelete: r.onDelete });
    }
  }
}

/** Puts the registered schema into components: as registered (create), as a merge patch, and as a stored record. */
function registerComponents(doc: OpenApiDocument, base: string, schema: RegisteredSchema) {
  const input = toOpenApiSchema(schema.schema, componentRef(base));
  if (schema.title && input.title === undefined) input.title = schema.title;
  if (schema.description && input.description === undefined) input.description = schema.description;
  const properties = (input.properties ?? {}) as Record<string, JsonSchema>;
  const patch: JsonSchema = {
    type: 'object',
    description: 'JSON merge patch (RFC 7396): the fields to change, null removes one; the result is validated against the schema.',
    properties: Object.fromEntries(Object.keys(properties).map((name) => [name, { $ref: `${componentRef(base)}/properties/${encodeURIComponent(escapePointer(name))}` }])),
  };
  const { required, ...rest } = input as JsonSchema & { required?: string[] };
  const storedRecord: JsonSchema = {
    ...rest,
    required: [...new Set([...(required ?? []), ...SERVER_FIELDS])],
    properties: {
      id: { type: 'string', format: 'uuid', description: 'UUIDv7, set by the server', readOnly: true },
      ...Object.fromEntries(Object.entries(properties).map(([name, prop]) => [name, asRead(prop)])),
      createdAt: { type: 'string', format: 'date-time', readOnly: true },
      updatedAt: { type: 'string', format: 'date-time', readOnly: true },
      version: { type: 'integer', minimum: 1, description: 'Also the ETag; send it as If-Match', readOnly: true },
    },
  };
  doc.components.schemas[base] = input;
  doc.components.schemas[`${base}.patch`] = patch;
  doc.components.schemas[`${base}.record`] = storedRecord;
  // A list item: `fields=` may return any subset of the record's fields, so nothing is required.
  const { required: _all, ...listItem } = storedRecord;
  doc.components.schemas[`${base}.listItem`] = { ...listItem, description: 'A record of a list; with `fields=` only the fields asked for' };
  return { input: componentRef(base), patch: componentRef(`${base}.patch`), record: componentRef(`${base}.record`), listItem: componentRef(`${base}.listItem`) };
}

function specialise(generic: OpenApiOperation, operationId: string, tag: string, summary: string, data: JsonSchema): OpenApiOperation {
  const op = structuredClone(generic);
  op.operationId = operationId;
  op.summary = summary;
  op.tags = [tag];
  op.parameters = (op.parameters as Array<Record<string, unknown>>).filter((p) => !(p.in === 'path' && (p.name === 'ns' || p.name === 'schema')));
  for (const [status, response] of Object.entries(op.responses as Record<string, any>)) {
    if (status.startsWith('2') && response.content?.['application/json']) {
      response.content['application/json'].schema = successSchema('jsend', data);
    }
  }
  return op;
}

function withBody(op: OpenApiOperation, ref: string, mediaType = 'application/json'): OpenApiOperation {
  op.requestBody = { required: true, content: { [mediaType]: { schema: { $ref: ref } } } };
  return op;
}

/** filter[field] for each scalar top-level field of the schema and the server-managed ones. */
function filterParameters(schema: RegisteredSchema): Array<Record<string, unknown>> {
  const types = fieldTypes(schema.schema);
  const scalar = [...types.entries()].filter(([, type]) => isScalar(type));
  const server: Array<[string, string]> = [['id', 'string'], ['createdAt', 'string'], ['updatedAt', 'string'], ['version', 'integer']];
  return [...scalar, ...server].map(([field, type]) => ({
    name: `filter[${field}]`, in: 'query', required: false, schema: { type },
    description: `Equals; or filter[${field}][op]=v with op in ${FILTER_OPERATORS}`,
  }));
}

function pascal(identifier: string): string {
  return identifier.split('_').filter(Boolean).map((w) => w[0].toUpperCase() + w.slice(1)).join('');
}

function escapePointer(name: string): string {
  return name.replace(/~/g, '~0').replace(/\//g, '~1');
}
