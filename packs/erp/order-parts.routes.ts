import { bffSuccess, recordResponse, type PackContext, type PackRouter } from '../../core/pack-api.js';
import { RefundExceedsPayment } from './erp.errors.js';
import orderDefinition from '../../schemas/erp/order.schema.json' with { type: 'json' };

const order = recordResponse(orderDefinition);
const { fulfillments, refunds } = orderDefinition.schema.properties;

const units = {
  type: 'array', minItems: 1, maxItems: 200,
  items: {
    type: 'object', required: ['sku', 'quantity'], additionalProperties: false,
    properties: { sku: { type: 'string', minLength: 1, maxLength: 100 }, quantity: { type: 'integer', minimum: 1, maximum: 10000 } },
  },
} as const;

const fulfillmentBody = {
  type: 'object', required: ['items'], additionalProperties: false,
  properties: {
    items: units,
    carrier: { type: 'string', minLength: 1, maxLength: 100 },
    trackingNumber: { type: 'string', minLength: 1, maxLength: 200 },
    trackingUrl: { type: 'string', format: 'uri', pattern: '^https?://', maxLength: 2000 },
  },
} as const;

const refundBody = {
  type: 'object', additionalProperties: false,
  description: 'amountCents or items (or both: the amount given, those units marked refunded); restock needs items',
  allOf: [
    { anyOf: [{ required: ['amountCents'] }, { required: ['items'] }] },
    { anyOf: [{ properties: { restock: { const: false } } }, { required: ['items'] }] },
  ],
  properties: {
    amountCents: { type: 'integer', minimum: 1, maximum: 100000000000 },
    items: units,
    restock: { type: 'boolean', default: false, description: 'Put the items back into stock (movements `return`)' },
    reason: { type: 'string', minLength: 1, maxLength: 500 },
  },
} as const;

const refundAnswer = { type: 'object', required: ['refund', 'order'], properties: { refund: refunds.items, order } };

/** Parcels and refunds of an order (CONTRACT 15.4). */
export function orderPartsRoutes(router: PackRouter, pack: PackContext): void {
  const fulfilments = pack.use('erp.fulfillments');
  const refundsService = pack.use('erp.refunds');
  const tags = ['erp'];

  router.post('/erp/orders/:id/fulfillments', {
    summary: 'Ship a parcel of an order (paid, or placed with cash_on_delivery): some or all of its units, with carrier and tracking',
    description: 'More units than are left to ship of a sku: 409 conflict (details name the item); another status: 409 invalid_transition. '
      + 'When every unit is shipped the order becomes fulfilled and erp.order.fulfilled goes out.',
    tags, auth: 'tenant', role: 'editor', status: 201, idempotent: 'in-transaction', body: fulfillmentBody,
    response: { type: 'object', required: ['fulfillment', 'order'], properties: { fulfillment: fulfillments.items, order } },
    errors: ['not_found', 'conflict', 'invalid_transition', 'idempotency_key_reused'],
  }, async (ctx) => fulfilments.create(ctx.state.rc, ctx.params.id, ctx.state.body));

  router.post('/erp/orders/:id/refunds', {
    summary: 'Refund an order\'s payment by amount or by items (optionally restocked): a manual payment\'s at once, a card payment\'s through Stripe',
    description: 'By items without an amount: each line\'s units at round_half_up(totalCents × units ÷ quantity), its last units what is left of it. '
      + 'A unit is refunded once (409 conflict); beyond what was paid: 409 refund_exceeds_payment. Stripe refusing: the refund is failed, 502 upstream_failed; '
      + 'Stripe not answering: 202, the refund pending until Stripe\'s webhooks settle it.',
    tags, auth: 'tenant', role: 'admin', status: 201, idempotent: true, body: refundBody, response: refundAnswer,
    answers: { 202: { description: 'Stripe has not answered (yet): the refund is pending; Stripe\'s webhooks settle it', response: refundAnswer } },
    errors: ['not_found', 'conflict', RefundExceedsPayment, 'upstream_failed', 'idempotency_key_reused'],
  }, async (ctx) => {
    const { status, refund, order: refunded } = await refundsService.create(ctx.state.rc, ctx.params.id, ctx.state.body);
    if (status === 202) {
      ctx.status = 202;
      ctx.body = bffSuccess({ refund, order: refunded });
      return undefined;
    }
    return { refund, order: refunded };
  });
}
