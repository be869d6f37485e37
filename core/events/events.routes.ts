import type { PackRouter } from '../http/route.js';
import { EVENT_NAME } from './event.js';
import type { EventsService } from './events.service.js';

export const EVENT_NAME_PATTERN = EVENT_NAME.source;
export const PRODUCT_SCHEMA = { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$' } as const;

/** POST /events/publish: an integrator raises an event for its tenant; it reaches the subscribed connectors. */
export function eventsRoutes(router: PackRouter, events: EventsService): void {
  router.post('/events/publish', {
    summary: 'Publish an event to the tenant\'s connectors',
    description: 'Writes the event to the outbox and queues one signed delivery per matching active connector, in one transaction.',
    tags: ['events'], auth: 'tenant', role: 'editor', status: 202,
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
    errors: ['validation_failed', 'invalid_json', 'forbidden', 'tenant_required', 'tenant_not_found'],
  }, async (ctx) => {
    const { event: name, payload, product } = ctx.state.body as { event: string; payload: Record<string, unknown>; product?: string };
    const { event, deliveries } = await events.publish(ctx.state.rc, { name, payload, product: product ?? null });
    return { id: event.id, event: event.name, product: event.product, deliveries };
  });
}
