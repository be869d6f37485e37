import type { PackContext, PackRouter } from '../../core/pack-api.js';
import { FEATURE_FLAGS, type FeatureMap } from './features.service.js';

const featureMap = {
  type: 'object',
  additionalProperties: false,
  properties: Object.fromEntries(FEATURE_FLAGS.map((f) => [f, { type: 'boolean' }])),
};

/** Feature flags: the plan's defaults with superadmin overrides. */
export function featuresRoutes(router: PackRouter, pack: PackContext): void {
  const features = pack.use('tenant-admin.features');
  router.get('/tenants/:id/features', {
    summary: 'Read the feature flags', description: `Flags: ${FEATURE_FLAGS.join(', ')}. Defaults come from the plan.`,
    tags: ['tenants'], auth: 'tenant', tenantParam: 'id', response: featureMap,
    errors: ['unauthenticated', 'forbidden', 'tenant_not_found'],
  }, (ctx) => features.get(null, ctx.state.tenant!));

  router.patch('/tenants/:id/features', {
    summary: 'Change feature flags', description: 'A partial map of booleans; an unknown flag answers 400.',
    tags: ['tenants'], auth: 'superadmin', tenantParam: 'id', body: { ...featureMap, minProperties: 1 }, response: featureMap,
    errors: ['validation_failed', 'unauthenticated', 'superadmin_required', 'tenant_not_found'],
  }, (ctx) => pack.audit.within(ctx.state.rc, { action: 'feature.updated', target: `features/${Object.keys(ctx.state.body).sort().join(',')}` },
    (rc) => features.patch(rc, ctx.state.tenant!, ctx.state.body as Partial<FeatureMap>)));
}
