import { definePack } from '../../core/kernel/define-pack.js';
import { crmEventsMigration, ticketCountersMigration } from './crm.migrations.js';
import { dealClosedAt } from './deal-closed-at.hook.js';
import { dealsRoutes } from './deals.routes.js';
import { CrmEventsService } from './events.service.js';
import { eventsRoutes } from './events.routes.js';

/**
 * CRM: deals through the sales pipeline, first-party events. A closed namespace: tenants cannot add
 * schemas to `crm`. Deals are records (`crm.deal`), so /crm/deals and /data/crm/deal run the same
 * validation, hooks and events (`crm.deal.created`, `crm.deal.updated` with `record` and `previous`).
 * Events live in a table of their own (crm_events): there are many, and they are never edited.
 */
export default definePack({
  name: 'crm',
  description: 'Customer relationship management: deals, first-party events',
  licensed: 'crm',
  namespaces: [{ name: 'crm', open: false, schemas: ['deal'] }],
  migrations: [crmEventsMigration, ticketCountersMigration],
  hooks: {
    'crm.deal.create': dealClosedAt,
    'crm.deal.update': dealClosedAt,
  },
  routes(router, pack) {
    dealsRoutes(router, pack);
    eventsRoutes(router, pack, new CrmEventsService(pack.db));
  },
});
