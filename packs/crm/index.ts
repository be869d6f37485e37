import { definePack } from '../../core/pack-api.js';
import { dealClosedAt } from './deal-closed-at.hook.js';
import { dealsRoutes } from './deals.routes.js';

/**
 * CRM: deals through the sales pipeline. A closed namespace: tenants cannot add schemas to `crm`.
 * Deals are records (`crm.deal`), so /crm/deals and /data/crm/deal run the same validation, hooks and
 * events (`crm.deal.created`, `crm.deal.updated` with `record` and `previous`).
 */
export default definePack({
  name: 'crm',
  description: 'Customer relationship management: deals',
  licensed: 'crm',
  namespaces: [{ name: 'crm', open: false, schemas: ['deal'] }],
  hooks: {
    'crm.deal.create': dealClosedAt,
    'crm.deal.update': dealClosedAt,
  },
  routes(router, pack) {
    dealsRoutes(router, pack);
  },
});
