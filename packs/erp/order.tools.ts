import type { McpToolDefinition } from '../../core/pack-api.js';
import type { Order } from './orders.service.js';

/** What order_status answers (CONTRACT 14): where an order stands, its amounts and its parcels. */
const orderStatusOutput = {
  type: 'object',
  additionalProperties: false,
  required: ['number', 'status', 'paymentStatus', 'fulfillmentStatus', 'cancelReason', 'currency', 'subtotalCents', 'discountCents', 'shippingCents', 'taxCents', 'totalCents', 'refundedCents', 'fulfillments'],
  properties: {
    number: { type: 'integer' },
    status: { type: 'string', enum: ['pending_payment', 'placed', 'paid', 'fulfilled', 'cancelled'] },
    paymentStatus: { type: 'string', enum: ['pending', 'paid', 'partially_refunded', 'refunded'] },
    fulfillmentStatus: { type: 'string', enum: ['unfulfilled', 'partially_fulfilled', 'fulfilled'] },
    cancelReason: { type: ['string', 'null'] },
    currency: { type: 'string' },
    subtotalCents: { type: 'integer' },
    discountCents: { type: 'integer' },
    shippingCents: { type: 'integer' },
    taxCents: { type: 'integer' },
    totalCents: { type: 'integer' },
    refundedCents: { type: 'integer' },
    fulfillments: {
      type: 'array',
      items: {
        type: 'object', additionalProperties: false, required: ['carrier', 'trackingNumber', 'trackingUrl'],
        properties: { carrier: { type: ['string', 'null'] }, trackingNumber: { type: ['string', 'null'] }, trackingUrl: { type: ['string', 'null'] } },
      },
    },
  },
} as const;

/** An order as order_status shows it (the fields of orders placed before checkout default as they read on /erp/orders). */
function orderStatus(order: Order) {
  const text = (value: unknown) => (typeof value === 'string' ? value : null);
  return {
    number: order.number, status: order.status, paymentStatus: order.paymentStatus ?? 'pending', fulfillmentStatus: order.fulfillmentStatus ?? 'unfulfilled',
    cancelReason: order.cancelReason ?? null, currency: order.currency, subtotalCents: order.subtotalCents, discountCents: order.discountCents,
    shippingCents: order.shippingCents ?? 0, taxCents: order.taxCents, totalCents: order.totalCents, refundedCents: order.refundedCents ?? 0,
    fulfillments: (order.fulfillments ?? []).map((f) => ({ carrier: text(f.carrier), trackingNumber: text(f.trackingNumber), trackingUrl: text(f.trackingUrl) })),
  };
}

/** ERP's MCP tools about orders: a support agent asks where an order stands, by its number (viewer). */
export const orderTools: Record<string, McpToolDefinition> = {
  order_status: {
    title: 'Order status',
    description: 'An order of the shop by its number: status, payment and fulfilment status, why it was cancelled, its amounts in cents (total, refunded) and its parcels with tracking.',
    input: {
      type: 'object', additionalProperties: false, required: ['number'],
      properties: { number: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER } },
    },
    output: orderStatusOutput,
    handler: async (args: { number: number }, { rc, pack }) => orderStatus(await pack.use('erp.orders').get(rc, String(args.number))),
  },
};
