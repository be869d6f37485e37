import { type PackContext, type PackRouter, TenantNotFound } from '../../core/pack-api.js';
import { DomainTaken, FeatureRequired, HostNotFound } from './tenant-admin.errors.js';
import { MAX_DOMAINS } from './domains.service.js';
import { DOMAIN_NAME } from './hostname.js';

const HOST_QUERY_PATTERN = '^[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9.])?(?::[0-9]{1,5})?$';
const domainsResponse = { type: 'object', properties: { domains: { type: 'array', items: { type: 'string' } } } };

/** A tenant's domains, and host resolution for the public site runtime. */
export function domainsRoutes(router: PackRouter, pack: PackContext): void {
  const domains = pack.use('tenant-admin.domains');
  const documents = pack.use('tenant-admin.documents');

  router.get('/tenants/:id/domains', {
    summary: 'List the domains', tags: ['tenants'], auth: 'tenant', tenantParam: 'id', response: domainsResponse,
    errors: ['unauthenticated', 'forbidden', 'tenant_not_found'],
  }, async (ctx) => ({ domains: await domains.list(null, ctx.params.id) }));

  router.put('/tenants/:id/domains', {
    summary: 'Replace the domains',
    description: `Hostnames are validated, lower-cased and deduplicated (at most ${MAX_DOMAINS}). A domain another tenant holds answers 409 domain_taken; `
      + 'a domain outside PLATFORM_BASE_DOMAIN needs the custom_domain feature (else 402 feature_required). Below PLATFORM_BASE_DOMAIN only '
      + '`{tenantId}.{PLATFORM_BASE_DOMAIN}` and its subdomains are allowed.',
    tags: ['tenants'], auth: 'tenant', tenantParam: 'id', role: 'admin',
    body: {
      type: 'object', required: ['domains'], additionalProperties: false,
      properties: { domains: { type: 'array', maxItems: MAX_DOMAINS * 2, items: DOMAIN_NAME } },
    },
    response: domainsResponse,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'tenant_not_found', FeatureRequired, DomainTaken],
  }, async (ctx) => ({
    domains: await pack.audit.within(ctx.state.rc, { action: 'domains.replaced', target: 'domains' }, (rc) => domains.replace(rc, ctx.state.tenant!, ctx.state.body.domains)),
  }));

  router.get('/public/resolve-host', {
    summary: 'Resolve a host to its tenant',
    description: 'Port and case are ignored; `{tenantId}.{PLATFORM_BASE_DOMAIN}` resolves too. Returns the public site config and branding, never secrets.',
    tags: ['public'], auth: 'public',
    // A host name, any case, maybe with a port or a trailing dot: what normalizeHost reads (anything else is no host).
    query: { type: 'object', required: ['host'], properties: { host: { type: 'string', minLength: 1, maxLength: 300, pattern: HOST_QUERY_PATTERN } } },
    response: {
      type: 'object',
      properties: { tenantId: { type: 'string' }, host: { type: 'string' }, siteConfig: { type: 'object' }, branding: { type: 'object' } },
    },
    errors: ['validation_failed', HostNotFound, 'tenant_not_found'],
  }, async (ctx) => {
    const { host, tenantId } = await domains.resolve(null, String(ctx.state.query.host));
    if (!tenantId) throw HostNotFound(host);
    const tenant = await pack.tenants.get(null, tenantId);
    if (!tenant) throw HostNotFound(host);
    if (tenant.status !== 'active') throw TenantNotFound(tenantId);
    const [siteConfig, branding] = await Promise.all([documents.get(null, tenant, 'site_config'), documents.get(null, tenant, 'branding')]);
    return { tenantId, host, siteConfig, branding };
  });
}
