import type { McpToolDefinition } from '../../core/pack-api.js';
import type { TicketInput } from './support-tickets.service.js';
import { createBody, ticketResponse } from './support-tickets.routes.js';

/** CRM's MCP tools: an agent opens a support ticket (PQRS) for a customer, as POST /crm/support-tickets does. */
export const ticketTools: Record<string, McpToolDefinition> = {
  open_ticket: {
    title: 'Open a support ticket',
    description: 'Opens a PQRS ticket (petition, complaint, claim or suggestion) for a customer: numbered PQRS-<year>-<6 digits>, with its SLA due date.',
    role: 'editor',
    input: createBody,
    output: ticketResponse,
    handler: (args: TicketInput, { rc, pack }) => pack.use('crm.tickets').open(rc, args),
  },
};
