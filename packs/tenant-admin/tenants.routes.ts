import type { PackContext } from '../../core/kernel/pack-context.js';
import type { PackRouter } from '../../core/http/route.js';
import { Conflict } from '../../core/http/errors.js';

export const tenantSchema = {
  type: 'object',
  properties: {
    id: { type: 'string' }, name: { type: 'string' }, plan: { type: 'string' }, status: { type: 'string' },
    createdAt: { type: 'string', format: 'date-time' }, updatedAt: { type: 'string', format: 'date-time' },
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
};

/** Tenants: created by superadmins, read by their own members. */
export function tenantsRoutes(router: PackRouter, pack: PackContext): void {
  router.post('/admin/tenants', {
    summary: 'Create a tenant', tags: ['tenants'], auth: 'superadmin', status: 201, body: createTenantBody,
    response: tenantSchema, errors: ['validation_failed', 'conflict', 'superadmin_required'],
  }, async (ctx) => {
    const body = ctx.state.body as { id?: string; name: string; plan?: 'free' | 'pro' | 'enterprise' };
    const existing = await pack.tenants.get(null, body.id ?? '');
    if (existing) throw Conflict(`A tenant "${existing.id}" exists already`);
    return pack.tenants.create(ctx.state.rc, body);
  });

  router.get('/admin/tenants/:id', {
    summary: 'Read a tenant', tags: ['tenants'], auth: 'tenant', tenantParam: 'id', response: tenantSchema,
    errors: ['forbidden', 'tenant_not_found'],
  }, (ctx) => ctx.state.tenant);
}
