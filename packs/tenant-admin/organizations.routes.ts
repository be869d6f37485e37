import type { PackContext, PackRouter } from '../../core/pack-api.js';

const ALL_LIMIT = 1000;

/** The organizations (tenants) the caller belongs to: memberships and the token's tenant; a superadmin sees all. */
export function organizationsRoutes(router: PackRouter, pack: PackContext): void {
  const members = pack.use('tenant-admin.members');
  router.get('/organizations', {
    summary: 'List my organizations',
    description: `The tenants the caller belongs to (local memberships and the token's tenant), active ones only; a superadmin sees every tenant (at most ${ALL_LIMIT}).`,
    tags: ['tenants'], auth: 'user',
    response: { type: 'array', items: { type: 'object', properties: { id: { type: 'string' }, name: { type: 'string' }, tenantId: { type: 'string' } } } },
    errors: ['unauthenticated'],
  }, async (ctx) => {
    const principal = ctx.state.principal!;
    if (principal.isSuperadmin) {
      const { items } = await pack.tenants.list(null, ALL_LIMIT, 0);
      return items.map((t) => ({ id: t.id, name: t.name, tenantId: t.id }));
    }
    // An API token is never a member (CONTRACT.md 16.2): its organization is its tenant.
    const ids = new Set(principal.via === 'api_token' ? [] : await members.tenantsOf(null, principal.userId, principal.email));
    if (principal.tenantId) ids.add(principal.tenantId);
    const tenants = await Promise.all([...ids].map((id) => pack.tenants.get(null, id)));
    return tenants
      .filter((t) => t !== null && t.status === 'active')
      .map((t) => ({ id: t!.id, name: t!.name, tenantId: t!.id }))
      .sort((a, b) => a.name.localeCompare(b.name));
  });
}
