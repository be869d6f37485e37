import type { PackRouter } from '../http/route.js';
import { RESERVED_ROLE_NAMES, type RolesService } from './roles.service.js';

const nullableTime = { type: ['string', 'null'], format: 'date-time' };
const fieldList = { type: 'array', maxItems: 200, items: { type: 'string', minLength: 1, maxLength: 64 } };
const policySchema = {
  type: 'object', required: ['resource', 'actions'], additionalProperties: false,
  properties: {
    resource: { type: 'string', pattern: '^(\\*|[a-z][a-z0-9_]{0,62}\\.(\\*|[a-z][a-z0-9_]{0,62}))$', description: '`<ns>.<schema>`, `<ns>.*` or `*`' },
    actions: { type: 'array', minItems: 1, uniqueItems: true, items: { type: 'string', enum: ['read', 'create', 'update', 'delete'] } },
    filter: {
      type: 'object', maxProperties: 20,
      description: 'The list API\'s filter as an object: `{ "<field>": <value> | { "<op>": <value> } }`, all keys together; '
        + '`"$user.sub"` or `"$user.email"` stand for the caller\'s. Only with a single-schema resource.',
    },
    fields: {
      type: 'object', additionalProperties: false,
      properties: { read: fieldList, write: fieldList },
      description: 'The fields the policy lets the caller read and write (all when left out). Only with a single-schema resource.',
    },
  },
  // filter and fields only with one schema: a resource `*` or `<ns>.*` with either is refused (PolicyCheck, 400 at its path).
  if: { required: ['resource'], properties: { resource: { pattern: '\\*$' } } },
  then: { properties: { filter: false, fields: false } },
} as const;
/** A custom role's name in a path: never a built-in role's (400 validation_failed at /name, as the service answers). */
const customRoleName = { type: 'string', minLength: 1, not: { enum: RESERVED_ROLE_NAMES }, 'x-error': 'reserved' };
const roleView = {
  type: 'object',
  required: ['name', 'description', 'builtIn', 'policies', 'createdAt', 'updatedAt', 'version'],
  properties: {
    name: { type: 'string' },
    description: { type: 'string' },
    builtIn: { type: 'boolean', description: 'admin, editor and viewer: built in, without policies' },
    policies: { type: 'array', items: policySchema },
    createdAt: nullableTime,
    updatedAt: nullableTime,
    version: { type: ['integer', 'null'] },
  },
};
const roleBody = {
  description: { type: 'string', maxLength: 500 },
  policies: { type: 'array', maxItems: 100, items: policySchema },
} as const;

const tags = ['roles'];

/** Custom roles of a tenant (CONTRACT.md 16.1): an admin's, never an API token's. */
export function rolesRoutes(router: PackRouter, roles: RolesService): void {
  router.get('/tenants/:id/roles', {
    summary: 'List the roles',
    description: 'The built-in admin, editor and viewer (builtIn: true, no policies), then the tenant\'s custom roles by name.',
    tags, auth: 'tenant', tenantParam: 'id', role: 'admin',
    response: { type: 'array', items: roleView },
  }, (ctx) => roles.list(ctx.state.rc, ctx.params.id));

  router.get('/tenants/:id/roles/:name', {
    summary: 'Read a role', tags, auth: 'tenant', tenantParam: 'id', role: 'admin', ownParamChecks: ['name'],
    response: roleView, errors: ['not_found'],
  }, async (ctx) => {
    const role = await roles.get(ctx.state.rc, ctx.params.id, ctx.params.name);
    if (role.version !== null) ctx.set('ETag', `"${role.version}"`);
    return role;
  });

  router.post('/tenants/:id/roles', {
    summary: 'Create a custom role',
    description: 'A name matching ^[a-z][a-z0-9_-]{1,39}$ that is none of admin, editor, viewer, superadmin; policies checked against the '
      + 'tenant\'s schemas (400 validation_failed naming the path). An API token may not change roles (403).',
    tags, auth: 'tenant', tenantParam: 'id', role: 'admin', noApiTokens: true, status: 201,
    body: {
      type: 'object', required: ['name', 'policies'], additionalProperties: false,
      properties: { name: { type: 'string', pattern: '^[a-z][a-z0-9_-]{1,39}$', not: { enum: RESERVED_ROLE_NAMES }, 'x-error': 'reserved' }, ...roleBody },
    },
    response: roleView, errors: ['validation_failed', 'conflict'],
  }, async (ctx) => {
    const role = await roles.create(ctx.state.rc, ctx.params.id, ctx.state.body);
    ctx.set('ETag', `"${role.version}"`);
    return role;
  });

  router.put('/tenants/:id/roles/:name', {
    summary: 'Replace a custom role (If-Match honoured)',
    description: 'Replaces the description and policies. Requests that start 1 s after the change see it in every process, '
      + 'open live-change streams included.',
    tags, auth: 'tenant', tenantParam: 'id', role: 'admin', noApiTokens: true, params: { name: customRoleName },
    headers: [{ name: 'If-Match', required: false, schema: { type: 'string' }, description: 'the role\'s version (its ETag)' }],
    body: { type: 'object', required: ['policies'], additionalProperties: false, properties: roleBody },
    response: roleView, errors: ['validation_failed', 'not_found', 'version_mismatch', 'conflict'],
  }, async (ctx) => {
    const role = await roles.replace(ctx.state.rc, ctx.params.id, ctx.params.name, ctx.state.body, ctx.get('If-Match') || null);
    ctx.set('ETag', `"${role.version}"`);
    return role;
  });

  router.delete('/tenants/:id/roles/:name', {
    summary: 'Delete a custom role',
    description: 'A role still held by an active membership, a pending invitation or an unrevoked API token: 409 conflict.',
    tags, auth: 'tenant', tenantParam: 'id', role: 'admin', noApiTokens: true, params: { name: customRoleName },
    errors: ['validation_failed', 'not_found', 'conflict'],
  }, async (ctx) => {
    await roles.delete(ctx.state.rc, ctx.params.id, ctx.params.name);
    return null;
  });
}
