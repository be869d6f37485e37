import type { AppContext } from '../http/app-state.js';
import type { Authenticator } from '../http/auth.js';
import { Forbidden } from '../base/errors.js';
import type { PackRouter } from '../http/route.js';
import type { TenantsService } from '../tenants/tenants.service.js';
import type { OpenApiService } from './openapi.service.js';

/**
 * GET /openapi.json: the platform document; with a bearer token that has a tenant context (its tenant
 * claim, or a superadmin's X-Tenant-Id), the tenant's document with its registered schemas.
 */
export function openapiRoutes(router: PackRouter, openapi: OpenApiService, authenticator: Authenticator, tenants: TenantsService): void {
  router.get('/openapi.json', {
    summary: 'The OpenAPI 3.1 document of this service; with a bearer token, including the tenant\'s registered schemas',
    description: 'Without credentials: every route of the platform. With `Authorization: Bearer` and a tenant context '
      + '(the token\'s tenant claim, or a superadmin\'s `X-Tenant-Id`): also `/api/v1/data/{namespace}/{schema}` paths '
      + 'for each schema the tenant sees, with the registered JSON Schema as request and item schema.',
    tags: ['operations'], auth: 'public', produces: 'application/json',
    response: { type: 'object', description: 'An OpenAPI 3.1 document', required: ['openapi', 'info', 'paths'] },
    errors: ['invalid_token', 'forbidden', 'tenant_not_found'],
  }, async (ctx) => {
    const tenantId = await tenantOfCaller(ctx, authenticator, tenants);
    ctx.set('Vary', 'Authorization, X-Tenant-Id');
    ctx.type = 'application/json';
    if (!tenantId) {
      ctx.set('Cache-Control', 'public, max-age=60');
      ctx.body = openapi.platformJson();
      return;
    }
    ctx.set('Cache-Control', 'private, no-store');
    ctx.body = JSON.stringify(await openapi.tenantDocument({ ...ctx.state.rc, tenantId }));
  });
}

/** The caller's tenant, resolved as CONTRACT.md section 2 fixes it; null without credentials or tenant. */
async function tenantOfCaller(ctx: AppContext, authenticator: Authenticator, tenants: TenantsService): Promise<string | null> {
  const principal = await authenticator.authenticate(ctx.get('Authorization') || undefined);
  if (!principal) return null;
  ctx.state.principal = principal;
  const header = ctx.get('X-Tenant-Id') || null;
  if (header && !principal.isSuperadmin && header !== principal.tenantId) throw Forbidden('X-Tenant-Id names another tenant than your token');
  const tenantId = principal.isSuperadmin ? (header ?? principal.tenantId) : principal.tenantId;
  if (!tenantId) return null;
  const tenant = await tenants.require(null, tenantId);
  if (tenant.status !== 'active' && !principal.isSuperadmin) throw Forbidden('The tenant is suspended');
  ctx.state.tenant = tenant;
  ctx.state.rc = { ...ctx.state.rc, tenantId, principal };
  return tenantId;
}
