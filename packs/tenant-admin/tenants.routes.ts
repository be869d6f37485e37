import { Conflict, OFFSET_QUERY, type PackContext, type PackRouter, type RequestContext } from '../../core/pack-api.js';

export const tenantSchema = {
  type: 'object',
  properties: {
    id: { type: 'string' }, name: { type: 'string' }, plan: { type: 'string', enum: ['free', 'pro', 'enterprise'] },
    status: { type: 'string', enum: ['active', 'suspended'] },
    createdAt: { type: 'string', format: 'date-time' }, updatedAt: { type: 'string', format: 'date-time' },
  },
};

export const paginationSchema = {
  type: 'object',
  properties: {
    limit: { type: 'integer' }, offset: { type: 'integer' }, total: { type: ['integer', 'null'] },
    hasMore: { type: 'boolean' }, nextCursor: { type: ['string', 'null'] },
  },
};

export const createTenantBody = {
  type: 'object',
  required: ['name'],
  additionalProperties: false,
  properties: {
    id: { type: 'string', pattern: '^[a-z0-9][a-z0-9-]{1,62}$' },
    name: { type: 'string', minLength: 1, maxLength: 200 },
    plan: { type: 'string', enum: ['free', 'pro', 'enterprise'] },
  },
} as const;

const patchTenantBody = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 200 },
    plan: { type: 'string', enum: ['free', 'pro', 'enterprise'] },
    status: { type: 'string', enum: ['active', 'suspended'] },
  },
} as const;

const listQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    limit: { type: 'integer', minimum: 1, maximum: 200, default: 50 },
    offset: OFFSET_QUERY,
  },
};

/** Tenants: created, listed and changed by superadmins, read by their own members. */
export function tenantsRoutes(router: PackRouter, pack: PackContext): void {
  router.post('/admin/tenants', {
    summary: 'Create a tenant', description: 'Without `id`, one is made from the name. Every licensed module starts enabled.',
    tags: ['tenants'], auth: 'superadmin', status: 201, idempotent: true, body: createTenantBody,
    response: tenantSchema, errors: ['validation_failed', 'conflict', 'unauthenticated', 'superadmin_required'],
  }, async (ctx) => {
    const { body } = ctx.state;
    const existing = await pack.tenants.get(null, body.id ?? '');
    if (existing) throw Conflict(`A tenant "${existing.id}" exists already`);
    return pack.audit.within(ctx.state.rc, (tenant) => ({ action: 'tenant.created', target: `tenant/${tenant.id}` }), (rc: RequestContext) => pack.tenants.create(rc, body));
  });

  router.get('/admin/tenants', {
    summary: 'List tenants', description: 'Newest first, paged with limit and offset.', tags: ['tenants'], auth: 'superadmin', query: listQuery,
    response: { type: 'object', properties: { items: { type: 'array', items: tenantSchema }, pagination: paginationSchema } },
    errors: ['validation_failed', 'unauthenticated', 'superadmin_required'],
  }, async (ctx) => {
    const { limit, offset } = ctx.state.query as { limit: number; offset: number };
    const { items, total } = await pack.tenants.list(null, limit, offset);
    return { items, pagination: { limit, offset, total, hasMore: offset + items.length < total, nextCursor: null } };
  });

  router.get('/admin/tenants/:id', {
    summary: 'Read a tenant', tags: ['tenants'], auth: 'tenant', tenantParam: 'id', response: tenantSchema,
    errors: ['unauthenticated', 'forbidden', 'tenant_not_found'],
  }, (ctx) => ctx.state.tenant);

  router.patch('/admin/tenants/:id', {
    summary: 'Change a tenant', description: 'Name, plan and status; a suspended tenant\'s public runtime answers 404 and its members get 403.',
    tags: ['tenants'], auth: 'superadmin', tenantParam: 'id', body: patchTenantBody, response: tenantSchema,
    errors: ['validation_failed', 'unauthenticated', 'superadmin_required', 'tenant_not_found'],
  }, async (ctx) => {
    const changes = ctx.state.body;
    return pack.db.transaction(ctx.state.rc, async (rc) => {
      const tenant = await pack.tenants.update(rc, ctx.params.id, changes);
      await pack.events.publish({ ...rc, tenantId: tenant.id }, { name: 'tenant.updated', payload: { tenantId: tenant.id, changes } });
      return tenant;
    });
  });
}
