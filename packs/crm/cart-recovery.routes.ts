import { OFFSET_QUERY, pageResponse } from '../../core/pack-api.js';
import type { JsonSchema, PackContext, PackRouter } from '../../core/pack-api.js';
import { RECOVERY_DEFAULTS, type RecoveryOptions } from './cart-recovery.service.js';

const recoveryBody: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    olderThanMinutes: { type: 'integer', minimum: 0, maximum: 525600, default: 60, description: 'A cart is abandoned when its last cart event is older than this' },
    maxAgeDays: { type: 'integer', minimum: 1, maximum: 365, default: 7, description: '... and younger than this' },
    dryRun: { type: 'boolean', default: false, description: 'List what a run would recover; write nothing, make no coupon' },
    coupon: {
      type: 'object',
      additionalProperties: false,
      properties: {
        percentOff: { type: 'integer', minimum: 1, maximum: 100, default: 10 },
        expiresInDays: { type: 'integer', minimum: 1, maximum: 365, default: 7 },
      },
    },
    use_ai: { type: 'boolean', default: false, description: 'The message written by the configured LLM ("ai": "unavailable" without one)' },
  },
};

const item: JsonSchema = { type: 'object', properties: { sku: { type: 'string' }, quantity: { type: 'integer' } } };
const coupon: JsonSchema = {
  type: ['object', 'null'],
  properties: { code: { type: 'string', pattern: '^[ABCDEFGHJKLMNPQRSTUVWXYZ23456789]{12}$' }, percentOff: { type: 'integer' }, expiresAt: { type: 'string', format: 'date-time' } },
};
const recoveryResponse: JsonSchema = {
  type: 'object',
  properties: {
    recovered: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          customerRef: { type: 'string' }, items: { type: 'array', items: item }, lastActivityAt: { type: 'string', format: 'date-time' }, coupon,
          recommendations: {
            type: 'array',
            items: { type: 'object', properties: { sku: { type: 'string' }, name: { type: 'string' }, reason: { type: 'string', enum: ['bought_together', 'best_seller'] } } },
          },
          message: { type: 'string' },
        },
      },
    },
    skipped: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          customerRef: { type: 'string' },
          reason: { type: 'string', enum: ['ordered', 'empty', 'bot', 'too_old', 'not_old_enough', 'already_recovered'] },
        },
      },
    },
    ai: { type: 'string', enum: ['off', 'used', 'unavailable', 'failed'] },
  },
};

const couponsResponse = pageResponse({
  type: 'object',
  properties: {
    code: { type: 'string' }, customerRef: { type: 'string' }, percentOff: { type: 'integer' }, expiresAt: { type: 'string', format: 'date-time' },
    redeemedAt: { type: ['string', 'null'], format: 'date-time' }, orderId: { type: ['string', 'null'] },
  },
});

/** Abandoned-cart recovery and its coupons (admin: a run makes coupons). */
export function cartRecoveryRoutes(router: PackRouter, pack: PackContext): void {
  const tags = ['crm'];

  router.post('/crm/recover-abandoned-carts', {
    summary: 'Recover abandoned carts: a coupon, recommendations and a message per cart, crm.cart.abandoned for each (idempotent per cart)',
    tags, auth: 'tenant', role: 'admin', body: recoveryBody, response: recoveryResponse,
    errors: ['validation_failed', 'module_disabled', 'forbidden', 'unauthenticated', 'tenant_required'],
  }, async (ctx) => {
    const body = ctx.state.body as { olderThanMinutes?: number; maxAgeDays?: number; dryRun?: boolean; coupon?: Partial<RecoveryOptions['coupon']>; use_ai?: boolean };
    const options: RecoveryOptions = {
      olderThanMinutes: body.olderThanMinutes ?? RECOVERY_DEFAULTS.olderThanMinutes,
      maxAgeDays: body.maxAgeDays ?? RECOVERY_DEFAULTS.maxAgeDays,
      dryRun: body.dryRun ?? false,
      coupon: { ...RECOVERY_DEFAULTS.coupon, ...body.coupon },
      useAi: body.use_ai ?? false,
    };
    return pack.use('crm.cartRecovery').run(ctx.state.rc, options);
  });

  router.get('/crm/coupons', {
    summary: 'List coupons, newest first (customerRef, limit, offset)',
    tags, auth: 'tenant', role: 'admin', response: couponsResponse,
    query: {
      type: 'object',
      properties: {
        customerRef: { type: 'string', minLength: 1, maxLength: 128 },
        limit: { type: 'integer', minimum: 1, maximum: 200, default: 50 },
        offset: OFFSET_QUERY,
      },
    },
    errors: ['validation_failed', 'module_disabled', 'forbidden', 'unauthenticated', 'tenant_required'],
  }, async (ctx) => {
    const q = ctx.state.query as { customerRef?: string; limit: number; offset: number };
    const page = await pack.use('crm.coupons').list(ctx.state.rc, q.customerRef, q);
    return { items: page.items, pagination: { limit: q.limit, offset: q.offset, total: null, hasMore: page.hasMore, nextCursor: null } };
  });
}
