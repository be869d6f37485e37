import { mergePatchSchema, type PackContext, type PackRouter, type RequestContext } from '../../core/pack-api.js';
import { AlreadyMember, DomainTaken, FeatureRequired } from './tenant-admin.errors.js';
import { MAX_DOMAINS } from './domains.service.js';
import { DOMAIN_NAME } from './hostname.js';
import type { ProvisionInput } from './provisioning.service.js';
import { createTenantBody, tenantSchema } from './tenants.routes.js';
import { documentSchema } from './site-profile.routes.js';

/** A navigation link's target, as the site config takes it (its schema's; no javascript: URL). */
const href = (documentSchema('site-config.schema.json') as { $defs: { navigation: { items: { properties: { href: object } } } } }).$defs.navigation.items.properties.href;
const navigationSchema = {
  type: 'array',
  maxItems: 50,
  items: {
    type: 'object',
    required: ['label', 'href'],
    additionalProperties: false,
    properties: {
      label: { type: 'string', minLength: 1, maxLength: 100 },
      href,
      children: { type: 'array', maxItems: 50, items: { type: 'object', required: ['label', 'href'], additionalProperties: false, properties: {
        label: { type: 'string', minLength: 1, maxLength: 100 }, href,
      } } },
    },
  },
};

/** A merge patch of the new tenant's branding, as PATCH /tenants/{id}/branding takes; its $defs go to the body's root. */
const { $defs: brandingDefs, ...brandingPatch } = mergePatchSchema(documentSchema('branding.schema.json'));

const provisionBody = {
  type: 'object',
  required: ['tenant'],
  additionalProperties: false,
  $defs: brandingDefs,
  properties: {
    tenant: createTenantBody,
    domains: { type: 'array', maxItems: MAX_DOMAINS, items: DOMAIN_NAME },
    navigation: navigationSchema,
    branding: brandingPatch,
    seed: { type: 'object', additionalProperties: false, properties: { healthcare: { type: 'boolean' } } },
    invitations: {
      type: 'array', maxItems: 10,
      items: {
        type: 'object', required: ['email', 'role'], additionalProperties: false,
        properties: { email: { type: 'string', format: 'email', maxLength: 254 }, role: { type: 'string', enum: ['admin', 'editor', 'viewer'] } },
      },
    },
  },
};

/** The provisioning wizard. */
export function provisioningRoutes(router: PackRouter, pack: PackContext): void {
  const provisioning = pack.use('tenant-admin.provisioning');
  router.post('/admin/tenants/provision', {
    summary: 'Provision a tenant',
    description: 'Tenant, domains, navigation, branding, the optional Healthcare seed and optional invitations (beyond the contract: '
      + '`invitations: [{ email, role }]`, mailed only when provisioning commits) in one transaction: when any step fails nothing remains. '
      + 'An `Idempotency-Key` header makes retries safe: the same key and body replay the first answer; another body answers 422.',
    tags: ['tenants'], auth: 'superadmin', status: 201, idempotent: true, body: provisionBody,
    response: {
      type: 'object',
      properties: {
        tenant: tenantSchema, domains: { type: 'array', items: { type: 'string' } }, navigation: navigationSchema,
        branding: { type: 'object' }, seeded: { type: 'object', additionalProperties: { type: 'integer' } },
        invitations: { type: 'array', items: { type: 'object' } },
      },
    },
    errors: ['validation_failed', 'unauthenticated', 'superadmin_required', 'conflict', DomainTaken, FeatureRequired, 'schema_not_found', AlreadyMember],
  }, async (ctx) => pack.audit.within(ctx.state.rc, (made) => ({ action: 'tenant.created', target: `tenant/${made.tenant.id}` }),
    (rc: RequestContext) => provisioning.provision(rc, ctx.state.body as ProvisionInput)));
}
