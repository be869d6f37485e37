import type { RequestContext } from '../../core/pack-api.js';

/**
 * The coupon service order placement calls inside its transaction (the CRM pack provides it as
 * `crm.coupons`). `redeem` marks the coupon used for this order by one conditional statement and answers
 * the percentage to take off each line's net, or throws 409 coupon_invalid with the reason in the message.
 */
export interface CouponRedeemer {
  redeem(rc: RequestContext, input: { code: string; customerRef: string; orderId: string }): Promise<{ percentOff: number }>;
  /** Frees the coupon the order redeemed (its cancellation), in the caller's transaction. */
  release(rc: RequestContext, input: { orderId: string }): Promise<void>;
}
