import { listQueryOf, pageResponse, queryFromString, recordResponse } from '../../core/pack-api.js';
import type { AppContext, DataRecord, PackContext, PackRouter } from '../../core/pack-api.js';
import ticketDefinition from '../../schemas/crm/ticket.schema.json' with { type: 'json' };
import type { TicketChange, TicketInput } from './support-tickets.service.js';
import { TICKET_STATUSES } from './ticket-status.js';

const fields = ticketDefinition.schema.properties;
export const ticketResponse = recordResponse(ticketDefinition);

export const createBody = {
  type: 'object',
  additionalProperties: false,
  required: ['type', 'subject', 'description', 'customerRef'],
  properties: {
    type: fields.type, subject: fields.subject, description: fields.description, customerRef: fields.customerRef,
    contactEmail: { type: 'string', format: 'email', maxLength: 254 },
    dealId: { type: 'string', format: 'uuid', description: 'A deal of the tenant' },
    priority: { ...fields.priority, default: 'normal' },
  },
};

const patchBody = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    status: { type: 'string', enum: [...TICKET_STATUSES], description: 'new → open; open ⇄ pending_customer; new | open | pending_customer → resolved; resolved → closed | open' },
    priority: fields.priority,
    assigneeId: fields.assigneeId,
  },
};

/** The list filters of the contract as plain parameters, beside the data API's query language. */
const FILTERS = ['status', 'type', 'dealId', 'customerRef'] as const;
const ticketListQuery = listQueryOf(ticketResponse);
const listQuery = {
  ...ticketListQuery,
  properties: {
    ...(ticketListQuery.properties as Record<string, unknown>),
    status: { type: 'string', enum: [...TICKET_STATUSES] },
    type: fields.type,
    dealId: { type: 'string', maxLength: 36 },
    customerRef: fields.customerRef,
  },
};

function withEtag(ctx: AppContext, ticket: DataRecord): DataRecord {
  ctx.set('ETag', `"${ticket.version}"`);
  return ticket;
}

/** /crm/support-tickets: the only way tickets are written. */
export function supportTicketsRoutes(router: PackRouter, pack: PackContext): void {
  const tickets = pack.use('crm.tickets');
  const tags = ['crm'];

  router.post('/crm/support-tickets', {
    summary: 'Open a support ticket (PQRS): numbered PQRS-<year>-<6 digits>, SLA due at the end of the 15th business day',
    tags, auth: 'tenant', role: 'editor', status: 201, idempotent: true, body: createBody, response: ticketResponse,
    errors: ['validation_failed', 'module_disabled', 'forbidden', 'unauthenticated', 'tenant_required'],
  }, async (ctx) => withEtag(ctx, await tickets.open(ctx.state.rc, ctx.state.body as TicketInput)));

  router.get('/crm/support-tickets', {
    summary: 'List support tickets (status, type, dealId, customerRef; limit, offset, sort, cursor, filter[field][op])',
    tags, auth: 'tenant', query: listQuery, response: pageResponse(ticketResponse),
    errors: ['validation_failed', 'invalid_filter', 'invalid_cursor', 'module_disabled', 'unauthenticated', 'tenant_required'],
  }, async (ctx) => {
    const query: Record<string, string | string[] | undefined> = { ...ctx.query };
    for (const name of FILTERS) {
      if (query[name] === undefined) continue;
      query[`filter[${name}]`] = query[name];
      delete query[name];
    }
    return pack.records.list(ctx.state.rc, 'crm', 'ticket', queryFromString(query));
  });

  router.get('/crm/support-tickets/:ticketId', {
    summary: 'Read a support ticket with its history', tags, auth: 'tenant', response: ticketResponse,
    errors: ['not_found', 'module_disabled', 'unauthenticated', 'tenant_required'],
  }, async (ctx) => withEtag(ctx, await pack.records.get(ctx.state.rc, 'crm', 'ticket', ctx.params.ticketId)));

  router.patch('/crm/support-tickets/:ticketId', {
    summary: 'Change a ticket\'s status (along the status machine, kept in history), priority or assignee (If-Match optional)',
    tags, auth: 'tenant', role: 'editor', body: patchBody, response: ticketResponse,
    errors: ['validation_failed', 'not_found', 'invalid_transition', 'version_mismatch', 'conflict', 'module_disabled', 'forbidden', 'unauthenticated'],
  }, async (ctx) => {
    const ticket = await tickets.change(ctx.state.rc, ctx.params.ticketId, ctx.state.body as TicketChange, ctx.get('If-Match') || null);
    return withEtag(ctx, ticket);
  });
}
