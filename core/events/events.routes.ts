import { Forbidden } from '../base/errors.js';
import type { PackRouter } from '../http/route.js';
import type { SchemaRegistry } from '../metadata/schema-registry.js';
import type { RateLimitService } from '../ratelimit/rate-limit.service.js';
import { EVENT_NAME } from './event.js';
import type { EventsService } from './events.service.js';
import { isReservedEvent } from './reserved-events.js';

export const EVENT_NAME_PATTERN = EVENT_NAME.source;
export const PRODUCT_SCHEMA = { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$' } as const;

/**
 * POST /events/publish: an integrator raises an event for its tenant; it reaches the subscribed connectors
 * only (never in-process pack handlers), and names the platform raises itself are refused (403 forbidden).
 */
export function eventsRoutes(router: PackRouter, events: EventsService, schemas: SchemaRegistry, rateLimits: RateLimitService, perMinute: number): void {
  const rate = { limit: perMinute, windowMs: 60_000 };
  router.post('/events/publish', {
    summary: 'Publish an event to the tenant\'s connectors',
    description: 'Writes the event to the outbox and queues one signed delivery per matching active connector, in one transaction. '
      + 'Names the platform raises itself (tenant.*, platform.*, the events packs declare, and <ns>.<schema>.created|updated|deleted of a schema '
      + 'the tenant sees) answer 403 forbidden.',
    tags: ['events'], auth: 'tenant', role: 'editor', status: 202, idempotent: true,
    body: {
      type: 'object',
      required: ['event', 'payload'],
      additionalProperties: false,
      properties: {
        event: { type: 'string', maxLength: 200, pattern: EVENT_NAME_PATTERN },
        payload: { type: 'object' },
        product: PRODUCT_SCHEMA,
      },
    },
    response: {
      type: 'object',
      properties: {
        id: { type: 'string' }, event: { type: 'string' }, product: { type: ['string', 'null'] }, deliveries: { type: 'integer' },
      },
    },
    errors: ['validation_failed', 'invalid_json', 'forbidden', 'tenant_required', 'tenant_not_found', 'rate_limited'],
  }, async (ctx) => {
    await rateLimits.enforce(ctx.state.rc, 'events.publish', rate);
    const { event: name, payload, product } = ctx.state.body;
    if (await isReservedEvent(ctx.state.rc, schemas, events.declared, name)) {
      throw Forbidden(`The platform raises "${name}" itself; publish it under another name (e.g. your own namespace)`);
    }
    const { event, deliveries } = await events.publish(ctx.state.rc, { name, payload, product: product ?? null, source: 'api' });
    return { id: event.id, event: event.name, product: event.product, deliveries };
  });
}
