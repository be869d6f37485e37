import { definePack } from '../../core/kernel/define-pack.js';
import { crmEventsMigration, ticketCountersMigration } from './crm.migrations.js';
import { dealClosedAt } from './deal-closed-at.hook.js';
import { dealsRoutes } from './deals.routes.js';
import { CrmEventsService } from './events.service.js';
import { eventsRoutes } from './events.routes.js';
import { SupportTicketsService } from './support-tickets.service.js';
import { supportTicketsRoutes } from './support-tickets.routes.js';

/**
 * CRM: deals through the sales pipeline, first-party events, support tickets (PQRS). A closed namespace:
 * tenants cannot add schemas to `crm`. Deals are records (`crm.deal`), so /crm/deals and /data/crm/deal
 * run the same validation, hooks and events (`crm.deal.created`, `crm.deal.updated` with `record` and
 * `previous`). Tickets are records too (`crm.ticket`), sealed: numbered and moved along their status
 * machine only by /crm/support-tickets, read anywhere. Events live in a table of their own (crm_events):
 * there are many, and they are never edited.
 */
export default definePack({
  name: 'crm',
  description: 'Customer relationship management: deals, first-party events, support tickets',
  licensed: 'crm',
  namespaces: [{ name: 'crm', open: false, schemas: ['deal', 'ticket'], sealed: ['ticket'] }],
  migrations: [crmEventsMigration, ticketCountersMigration],
  hooks: {
    'crm.deal.create': dealClosedAt,
    'crm.deal.update': dealClosedAt,
  },
  routes(router, pack) {
    dealsRoutes(router, pack);
    eventsRoutes(router, pack, new CrmEventsService(pack.db));
    supportTicketsRoutes(router, pack, new SupportTicketsService(pack));
  },
});
