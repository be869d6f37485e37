import type { ServiceBuilder } from '../../core/pack-api.js';
import { CrmEventsService } from './events.service.js';
import { SupportTicketsService } from './support-tickets.service.js';

declare module '../../core/pack-api.js' {
  interface PackServices {
    /** First-party events: record (deduplicated by eventId), list, erase a customer's. */
    'crm.events': CrmEventsService;
    /** Support tickets (PQRS): open one (numbered, with its SLA date), move it along its status machine. */
    'crm.tickets': SupportTicketsService;
  }
}

/** The CRM pack's services, built once per app. */
export const crmServices = {
  events: (pack) => new CrmEventsService(pack.db),
  tickets: (pack) => new SupportTicketsService(pack),
} satisfies Record<string, ServiceBuilder>;
