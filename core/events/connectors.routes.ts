import { OFFSET_QUERY } from '../http/response-schemas.js';
import type { ErrorCode, PackRouter, RouteSpec } from '../http/route.js';
import type { ConnectorsService } from './connectors.service.js';
import { EVENT_NAME_PATTERN, PRODUCT_SCHEMA } from './events.routes.js';

const eventPattern = { type: 'string', maxLength: 200, pattern: `^(\\*|[a-z][a-z0-9_]*(\\.[a-z0-9_]+)*\\.\\*|${EVENT_NAME_PATTERN.slice(1, -1)})$` };
const fields = {
  url: { type: 'string', format: 'uri', maxLength: 2048, pattern: '^https?://' },
  events: { type: 'array', minItems: 1, maxItems: 100, items: eventPattern },
  product: { anyOf: [PRODUCT_SCHEMA, { type: 'null' }] },
  active: { type: 'boolean' },
  description: { anyOf: [{ type: 'string', maxLength: 1000 }, { type: 'null' }] },
  secret: { anyOf: [{ type: 'string', minLength: 16, maxLength: 256 }, { type: 'null' }] },
};
const connectorResponse = {
  type: 'object',
  properties: {
    id: { type: 'string' }, url: { type: 'string' }, events: { type: 'array', items: { type: 'string' } },
    product: { type: ['string', 'null'] }, active: { type: 'boolean' }, description: { type: ['string', 'null'] },
    hasSecret: { type: 'boolean' }, disabledReason: { type: ['string', 'null'] }, createdAt: { type: 'string' }, updatedAt: { type: 'string' },
  },
};
const attemptResponse = {
  type: 'object',
  required: ['attempt', 'statusCode', 'durationMs', 'error', 'at', 'responseHeaders', 'responseBody'],
  properties: {
    attempt: { type: 'integer', minimum: 1 }, statusCode: { type: ['integer', 'null'], description: 'The answer\'s HTTP status; null: no answer' },
    durationMs: { type: 'integer' }, error: { type: ['string', 'null'], description: 'Why it failed, with the start of the answer\'s body' },
    at: { type: 'string', format: 'date-time', description: 'When the attempt ended' },
    responseHeaders: {
      type: ['object', 'null'], additionalProperties: { type: 'string' },
      description: 'The answer\'s headers, names in lower case; null: no answer (or an attempt recorded before they were kept)',
    },
    responseBody: { type: ['string', 'null'], description: 'The first KiB (1,024 bytes) of the answer\'s body as UTF-8 text; null: no answer' },
  },
};
const deliveryResponse = {
  type: 'object',
  required: ['id', 'event', 'status', 'attemptCount', 'attempts', 'createdAt'],
  properties: {
    id: { type: 'string' }, connectorId: { type: ['string', 'null'] }, eventId: { type: ['string', 'null'] }, event: { type: ['string', 'null'] },
    status: { type: 'string', enum: ['pending', 'delivered', 'failed', 'cancelled'] }, attemptCount: { type: 'integer' },
    nextAttemptAt: { type: 'string' }, lastStatusCode: { type: ['integer', 'null'] }, lastError: { type: ['string', 'null'] },
    deliveredAt: { type: ['string', 'null'] }, createdAt: { type: 'string' }, updatedAt: { type: 'string' },
    attempts: { type: 'array', items: attemptResponse },
  },
};
const deliveryDetailResponse = {
  ...deliveryResponse,
  required: [...deliveryResponse.required, 'request'],
  properties: {
    ...deliveryResponse.properties,
    request: {
      type: 'object',
      required: ['method', 'url', 'headers', 'signatureHeaders', 'body'],
      properties: {
        method: { const: 'POST' }, url: { type: 'string' }, headers: { type: 'object', additionalProperties: { type: 'string' } },
        signatureHeaders: { type: 'array', items: { type: 'string' }, description: 'Signed anew at each attempt (see docs/events.md)' },
        body: { type: ['string', 'null'], description: 'The JSON text sent; null once the event is pruned' },
      },
    },
  },
};
const paging = {
  limit: { type: 'integer', minimum: 1, maximum: 200, default: 50 },
  offset: OFFSET_QUERY,
};
const spec: Pick<RouteSpec, 'tags' | 'auth' | 'role'> = { tags: ['connectors'], auth: 'tenant', role: 'admin' };
const common: ErrorCode[] = ['forbidden', 'tenant_required', 'tenant_not_found'];

/** Connectors of the caller's tenant (tenant admins) and their delivery log. */
export function connectorsRoutes(router: PackRouter, connectors: ConnectorsService, poke: () => void): void {
  router.get('/connectors', {
    ...spec, summary: 'List connectors', query: { type: 'object', additionalProperties: false, properties: paging },
    response: { type: 'object', properties: { items: { type: 'array', items: connectorResponse }, pagination: { type: 'object' } } },
    errors: [...common, 'validation_failed'],
  }, async (ctx) => connectors.list(ctx.state.rc, ctx.state.query.limit, ctx.state.query.offset));

  router.post('/connectors', {
    ...spec, summary: 'Create a connector (webhook subscription)', status: 201, idempotent: true,
    description: 'The URL must pass the outbound-fetch rules (400 url_not_allowed). The secret is write-only.',
    body: { type: 'object', required: ['url', 'events'], additionalProperties: false, properties: fields },
    response: connectorResponse, errors: [...common, 'validation_failed', 'url_not_allowed'],
  }, async (ctx) => connectors.create(ctx.state.rc, ctx.state.body));

  router.get('/connectors/:id', {
    ...spec, summary: 'Read a connector', response: connectorResponse, errors: [...common, 'not_found'],
  }, async (ctx) => connectors.require(ctx.state.rc, ctx.params.id));

  router.patch('/connectors/:id', {
    ...spec, summary: 'Change a connector (active: true turns a disabled one back on)',
    body: { type: 'object', additionalProperties: false, minProperties: 1, properties: fields },
    response: connectorResponse, errors: [...common, 'not_found', 'validation_failed', 'url_not_allowed'],
  }, async (ctx) => connectors.update(ctx.state.rc, ctx.params.id, ctx.state.body));

  router.delete('/connectors/:id', {
    ...spec, summary: 'Delete a connector with its queue and delivery log', errors: [...common, 'not_found'],
  }, async (ctx) => {
    await connectors.delete(ctx.state.rc, ctx.params.id);
    return null;
  });

  router.get('/connectors/:id/deliveries', {
    ...spec, summary: 'The connector\'s deliveries, newest first, each with its attempts (filter by status and by event name)',
    query: {
      type: 'object', additionalProperties: false,
      properties: { ...paging, status: { enum: ['pending', 'delivered', 'failed', 'cancelled'] }, event: { type: 'string', maxLength: 200, description: 'An event name, exactly' } },
    },
    response: { type: 'object', properties: { items: { type: 'array', items: deliveryResponse }, pagination: { type: 'object' } } },
    errors: [...common, 'not_found', 'validation_failed'],
  }, async (ctx) => {
    const { limit, offset, status, event } = ctx.state.query;
    return connectors.listDeliveries(ctx.state.rc, ctx.params.id, limit, offset, { status, event });
  });

  router.get('/connectors/:id/deliveries/:deliveryId', {
    ...spec, summary: 'One delivery: every attempt (time, status, duration, the answer\'s start) and the request each sends (URL, headers, body)',
    description: 'The body is rebuilt from the stored event (null once the event is pruned after OUTBOX_RETENTION_DAYS). The signature '
      + 'headers are named, not shown: each attempt signs the body anew with the connector\'s secret and the time of the attempt.',
    response: deliveryDetailResponse, errors: [...common, 'not_found'],
  }, async (ctx) => connectors.getDelivery(ctx.state.rc, ctx.params.id, ctx.params.deliveryId));

  router.post('/connectors/:id/deliveries/:deliveryId/retry', {
    ...spec, summary: 'Send a delivery again now', status: 202, errors: [...common, 'not_found', 'conflict'],
  }, async (ctx) => {
    const delivery = await connectors.retryDelivery(ctx.state.rc, ctx.params.id, ctx.params.deliveryId);
    poke();
    return delivery;
  });

  router.get('/events/handler-runs', {
    tags: ['events'], auth: 'tenant', role: 'admin',
    summary: 'Runs of the packs\' event handlers for the tenant, newest first, each with its attempts',
    description: 'Each platform event queues one run per subscribed pack handler (`<pack>:<pattern>`) in the outbox, in the '
      + 'transaction of the change; a run that throws is retried with back-off, like a webhook delivery.',
    query: {
      type: 'object', additionalProperties: false,
      properties: { handler: { type: 'string', maxLength: 200 }, eventId: { type: 'string', maxLength: 36 }, limit: paging.limit },
    },
    errors: [...common, 'validation_failed'],
  }, async (ctx) => {
    const { handler, eventId, limit } = ctx.state.query;
    const runs = await connectors.deliveries.listHandlerRuns(ctx.state.rc, { handler, eventId }, limit);
    return runs.map(({ tenantId: _t, message: _m, kind: _k, connectorId: _c, ...run }) => run);
  });
}
