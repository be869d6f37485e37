import { ticketTools } from './ticket.tools.js';
import { definePack } from '../../core/pack-api.js';
import { crmEventsMigration } from './migrations/0500-crm-events.js';
import { ticketCountersMigration } from './migrations/0501-crm-ticket-counters.js';
import { cartRecoveryMigration } from './migrations/0502-crm-cart-recovery.js';
import { customerContactsMigration } from './migrations/0503-crm-customer-contacts.js';
import { customerContactsRoutes } from './customer-contacts.routes.js';
import { cartRecoveryRoutes } from './cart-recovery.routes.js';
import { dealClosedAt } from './deal-closed-at.hook.js';
import { dealsRoutes } from './deals.routes.js';
import { crmServices } from './crm.services.js';
import { eventsRoutes } from './events.routes.js';
import { supportTicketsRoutes } from './support-tickets.routes.js';

/**
 * CRM: deals through the sales pipeline, first-party events, support tickets (PQRS). A closed namespace:
 * tenants cannot add schemas to `crm`. Deals are records (`crm.deal`), so /crm/deals and /data/crm/deal
 * run the same validation, hooks and events (`crm.deal.created`, `crm.deal.updated` with `record` and
 * `previous`). Tickets are records too (`crm.ticket`), sealed: numbered and moved along their status
 * machine only by /crm/support-tickets, read anywhere. Events live in a table of their own (crm_events):
 * there are many, and they are never edited. Provides `crm.events` and `crm.tickets`; reads the tenant's
 * timezone (for ticket SLAs) from `tenant-admin.siteProfile`.
 */
export default definePack({
  name: 'crm',
  description: 'Customer relationship management: deals, first-party events, support tickets',
  admin: 'admin/screens.ts',
  licensed: 'crm',
  namespaces: [{ name: 'crm', open: false, schemas: ['deal', 'ticket'], sealed: ['ticket'] }],
  migrations: [crmEventsMigration, ticketCountersMigration, cartRecoveryMigration, customerContactsMigration],
  provides: crmServices,
  requires: ['tenant-admin.siteProfile', 'erp.orders?'],
  events: ['crm.cart.abandoned'],
  hooks: {
    'crm.deal.create': dealClosedAt,
    'crm.deal.update': dealClosedAt,
  },
  routes(router, pack) {
    dealsRoutes(router, pack);
    eventsRoutes(router, pack);
    supportTicketsRoutes(router, pack);
    cartRecoveryRoutes(router, pack);
    customerContactsRoutes(router, pack);
  },
  tools: ticketTools,
  start: (pack) => pack.use('crm.cartRecoveryScheduler').start(),
  stop: (pack) => pack.use('crm.cartRecoveryScheduler').stop(),
});
