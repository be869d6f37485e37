import type { PackRouter } from '../http/route.js';
import { IDENTIFIER, schemaItemResponse, toSchemaItem, type RegisteredSchema } from '../metadata/schema-definition.js';
import { pageResponse } from '../http/response-schemas.js';
import type { SchemaRegistry } from '../metadata/schema-registry.js';
import type { SchemaEvolution } from './schema-evolution.js';
import { relationsOf, type Relations } from './relations.js';
import { assertIdentifier } from '../metadata/schema-registry.js';

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
    schema: { type: 'object' },
    indexes: { type: 'array', items: { type: 'array', items: { type: 'string' } } },
    unique: { type: 'array', items: { type: 'array', items: { type: 'string' } } },
    workflow: {
      type: 'object', additionalProperties: false, properties: { drafts: { type: 'boolean' }, locales: { type: 'boolean' } },
      description: 'The content workflow (CONTRACT.md 17): `locales` makes the properties marked `"x-localized": true` hold one value per locale',
    },
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
export function metadataRoutes(router: PackRouter, registry: SchemaRegistry, evolution: SchemaEvolution, relations: Relations): void {
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
    tags: ['metadata'], auth: 'tenant', response: pageResponse(schemaItemResponse),
    query: { type: 'object', additionalProperties: false, properties: { namespace: identifier } },
  }, async (ctx) => {
    const namespace = ctx.state.query.namespace as string | undefined;
    if (namespace !== undefined) assertIdentifier('namespace', namespace);
    const items = (await registry.list(ctx.state.rc, namespace)).map(itemOf);
    return { items, pagination: { limit: items.length, offset: 0, total: items.length, hasMore: false, nextCursor: null } };
  });

  router.get('/metadata/schemas/:ns/:name', {
    summary: 'Read one schema, with its relations and the relations that point at it', tags: ['metadata'], auth: 'tenant', errors: ['schema_not_found', 'invalid_identifier'],
    response: { type: 'object', properties: { item: { ...schemaItemResponse, properties: { ...schemaItemResponse.properties, relations: { type: 'array', items: { type: 'object' } }, referencedBy: { type: 'array', items: { type: 'object' } } } } } },
  }, async (ctx) => {
    const schema = await registry.resolve(ctx.state.rc, ctx.params.ns, ctx.params.name);
    ctx.set('ETag', `"${schema.version}"`);
    const relationList = relationsOf(schema.schema).map(({ field, target, many, onDelete }) => ({ field, target, many, onDelete }));
    return { item: { ...itemOf(schema), relations: relationList, referencedBy: await relations.referencedBy(ctx.state.rc, schema) } };
  });

  router.put('/metadata/schemas/:ns/:name', {
    summary: 'Register the next version of a schema (If-Match required); incompatible changes need "migrate"',
    tags: ['metadata'], auth: 'tenant', role: 'admin', body: changeBody, response: itemResponse,
    headers: [{
      name: 'If-Match', required: false, schema: { type: 'string' },
      description: 'The schema\'s current version: `"3"`; 428 precondition_required without it, 412 version_mismatch when stale',
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
      name: 'If-Match', required: false, schema: { type: 'string' },
      description: 'The schema\'s current version: `"3"`; 428 precondition_required without it, 412 version_mismatch when stale',
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
