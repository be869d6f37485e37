import type { ValidateFunction } from 'ajv';
import { createAjv, newId, nowIso, toIssues, ValidationFailed } from '../../core/pack-api.js';
import type { PackContext, ErrorDetail, JsonSchema, RequestContext } from '../../core/pack-api.js';
import { EventsRepository, type CrmEvent, type EventFilter } from './events.repository.js';

export const EVENT_TYPE_PATTERN = '^[a-z][a-z0-9_]*(\\.[a-z0-9_]+)+$';
export const EVENT_DATA_MAX_BYTES = 16 * 1024;
const FUTURE_TOLERANCE_MS = 5 * 60_000;
const PAST_WINDOW_MS = 30 * 24 * 3600_000;

const SKU: JsonSchema = { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$' };
const QUANTITY: JsonSchema = { type: 'integer', minimum: 1, maximum: 10000 };

/**
 * The known event types and what their `eventData` must hold (other keys are kept as they are). A storefront
 * may send only these; an editor may send any type matching EVENT_TYPE_PATTERN, stored as it is.
 */
export const KNOWN_EVENT_DATA: Record<string, JsonSchema> = {
  'page.viewed': { type: 'object' },
  'product.viewed': { type: 'object', required: ['sku'], properties: { sku: SKU } },
  'cart.item_added': { type: 'object', required: ['sku', 'quantity'], properties: { sku: SKU, quantity: QUANTITY } },
  'cart.item_removed': { type: 'object', required: ['sku'], properties: { sku: SKU, quantity: QUANTITY } },
  'checkout.started': { type: 'object' },
  'checkout.completed': { type: 'object', properties: { orderId: { type: ['string', 'integer'] } } },
};
export const KNOWN_EVENT_TYPES = Object.keys(KNOWN_EVENT_DATA);

/** The request body of both event endpoints; `knownOnly` (the storefront's) takes the known types only. */
export function eventBodySchema(knownOnly: boolean): JsonSchema {
  return {
    type: 'object',
    additionalProperties: false,
    required: ['eventType', 'customerRef'],
    properties: {
      eventType: knownOnly
        ? { type: 'string', enum: KNOWN_EVENT_TYPES }
        : { type: 'string', pattern: EVENT_TYPE_PATTERN, maxLength: 100, description: `Known types: ${KNOWN_EVENT_TYPES.join(', ')}; others are stored as they are` },
      customerRef: { type: 'string', minLength: 1, maxLength: 128, pattern: '^[^@\\x00]*$', description: 'An opaque first-party reference, never an e-mail address (no "@")' },
      eventData: { type: 'object', description: 'At most 16 KiB as JSON. product.viewed { sku }, cart.item_added { sku, quantity }, cart.item_removed { sku, quantity? }, checkout.completed { orderId? }' },
      eventId: { type: 'string', format: 'uuid', description: 'The client\'s id of the event: the same id again is a duplicate, stored once' },
      occurredAt: { type: 'string', format: 'date-time', description: 'Default now; at most 5 minutes ahead and 30 days back' },
    },
    // What each known type's eventData must hold, said per type (the service checks the same, KNOWN_EVENT_DATA).
    allOf: Object.entries(KNOWN_EVENT_DATA).map(([type, data]) => ({
      if: { properties: { eventType: { const: type } }, required: ['eventType'] },
      then: { ...(data.required ? { required: ['eventData'] } : {}), properties: { eventData: data } },
    })),
  };
}

export interface EventInput {
  eventType: string;
  customerRef: string;
  eventData?: Record<string, unknown>;
  eventId?: string;
  occurredAt?: string;
}

const ajv = createAjv();
const dataValidators = new Map<string, ValidateFunction>(
  Object.entries(KNOWN_EVENT_DATA).map(([type, schema]) => [type, ajv.compile(schema)]),
);

/**
 * First-party events (CONTRACT 11.3): checked, deduplicated by the client's `eventId` and stored in
 * crm_events. The client address is never part of an event.
 */
export class CrmEventsService {
  readonly repository: EventsRepository;

  constructor(db: PackContext['db']) {
    this.repository = new EventsRepository(db);
  }

  async record(rc: RequestContext, input: EventInput, origin: { bot: boolean }): Promise<{ id: string; duplicate: boolean }> {
    const event: CrmEvent = {
      id: newId(),
      eventId: input.eventId?.toLowerCase() ?? null,
      eventType: input.eventType,
      customerRef: input.customerRef,
      eventData: input.eventData ?? {},
      occurredAt: '',
      receivedAt: nowIso(),
      bot: origin.bot,
    };
    const issues = checkEvent(event, input.occurredAt);
    if (issues.length) throw ValidationFailed('The event failed validation', issues);
    event.occurredAt = input.occurredAt ? new Date(input.occurredAt).toISOString() : event.receivedAt;

    if (await this.repository.insert(rc, event)) return { id: event.id, duplicate: false };
    // The eventId was taken: the event is stored already (by an earlier try, or a concurrent one).
    const existing = await this.repository.idOfEventId(rc, event.eventId!);
    if (existing) return { id: existing, duplicate: true };
    // Erased between the two statements: store it now.
    return this.record(rc, input, origin);
  }

  list(rc: RequestContext, filter: EventFilter, page: { limit: number; offset: number; count: boolean }) {
    return this.repository.list(rc, filter, page);
  }

  /** Right to erasure: every event of the customer. */
  async eraseCustomer(rc: RequestContext, customerRef: string): Promise<{ deleted: number }> {
    return { deleted: await this.repository.deleteCustomer(rc, customerRef) };
  }
}

function checkEvent(event: CrmEvent, occurredAt: string | undefined): ErrorDetail[] {
  const issues: ErrorDetail[] = [];
  if (event.customerRef.includes('@')) {
    issues.push({ path: '/customerRef', message: 'must be an opaque first-party reference, not an e-mail address (no "@")' });
  }
  if (Buffer.byteLength(JSON.stringify(event.eventData)) > EVENT_DATA_MAX_BYTES) {
    issues.push({ path: '/eventData', message: `must be at most ${EVENT_DATA_MAX_BYTES} bytes as JSON` });
  }
  const validate = dataValidators.get(event.eventType);
  if (validate && !validate(event.eventData)) {
    issues.push(...toIssues(validate.errors).map((i) => ({ path: `/eventData${i.path === '/' ? '' : i.path}`, message: i.message })));
  }
  if (occurredAt !== undefined) {
    const at = Date.parse(occurredAt);
    const now = Date.now();
    if (at > now + FUTURE_TOLERANCE_MS) issues.push({ path: '/occurredAt', message: 'must be at most 5 minutes in the future' });
    else if (at < now - PAST_WINDOW_MS) issues.push({ path: '/occurredAt', message: 'must be at most 30 days in the past' });
  }
  return issues;
}
