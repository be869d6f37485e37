import { recordResponse, type AppContext, type PackContext, type PackRouter } from '../../core/pack-api.js';
import { MAX_LINES, MAX_QUANTITY } from './carts.service.js';
import { InsufficientStock, PriceChanged } from './erp.errors.js';
import orderDefinition from '../../schemas/erp/order.schema.json' with { type: 'json' };

const SKU = { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$' } as const;
const QUANTITY = { type: 'integer', minimum: 1, maximum: MAX_QUANTITY } as const;
const COUNTRY = { type: 'string', pattern: '^[A-Z]{2}$', description: 'ISO 3166-1 alpha-2, upper case' } as const;
const CUSTOMER_REF = { type: 'string', minLength: 1, maxLength: 128, pattern: '^[^@]+$', description: 'An opaque first-party reference (never an e-mail address)' } as const;
const EMAIL = { type: 'string', format: 'email', maxLength: 254 } as const;
const text = { type: 'string', maxLength: 200 } as const;

const address = {
  type: 'object', additionalProperties: false, required: ['country'],
  properties: { country: COUNTRY, name: text, line1: text, line2: text, city: text, postalCode: { type: 'string', maxLength: 40 }, phone: { type: 'string', maxLength: 40 } },
} as const;

const cartLine = {
  type: 'object',
  required: ['sku', 'productNumber', 'name', 'quantity', 'unitPriceCents', 'taxRateBasisPoints', 'discountCents', 'netCents', 'taxCents', 'totalCents', 'availableStock'],
  properties: {
    sku: { type: 'string' }, productNumber: { type: ['integer', 'null'] }, name: { type: ['string', 'null'] }, quantity: { type: 'integer' },
    unitPriceCents: { type: 'integer' }, taxRateBasisPoints: { type: 'integer', description: 'The destination\'s rate for the product\'s taxClass, else the product\'s own' },
    discountCents: { type: 'integer' }, netCents: { type: 'integer' }, taxCents: { type: 'integer' }, totalCents: { type: 'integer' },
    availableStock: { type: 'integer', description: '0 for a product archived since it was added' },
  },
};

export const cartResponse = {
  type: 'object',
  required: ['id', 'status', 'currency', 'customerRef', 'email', 'items', 'shippingAddress', 'shippingOption', 'couponCode', 'subtotalCents',
    'discountCents', 'shippingCents', 'taxCents', 'totalCents', 'order', 'expiresAt', 'createdAt', 'updatedAt'],
  properties: {
    id: { type: 'string', format: 'uuid' }, status: { type: 'string', enum: ['open', 'completed', 'expired'] },
    currency: { type: 'string' }, customerRef: { type: ['string', 'null'] }, email: { type: ['string', 'null'] },
    items: { type: 'array', items: cartLine, description: 'Sorted by sku' },
    shippingAddress: { anyOf: [address, { type: 'null' }] },
    shippingOption: {
      anyOf: [{
        type: 'object', required: ['id', 'name', 'priceCents', 'taxCents'],
        properties: { id: { type: 'string', format: 'uuid' }, name: { type: 'string' }, priceCents: { type: 'integer', description: 'The option\'s price' }, taxCents: { type: 'integer', description: 'Tax of what is charged' } },
      }, { type: 'null' }],
    },
    couponCode: { type: ['string', 'null'] },
    subtotalCents: { type: 'integer' }, discountCents: { type: 'integer' },
    shippingCents: { type: 'integer', description: 'What is charged for shipping (0 when free)' },
    taxCents: { type: 'integer', description: 'Lines\' and shipping\'s tax' }, totalCents: { type: 'integer' },
    order: {
      description: 'The order of a completed cart (null while the cart is open)',
      anyOf: [{
        type: 'object', required: ['id', 'number', 'status', 'paymentStatus', 'clientSecret'],
        properties: {
          id: { type: 'string', format: 'uuid' }, number: { type: 'integer' }, status: { type: 'string' }, paymentStatus: { type: 'string' },
          clientSecret: { type: ['string', 'null'], description: 'The PaymentIntent\'s client secret while the order is pending_payment' },
        },
      }, { type: 'null' }],
    },
    expiresAt: { type: 'string', format: 'date-time' }, createdAt: { type: 'string', format: 'date-time' }, updatedAt: { type: 'string', format: 'date-time' },
  },
};

const createdCart = { ...cartResponse, required: [...cartResponse.required, 'token'], properties: { ...cartResponse.properties, token: { type: 'string', description: 'The cart\'s secret, shown only here: send it as X-Cart-Token' } } };

/**
 * Not required in the document's sense: a request without the token is well formed, and answers as one with a wrong
 * token does, 404 not_found (CONTRACT 15.2: one answer, so a cart's existence is not revealed).
 */
const cartToken = [{
  name: 'X-Cart-Token', required: false, schema: { type: 'string', maxLength: 200 },
  description: 'The token of POST /carts; every call on the cart sends it. Without it, or with a wrong one, the cart answers 404 not_found',
}];

const createBody = {
  type: 'object', additionalProperties: false,
  properties: {
    currency: { type: 'string', pattern: '^[A-Z]{3}$', default: 'EUR' }, customerRef: CUSTOMER_REF, email: EMAIL,
    items: { type: 'array', maxItems: MAX_LINES, items: { type: 'object', additionalProperties: false, required: ['sku', 'quantity'], properties: { sku: SKU, quantity: QUANTITY } } },
  },
} as const;

const checkoutBody = {
  type: 'object', additionalProperties: false, required: ['paymentMethod'],
  properties: {
    paymentMethod: { type: 'string', enum: ['stripe_card', 'bank_transfer', 'cash_on_delivery'] },
    email: EMAIL, clientId: { type: 'integer', minimum: 1, maximum: 2147483647, description: 'Default 1' },
    expectedTotalCents: { type: 'integer', minimum: 0, description: 'The total the shopper saw: another total answers 409 price_changed' },
  },
} as const;

const checkoutResponse = {
  type: 'object', required: ['order', 'payment'],
  properties: {
    order: recordResponse(orderDefinition),
    payment: {
      type: 'object', required: ['provider', 'status'],
      properties: {
        provider: { type: 'string', enum: ['manual', 'stripe'] }, method: { type: 'string' }, status: { type: 'string' },
        paymentIntentId: { type: 'string' }, clientSecret: { type: ['string', 'null'], description: 'For the storefront\'s Stripe.js: confirm the card payment with it' },
      },
    },
  },
};

/** The storefront's server-side carts (CONTRACT 15.2): no credentials; the cart's token is its key. */
export function cartsRoutes(router: PackRouter, pack: PackContext): void {
  const carts = pack.use('erp.carts');
  const tags = ['public'];
  // Without `erp` the storefront does not exist for the tenant: 404, not 403 (like the catalogue).
  const gate = { tags, auth: 'public', tenantParam: 'tenantId', module: 'erp', absentWithoutModule: 'No storefront' } as const;
  const cart = { ...gate, headers: cartToken, response: cartResponse } as const;
  const token = (ctx: AppContext) => ctx.get('X-Cart-Token') || undefined;
  const base = '/public/tenant/:tenantId/carts';
  const writeErrors = ['validation_failed', 'not_found', 'conflict'] as const;

  router.post(base, {
    summary: 'Create a cart: 201 with its secret token (each call makes a new cart; Idempotency-Key is ignored)',
    ...gate, status: 201, body: createBody, response: createdCart, errors: ['validation_failed', 'not_found', InsufficientStock],
  }, async (ctx) => carts.create(ctx.state.rc, ctx.state.body));

  router.get(`${base}/:cartId`, {
    summary: 'Read a cart, priced now from the live catalogue, tax regions and shipping options (X-Cart-Token)',
    ...cart, errors: ['not_found'],
  }, async (ctx) => carts.read(ctx.state.rc, ctx.params.cartId, token(ctx)));

  router.patch(`${base}/:cartId`, {
    summary: 'Set the cart\'s e-mail address or customerRef (a new customerRef records one cart.item_added per line)',
    ...cart, errors: [...writeErrors],
    body: { type: 'object', additionalProperties: false, minProperties: 1, properties: { email: { anyOf: [EMAIL, { type: 'null' }] }, customerRef: { anyOf: [CUSTOMER_REF, { type: 'null' }] } } },
  }, async (ctx) => carts.patch(ctx.state.rc, ctx.params.cartId, token(ctx), ctx.state.body));

  router.post(`${base}/:cartId/items`, {
    summary: 'Add units of a sku to the cart (to its line when it has one)', ...cart, errors: [...writeErrors, InsufficientStock],
    body: { type: 'object', additionalProperties: false, required: ['sku', 'quantity'], properties: { sku: SKU, quantity: QUANTITY } },
  }, async (ctx) => carts.addItem(ctx.state.rc, ctx.params.cartId, token(ctx), ctx.state.body));

  router.patch(`${base}/:cartId/items/:sku`, {
    summary: 'Set the quantity of a line of the cart (0 removes it)', ...cart, errors: [...writeErrors, InsufficientStock],
    body: { type: 'object', additionalProperties: false, required: ['quantity'], properties: { quantity: { type: 'integer', minimum: 0, maximum: MAX_QUANTITY } } },
  }, async (ctx) => carts.setQuantity(ctx.state.rc, ctx.params.cartId, token(ctx), ctx.params.sku, ctx.state.body.quantity));

  router.put(`${base}/:cartId/shipping-address`, {
    summary: 'Set the shipping address (a chosen option that does not ship to its country is dropped)', ...cart, errors: [...writeErrors], body: address,
  }, async (ctx) => carts.setAddress(ctx.state.rc, ctx.params.cartId, token(ctx), ctx.state.body));

  router.put(`${base}/:cartId/shipping-option`, {
    summary: 'Choose a shipping option of the cart\'s currency that ships to the address\'s country (else 400 at /id)', ...cart, errors: [...writeErrors],
    body: { type: 'object', additionalProperties: false, required: ['id'], properties: { id: { type: 'string', format: 'uuid' } } },
  }, async (ctx) => carts.setShippingOption(ctx.state.rc, ctx.params.cartId, token(ctx), ctx.state.body.id));

  router.put(`${base}/:cartId/coupon`, {
    summary: 'Put a coupon on the cart, checked against its customerRef (409 coupon_invalid; 404 without the crm module)', ...cart,
    errors: [...writeErrors, 'coupon_invalid'],
    body: { type: 'object', additionalProperties: false, required: ['code'], properties: { code: { type: 'string', minLength: 1, maxLength: 40 } } },
  }, async (ctx) => carts.setCoupon(ctx.state.rc, ctx.params.cartId, token(ctx), ctx.state.body.code));

  router.post(`${base}/:cartId/checkout`, {
    summary: 'Check the cart out: one transaction prices it, takes the stock, redeems the coupon, places the order and completes the cart (Idempotency-Key honoured)',
    description: '400 validation_failed naming what is missing (items, email, shipping address or option), 409 price_changed when expectedTotalCents '
      + 'is not the cart\'s total, 409 insufficient_stock naming the sku, 409 coupon_invalid, 409 conflict for a completed or expired cart.',
    // Not 'in-transaction': Stripe is called after the order commits, never inside a transaction.
    ...gate, headers: cartToken, status: 201, idempotent: true, body: checkoutBody, response: checkoutResponse,
    errors: [...writeErrors, PriceChanged, InsufficientStock, 'coupon_invalid', 'idempotency_key_reused', 'upstream_failed'],
  }, async (ctx) => carts.checkout(ctx.state.rc, ctx.params.cartId, token(ctx), ctx.state.body));

  router.delete(`${base}/:cartId/coupon`, {
    summary: 'Take the coupon off the cart', ...cart, errors: [...writeErrors],
  }, async (ctx) => carts.removeCoupon(ctx.state.rc, ctx.params.cartId, token(ctx)));
}
