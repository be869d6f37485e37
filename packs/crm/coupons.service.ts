import { randomInt } from 'node:crypto';
import { CouponInvalid, nowIso } from '../../core/pack-api.js';
import type { PackContext, RequestContext } from '../../core/pack-api.js';
import { CouponsRepository, type Coupon } from './coupons.repository.js';

/** The unambiguous alphabet of coupon codes (no 0/O, 1/I). */
export const COUPON_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
export const COUPON_LENGTH = 12;

/** A code of 12 characters drawn with crypto.randomInt (uniform, unpredictable). */
export function couponCode(): string {
  let code = '';
  for (let i = 0; i < COUPON_LENGTH; i++) code += COUPON_ALPHABET[randomInt(COUPON_ALPHABET.length)];
  return code;
}

/**
 * Coupons of the cart recovery, provided as `crm.coupons`: ERP's order placement calls `redeem` inside its
 * transaction, and the database decides which of concurrent orders gets a code (one conditional UPDATE).
 */
export class CouponsService {
  readonly repository: CouponsRepository;

  constructor(db: PackContext['db']) {
    this.repository = new CouponsRepository(db);
  }

  /**
   * Stores a coupon bound to the customer under `code` (drawn with couponCode()), in rc's transaction. Of 32^12
   * codes a taken one is as good as impossible; should it happen, the transaction fails (409 conflict, the
   * unique key) rather than give a code twice.
   */
  async issue(rc: RequestContext, input: { code: string; customerRef: string; percentOff: number; expiresAt: string }): Promise<Coupon> {
    const coupon: Coupon = { ...input, redeemedAt: null, orderId: null };
    await this.repository.insert(rc, coupon, nowIso());
    return coupon;
  }

  /** Issues many coupons in the caller's transaction with one statement (the cart recovery's batch). */
  async issueMany(rc: RequestContext, inputs: Array<{ code: string; customerRef: string; percentOff: number; expiresAt: string }>): Promise<void> {
    await this.repository.insertMany(rc, inputs.map((input) => ({ ...input, redeemedAt: null, orderId: null })), nowIso());
  }

  /**
   * Redeems `code` for `orderId` of `customerRef`, in the caller's transaction (a rolled-back order leaves the
   * coupon unredeemed). Throws 409 coupon_invalid with the reason: unknown, another customer's, expired, redeemed.
   */
  async redeem(rc: RequestContext, input: { code: string; customerRef: string; orderId: string }): Promise<{ percentOff: number }> {
    const code = input.code.trim().toUpperCase();
    const percentOff = await this.repository.redeem(rc, code, input.customerRef, input.orderId, nowIso());
    if (percentOff !== null) return { percentOff };
    const coupon = await this.repository.find(rc, code);
    if (!coupon) throw CouponInvalid('no such coupon');
    if (coupon.customerRef !== input.customerRef) throw CouponInvalid('the coupon belongs to another customer');
    if (coupon.redeemedAt !== null) throw CouponInvalid('the coupon has been redeemed already');
    throw CouponInvalid(`the coupon expired at ${coupon.expiresAt}`);
  }

  /**
   * Frees the coupon an order redeemed, in the caller's transaction (the order's cancellation, CONTRACT 15.3):
   * `redeemedAt` and `orderId` back to null. An order without a coupon changes nothing.
   */
  async release(rc: RequestContext, input: { orderId: string }): Promise<void> {
    await this.repository.release(rc, input.orderId);
  }

  /**
   * Whether `code` could be redeemed now by `customerRef`, without redeeming it (a cart's coupon, CONTRACT
   * 15.2): its percentOff, or 409 coupon_invalid with the reason, as `redeem` would answer.
   */
  async check(rc: RequestContext, input: { code: string; customerRef: string }): Promise<{ code: string; percentOff: number }> {
    const code = input.code.trim().toUpperCase();
    const coupon = await this.repository.find(rc, code);
    if (!coupon) throw CouponInvalid('no such coupon');
    if (coupon.customerRef !== input.customerRef) throw CouponInvalid('the coupon belongs to another customer');
    if (coupon.redeemedAt !== null) throw CouponInvalid('the coupon has been redeemed already');
    if (coupon.expiresAt <= nowIso()) throw CouponInvalid(`the coupon expired at ${coupon.expiresAt}`);
    return { code, percentOff: coupon.percentOff };
  }

  list(rc: RequestContext, customerRef: string | undefined, page: { limit: number; offset: number }) {
    return this.repository.list(rc, customerRef, page);
  }
}
