import { listQueryOf, pageResponse, queryFromString, recordResponse, type PackContext, type PackRouter } from '../../core/pack-api.js';
import { InsufficientStock, PriceChanged } from './erp.errors.js';
import orderDefinition from '../../schemas/erp/order.schema.json' with { type: 'json' };

const order = recordResponse(orderDefinition);

/** The body of POST /erp/orders (CONTRACT 11.2). */
export const placeOrderBody = {
  type: 'object',
  required: ['clientId', 'paymentMethod', 'items'],
  additionalProperties: false,
  properties: {
    clientId: { type: 'integer', minimum: 1, maximum: 2147483647 },
    paymentMethod: { type: 'string', maxLength: 64, pattern: '^([a-z][a-z0-9]*_card|bank_transfer|cash_on_delivery)$' },
    items: {
      type: 'array', minItems: 1, maxItems: 200,
      items: {
        type: 'object',
        required: ['productId', 'quantity', 'unitPrice'],
        additionalProperties: false,
        properties: {
          productId: { anyOf: [{ type: 'integer', minimum: 1 }, { type: 'string', format: 'uuid' }], description: 'The product\'s number or UUID' },
          quantity: { type: 'integer', minimum: 1, maximum: 10000 },
          unitPrice: { type: 'integer', minimum: 0, maximum: 100000000000, description: 'Net cents; must equal the product\'s priceCents' },
        },
      },
    },
    customerRef: { type: 'string', minLength: 1, maxLength: 128 },
    couponCode: { type: 'string', minLength: 1, maxLength: 64 },
    currency: { type: 'string', pattern: '^[A-Z]{3}$' },
  },
};

const paymentBody = {
  type: 'object', required: ['amountCents'], additionalProperties: false,
  properties: {
    amountCents: { type: 'integer', minimum: 1, maximum: 100000000000 },
    reference: { type: 'string', minLength: 1, maxLength: 255, description: 'The bank transfer\'s reference, a receipt number…' },
    method: { type: 'string', minLength: 1, maxLength: 64, description: 'How it was paid; default the order\'s paymentMethod' },
  },
};

const transitionBody = {
  type: 'object', required: ['status'], additionalProperties: false,
  properties: { status: { type: 'string', enum: ['placed', 'paid', 'fulfilled', 'cancelled'] } },
};

/** Orders: placed here (never through /data/erp/order), listed and moved along placed → paid → fulfilled, or cancelled. */
export function ordersRoutes(router: PackRouter, pack: PackContext): void {
  const orders = pack.use('erp.orders');
  const fulfillments = pack.use('erp.fulfillments');
  const refunds = pack.use('erp.refunds');
  const tags = ['erp'];

  router.post('/erp/orders', {
    summary: 'Place an order: prices checked, VAT per line, stock taken in the same transaction (Idempotency-Key honoured)',
    description: 'productId is the number or UUID; lines of one product are merged. 409 price_changed (details carry `expected`), '
      + '409 insufficient_stock (details carry the `sku`; nothing is written), 409 coupon_invalid.',
    tags, auth: 'tenant', role: 'editor', status: 201, idempotent: 'in-transaction', body: placeOrderBody, response: order,
    errors: [PriceChanged, InsufficientStock, 'coupon_invalid', 'conflict', 'idempotency_key_reused'],
  }, async (ctx) => orders.place(ctx.state.rc, ctx.state.body));

  router.get('/erp/orders', {
    summary: 'List orders (filter[status]=placed, filter[clientId]=7, filter[customerRef]=…, filter[createdAt][gte]=…; paging as the data API)',
    tags, auth: 'tenant', query: listQueryOf(order), response: pageResponse(order), errors: ['invalid_filter', 'invalid_cursor'],
  }, async (ctx) => orders.list(ctx.state.rc, queryFromString(ctx.query)));

  router.get('/erp/orders/:id', {
    summary: 'Read an order by UUID or number', tags, auth: 'tenant', response: order, errors: ['not_found'],
  }, async (ctx) => {
    const found = await orders.get(ctx.state.rc, ctx.params.id);
    ctx.set('ETag', `"${found.version}"`);
    return found;
  });

  router.post('/erp/orders/:id/payments', {
    summary: 'Record a manual payment of an order while its payment is pending; when the payments reach the total the order is paid',
    description: 'A card order, or one already paid or cancelled: 409 invalid_transition; more than is left to pay: 400.',
    tags, auth: 'tenant', role: 'admin', status: 201, idempotent: 'in-transaction', body: paymentBody, response: order,
    errors: ['not_found', 'invalid_transition', 'idempotency_key_reused'],
  }, async (ctx) => orders.recordPayment(ctx.state.rc, ctx.params.id, ctx.state.body));

  router.patch('/erp/orders/:id', {
    summary: 'Move an order: placed → paid (a manual payment of what is left) → fulfilled (every unit left shipped in one fulfilment), placed | paid → cancelled (the stock goes back once, the coupon is freed); else 409 invalid_transition',
    description: 'Cancelling a paid order needs admin (an editor: 403); money the order keeps (also part payments) is refunded first, through Stripe for a card '
      + 'payment (502 upstream_failed and no change when that fails); a fulfilled or partly fulfilled order: 409 invalid_transition; a refund pending: 409 conflict.',
    tags, auth: 'tenant', role: 'editor', body: transitionBody, response: order, errors: ['not_found', 'invalid_transition', 'conflict', 'upstream_failed'],
  }, async (ctx) => {
    const { status } = ctx.state.body;
    if (status === 'fulfilled') return fulfillments.shipRest(ctx.state.rc, ctx.params.id);
    if (status === 'cancelled') return refunds.cancel(ctx.state.rc, ctx.params.id);
    return orders.transition(ctx.state.rc, ctx.params.id, status);
  });
}
