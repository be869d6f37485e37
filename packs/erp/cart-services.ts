import type { RequestContext } from '../../core/pack-api.js';

/**
 * The CRM's coupon service as a cart reads it (`crm.coupons`, an optional requirement): whether a code could be
 * redeemed by the customer now, without redeeming it; 409 coupon_invalid with the reason otherwise.
 */
export interface CouponChecker {
  check(rc: RequestContext, input: { code: string; customerRef: string }): Promise<{ code: string; percentOff: number }>;
}

/**
 * The CRM's first-party events (`crm.events`, an optional requirement): a cart with a customerRef records
 * `cart.item_added` / `cart.item_removed` there (CONTRACT 11.3), outside any transaction.
 */
export interface CartEventRecorder {
  record(rc: RequestContext, input: { eventType: string; customerRef: string; eventData: Record<string, unknown> }, origin: { bot: boolean }): Promise<{ id: string; duplicate: boolean }>;
}
