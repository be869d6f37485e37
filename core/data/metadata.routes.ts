import type { PackRouter } from '../http/route.js';
import { IDENTIFIER, schemaItemResponse, toSchemaItem, type RegisteredSchema } from '../metadata/schema-definition.js';
import { pageResponse } from '../http/response-schemas.js';
import type { SchemaRegistry } from '../metadata/schema-registry.js';
import type { SchemaEvolution } from './schema-evolution.js';
import { relationsOf, type Relations } from './relations.js';
import { assertIdentifier } from '../metadata/schema-registry.js';
import { workflowOptionSchema } from '../metadata/workflow-option.js';
import { SchemaNotFound } from '../base/errors.js';
import type { RecordPolicies } from './record-policies.js';

/** A required If-Match: more than spaces and tabs, which HTTP strips from a header's value (an empty one is none: 428). */
const IF_MATCH_HEADER = { type: 'string', minLength: 1, pattern: '[^ \\t]' };

/** A namespace or name: a value that fails the pattern answers 400 invalid_identifier (route.ts). */
const identifier = { type: 'string', pattern: IDENTIFIER.source, 'x-error': 'invalid_identifier' };
const registerBody = {
  type: 'object',
  required: ['namespace', 'name', 'schema'],
  additionalProperties: false,
  properties: {
    namespace: identifier,
    name: identifier,
    title: { type: 'string', maxLength: 200 },
    description: { type: 'string', maxLength: 2000 },
    // The registry takes an object schema only (invalid_schema otherwise); the document says so.
    schema: { type: 'object', required: ['type'], 'x-error': 'invalid_schema', properties: { type: { const: 'object', 'x-error': 'invalid_schema' } } },
    indexes: { type: 'array', items: { type: 'array', items: { type: 'string' } } },
    unique: { type: 'array', items: { type: 'array', items: { type: 'string' } } },
    workflow: workflowOptionSchema,
  },
};

const changeBody = {
  ...registerBody,
  required: ['schema'],
  properties: {
    ...registerBody.properties,
    migrate: {
      type: 'object',
      additionalProperties: false,
      properties: { set: { type: 'object' }, unset: { type: 'array', items: { type: 'string' }, maxItems: 100 } },
    },
  },
};

/** The schema registry's endpoints (JSend). */
export function metadataRoutes(router: PackRouter, registry: SchemaRegistry, evolution: SchemaEvolution, relations: Relations, policies: RecordPolicies): void {
  const itemOf = (s: RegisteredSchema) => toSchemaItem(s, registry.sealedBy(s.namespace, s.name) !== null);
  const itemResponse = { type: 'object', properties: { item: schemaItemResponse } };
  router.post('/metadata/schemas', {
    summary: 'Register a JSON Schema; its records are served at once under /data/{namespace}/{name}',
    tags: ['metadata'], auth: 'tenant', role: 'admin', status: 201, body: registerBody, response: itemResponse,
    errors: ['validation_failed', 'invalid_identifier', 'invalid_schema', 'reserved_namespace', 'schema_exists'],
  }, async (ctx) => {
    const body = ctx.state.body;
    assertIdentifier('namespace', body.namespace);
    assertIdentifier('name', body.name);
    const registered = await registry.registerForTenant(ctx.state.rc, body);
    return { item: itemOf(registered) };
  });

  router.get('/metadata/schemas', {
    summary: 'List the platform schemas and the tenant\'s own',
    description: 'A caller holding custom roles sees only the schemas its policies let it read, with only the properties it can read.',
    tags: ['metadata'], auth: 'tenant', policies: true, response: pageResponse(schemaItemResponse),
    query: { type: 'object', additionalProperties: false, properties: { namespace: identifier } },
  }, async (ctx) => {
    const namespace = ctx.state.query.namespace as string | undefined;
    if (namespace !== undefined) assertIdentifier('namespace', namespace);
    const all = (await registry.list(ctx.state.rc, namespace)).map(itemOf);
    const items = (await Promise.all(all.map((item) => policies.visibleSchema(ctx.state.rc, item)))).filter((item) => item !== null);
    return { items, pagination: { limit: items.length, offset: 0, total: items.length, hasMore: false, nextCursor: null } };
  });

  router.get('/metadata/schemas/:ns/:name', {
    summary: 'Read one schema, with its relations and the relations that point at it', tags: ['metadata'], auth: 'tenant', policies: true,
    errors: ['schema_not_found', 'invalid_identifier'],
    response: { type: 'object', properties: { item: { ...schemaItemResponse, properties: { ...schemaItemResponse.properties, relations: { type: 'array', items: { type: 'object' } }, referencedBy: { type: 'array', items: { type: 'object' } } } } } },
  }, async (ctx) => {
    const rc = ctx.state.rc;
    const schema = await registry.resolve(rc, ctx.params.ns, ctx.params.name);
    const item = await policies.visibleSchema(rc, itemOf(schema));
    if (!item) throw SchemaNotFound({ ns: ctx.params.ns, name: ctx.params.name });
    ctx.set('ETag', `"${schema.version}"`);
    const shown = new Set(Object.keys((item.schema.properties ?? {}) as object));
    const relationList = relationsOf(schema.schema).filter((r) => shown.has(r.field)).map(({ field, target, many, onDelete }) => ({ field, target, many, onDelete }));
    // The relations that point at it, from schemas and fields the caller can read.
    const referencedBy = [];
    for (const ref of await relations.referencedBy(rc, schema)) {
      const [ns, name] = ref.source.split('.');
      const source = await policies.visibleSchema(rc, itemOf(await registry.resolve(rc, ns, name)));
      if (source && Object.hasOwn((source.schema.properties ?? {}) as object, ref.field)) referencedBy.push(ref);
    }
    return { item: { ...item, relations: relationList, referencedBy } };
  });

  router.put('/metadata/schemas/:ns/:name', {
    summary: 'Register the next version of a schema (If-Match required); incompatible changes need "migrate"',
    tags: ['metadata'], auth: 'tenant', role: 'admin', body: changeBody, response: itemResponse,
    headers: [{
      name: 'If-Match', required: true, schema: IF_MATCH_HEADER,
      description: 'The schema\'s current version: `"3"` (or `*`, any); 428 precondition_required without it, 412 version_mismatch when stale',
    }],
    errors: ['validation_failed', 'invalid_identifier', 'invalid_schema', 'schema_not_found', 'superadmin_required',
      'precondition_required', 'version_mismatch', 'schema_incompatible', 'conflict'],
  }, async (ctx) => {
    await evolution.change(ctx.state.rc, ctx.params.ns, ctx.params.name, ctx.get('If-Match') || undefined, ctx.state.body);
    const current = await registry.resolveStored(ctx.state.rc, ctx.params.ns, ctx.params.name);
    ctx.set('ETag', `"${current.version}"`);
    return { item: itemOf(current) };
  });

  router.delete('/metadata/schemas/:ns/:name', {
    summary: 'Delete a schema and every record of it (If-Match required); one metadata.schema.deleted event',
    tags: ['metadata'], auth: 'tenant', role: 'admin',
    headers: [{
      name: 'If-Match', required: true, schema: IF_MATCH_HEADER,
      description: 'The schema\'s current version: `"3"` (or `*`, any); 428 precondition_required without it, 412 version_mismatch when stale',
    }],
    errors: ['invalid_identifier', 'schema_not_found', 'superadmin_required', 'precondition_required', 'version_mismatch', 'conflict'],
  }, async (ctx) => {
    await evolution.remove(ctx.state.rc, ctx.params.ns, ctx.params.name, ctx.get('If-Match') || undefined);
    return null;
  });

  router.get('/metadata/schemas/:ns/:name/versions', {
    summary: 'Every version of a schema, oldest first', tags: ['metadata'], auth: 'tenant',
    errors: ['schema_not_found', 'invalid_identifier'],
  }, async (ctx) => {
    const items = await evolution.versions(ctx.state.rc, ctx.params.ns, ctx.params.name);
    return { items, pagination: { limit: items.length, offset: 0, total: items.length, hasMore: false, nextCursor: null } };
  });
}
