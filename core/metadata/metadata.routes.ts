import type { PackRouter } from '../http/route.js';
import { toSchemaItem } from './schema-definition.js';
import type { SchemaRegistry } from './schema-registry.js';
import { assertIdentifier } from './schema-registry.js';

const identifier = { type: 'string' };
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
  },
};

/** The schema registry's endpoints (JSend). */
export function metadataRoutes(router: PackRouter, registry: SchemaRegistry): void {
  router.post('/metadata/schemas', {
    summary: 'Register a JSON Schema; its records are served at once under /data/{namespace}/{name}',
    tags: ['metadata'], auth: 'tenant', role: 'admin', status: 201, body: registerBody,
    errors: ['validation_failed', 'invalid_identifier', 'invalid_schema', 'reserved_namespace', 'schema_exists'],
  }, async (ctx) => {
    const body = ctx.state.body;
    assertIdentifier('namespace', body.namespace);
    assertIdentifier('name', body.name);
    const registered = await registry.registerForTenant(ctx.state.rc, body);
    return { item: toSchemaItem(registered) };
  });

  router.get('/metadata/schemas', {
    summary: 'List the platform schemas and the tenant\'s own',
    tags: ['metadata'], auth: 'tenant',
    query: { type: 'object', additionalProperties: false, properties: { namespace: { type: 'string' } } },
  }, async (ctx) => {
    const namespace = ctx.state.query.namespace as string | undefined;
    if (namespace !== undefined) assertIdentifier('namespace', namespace);
    const items = (await registry.list(ctx.state.rc, namespace)).map(toSchemaItem);
    return { items, pagination: { limit: items.length, offset: 0, total: items.length, hasMore: false, nextCursor: null } };
  });

  router.get('/metadata/schemas/:ns/:name', {
    summary: 'Read one schema', tags: ['metadata'], auth: 'tenant', errors: ['schema_not_found', 'invalid_identifier'],
  }, async (ctx) => {
    const schema = await registry.resolve(ctx.state.rc, ctx.params.ns, ctx.params.name);
    return { item: toSchemaItem(schema) };
  });
}
