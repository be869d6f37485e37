import type { PackContext, PackRouter } from '../../core/pack-api.js';

/**
 * Licensed modules: read by members, switched by the tenant's admin or a superadmin; takes effect at once.
 * The app codes are those the loaded packs declare as `licensed`.
 */
export function modulesRoutes(router: PackRouter, pack: PackContext): void {
  const appCodes = pack.tenants.appCodes;
  const appCode = { type: 'string', enum: [...appCodes] };
  const moduleSchema = {
    type: 'object',
    properties: { appCode, isEnabled: { type: 'boolean' }, updatedAt: { type: 'string', format: 'date-time' } },
  };

  router.get('/tenants/:id/licensed-modules', {
    summary: 'List the licensed modules', tags: ['tenants'], auth: 'tenant', tenantParam: 'id',
    response: { type: 'array', items: moduleSchema }, errors: ['unauthenticated', 'forbidden', 'tenant_not_found'],
  }, async (ctx) => {
    const stored = await pack.tenants.listModules(null, ctx.params.id);
    return appCodes.map((appCode) => stored.find((m) => m.appCode === appCode) ?? { appCode, isEnabled: true, updatedAt: ctx.state.tenant!.createdAt });
  });

  router.patch('/tenants/:id/licensed-modules', {
    summary: 'Enable or disable a licensed module',
    description: 'A disabled module makes its pack\'s endpoints and its /data namespace answer 403 module_disabled at once. Emits tenant.modules.updated.',
    tags: ['tenants'], auth: 'tenant', tenantParam: 'id', role: 'admin',
    body: {
      type: 'object', required: ['appCode', 'isEnabled'], additionalProperties: false,
      properties: { appCode, isEnabled: { type: 'boolean' } },
    },
    response: moduleSchema, errors: ['validation_failed', 'unauthenticated', 'forbidden', 'tenant_not_found'],
  }, async (ctx) => {
    const { appCode, isEnabled } = ctx.state.body;
    return pack.db.transaction(ctx.state.rc, async (rc) => {
      const module = await pack.tenants.setModule(rc, ctx.params.id, appCode, isEnabled);
      await pack.events.publish(rc, { name: 'tenant.modules.updated', payload: { tenantId: ctx.params.id, appCode, isEnabled } });
      await pack.audit.add(rc, { action: 'module.updated', target: `module/${appCode}` });
      return module;
    });
  });
}
