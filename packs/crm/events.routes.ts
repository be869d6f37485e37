import { createHmac } from 'node:crypto';
import { isbot } from 'isbot';
import { bffSuccess, clientKey, Forbidden, OFFSET_QUERY, pageResponse, RateLimited } from '../../core/pack-api.js';
import type { AppContext, JsonSchema, PackContext, PackRouter } from '../../core/pack-api.js';
import { customerRefParamOf } from './customer-ref.js';
import { eventBodySchema, type EventInput } from './events.service.js';

const recordedResponse: JsonSchema = {
  type: 'object',
  properties: { id: { type: 'string', format: 'uuid' }, duplicate: { type: 'boolean', description: 'true when the eventId was stored already (answered 200, nothing new stored)' } },
};

const eventResponse: JsonSchema = {
  type: 'object',
  properties: {
    id: { type: 'string', format: 'uuid' }, eventId: { type: ['string', 'null'] }, eventType: { type: 'string' },
    customerRef: { type: 'string' }, eventData: { type: 'object' }, occurredAt: { type: 'string', format: 'date-time' },
    receivedAt: { type: 'string', format: 'date-time' }, bot: { type: 'boolean' },
  },
};

const listQuery: JsonSchema = {
  type: 'object',
  properties: {
    customerRef: { type: 'string', minLength: 1, maxLength: 128 },
    eventType: { type: 'string', minLength: 1, maxLength: 100 },
    from: { type: 'string', format: 'date-time', description: 'occurredAt at or after' },
    to: { type: 'string', format: 'date-time', description: 'occurredAt at or before' },
    limit: { type: 'integer', minimum: 1, maximum: 200, default: 50 },
    offset: OFFSET_QUERY,
    count: { type: 'boolean', default: true, description: 'false leaves pagination.total null (faster)' },
  },
};

/**
 * First-party events (CONTRACT 11.3): from a shop's backend (editor) and from its storefront in the browser
 * (no authentication, known types only, rate-limited per client address, bots flagged). No response sets a
 * cookie: nothing here reads or writes one.
 */
export function eventsRoutes(router: PackRouter, pack: PackContext): void {
  const events = pack.use('crm.events');
  const tags = ['crm'];

  router.post('/crm/events', {
    summary: 'Record a first-party event (201; the same eventId again: 200 with duplicate: true)',
    tags, auth: 'tenant', role: 'editor', status: 201, body: eventBodySchema(false), response: recordedResponse,
    answers: { 200: 'The same eventId again: `{ id, duplicate: true }`, nothing new stored' },
    errors: ['validation_failed', 'module_disabled', 'forbidden', 'unauthenticated', 'tenant_required'],
  }, async (ctx) => recorded(ctx, await events.record(ctx.state.rc, ctx.state.body as EventInput, { bot: false })));

  router.get('/crm/events', {
    summary: 'List first-party events, newest occurredAt first (customerRef, eventType, from, to, limit, offset)',
    tags, auth: 'tenant', query: listQuery, response: pageResponse(eventResponse),
    errors: ['validation_failed', 'module_disabled', 'unauthenticated', 'tenant_required'],
  }, async (ctx) => {
    const q = ctx.state.query as { customerRef?: string; eventType?: string; from?: string; to?: string; limit: number; offset: number; count: boolean };
    const filter = {
      customerRef: q.customerRef, eventType: q.eventType,
      from: q.from === undefined ? undefined : new Date(q.from).toISOString(),
      to: q.to === undefined ? undefined : new Date(q.to).toISOString(),
    };
    const page = await events.list(ctx.state.rc, filter, q);
    return { items: page.items, pagination: { limit: q.limit, offset: q.offset, total: page.total, hasMore: page.hasMore, nextCursor: null } };
  });

  router.delete('/crm/customers/:customerRef/events', {
    summary: 'Erase every event of a customer (right to erasure)',
    tags, auth: 'tenant', role: 'admin', response: { type: 'object', properties: { deleted: { type: 'integer' } } },
    errors: ['validation_failed', 'not_found', 'module_disabled', 'forbidden', 'unauthenticated', 'tenant_required'],
  }, async (ctx) => {
    return events.eraseCustomer(ctx.state.rc, customerRefParamOf(ctx.params.customerRef));
  });

  const rate = { limit: pack.config.publicEventsRateLimitPerMinute, windowMs: 60_000 };
  router.post('/public/tenant/:tenantId/events', {
    summary: 'Record a first-party event from a storefront (no authentication; known types only; rate-limited per client address)',
    description: 'A User-Agent that looks like a bot, or none, stores the event with bot: true. The client address is never stored. '
      + '`checkout.*` types are refused (403 forbidden): they come from checkouts and authenticated callers. '
      + 'Answers 404 not_found when the tenant has no crm module.',
    tags: ['public'], auth: 'public', tenantParam: 'tenantId', module: 'crm', absentWithoutModule: 'This site takes no events', status: 201, body: eventBodySchema(true), response: recordedResponse,
    answers: { 200: 'The same eventId again: `{ id, duplicate: true }`, nothing new stored' },
    errors: ['validation_failed', 'tenant_not_found', 'not_found', 'rate_limited', 'forbidden'],
  }, async (ctx) => {
    const rc = ctx.state.rc;
    const hit = await pack.rateLimits.hit(rc, `crm-events:${clientDigest(pack, ctx.ip)}`, rate);
    if (!hit.allowed) throw RateLimited(hit.retryAfterSeconds, [], { 'Retry-After': String(hit.retryAfterSeconds) });
    const input = ctx.state.body as EventInput;
    // A checkout is told by the checkout itself (or an authenticated caller), never by anyone who knows a customerRef.
    if (input.eventType.startsWith('checkout.')) throw Forbidden(`${input.eventType} events come from checkouts and authenticated callers, not from the public endpoint`);
    // No User-Agent at all is no browser either.
    const userAgent = ctx.get('User-Agent').trim();
    const bot = !userAgent || isbot(userAgent);
    return recorded(ctx, await events.record(rc, input, { bot }));
  });
}

/** 201 (the route's status) for a new event, 200 for a duplicate. */
function recorded(ctx: AppContext, result: { id: string; duplicate: boolean }) {
  if (!result.duplicate) return result;
  ctx.status = 200;
  ctx.body = bffSuccess(result);
  return undefined;
}

/**
 * The rate-limit bucket names the client by a keyed digest of its address, so that not even the counters
 * hold the address itself.
 */
function clientDigest(pack: PackContext, ip: string): string {
  return createHmac('sha256', pack.config.signingSecret).update(clientKey(ip)).digest('base64url').slice(0, 22);
}
