import type { PackContext, RequestContext } from '../../core/pack-api.js';

export interface Coupon {
  code: string;
  customerRef: string;
  percentOff: number;
  expiresAt: string;
  redeemedAt: string | null;
  orderId: string | null;
}

interface CouponRow {
  code: string;
  customer_ref: string;
  percent_off: number | string;
  expires_at: string;
  redeemed_at: string | null;
  order_id: string | null;
}

const COLUMNS = 'code, customer_ref, percent_off, expires_at, redeemed_at, order_id';

/** SQL of crm_coupons (packs/crm/migrations/0502-crm-cart-recovery.ts). */
export class CouponsRepository {
  constructor(private readonly db: PackContext['db']) {}

  /** Queues the coupon's insert in rc's transaction (it runs by the commit); a taken code fails the commit. */
  async insert(rc: RequestContext, coupon: Coupon, createdAt: string): Promise<void> {
    await this.db.insertAtCommit(rc, 'crm_coupons', {
      tenant_id: rc.tenantId, code: coupon.code, customer_ref: coupon.customerRef, percent_off: coupon.percentOff,
      expires_at: coupon.expiresAt, created_at: createdAt,
    });
  }

  /** Queues the coupons' insert in rc's transaction as one multi-row statement (the recovery's batch). */
  async insertMany(rc: RequestContext, coupons: Coupon[], createdAt: string): Promise<void> {
    if (!coupons.length) return;
    await this.db.writeAtCommit(rc, {
      table: 'crm_coupons',
      rows: coupons.map((c) => ({
        tenant_id: rc.tenantId, code: c.code, customer_ref: c.customerRef, percent_off: c.percentOff, expires_at: c.expiresAt, created_at: createdAt,
      })),
    });
  }

  /**
   * Redeems the coupon for an order in one conditional statement: only while it is unredeemed, unexpired and
   * bound to this customer. Returns its percentOff, or null when any condition fails (nothing changed).
   */
  async redeem(rc: RequestContext, code: string, customerRef: string, orderId: string, now: string): Promise<number | null> {
    const rows = await this.db.sql(rc).rows<{ percent_off: number | string }>(
      'UPDATE crm_coupons SET redeemed_at = ?, order_id = ? '
      + 'WHERE tenant_id = ? AND code = ? AND customer_ref = ? AND redeemed_at IS NULL AND expires_at > ? RETURNING percent_off',
      [now, orderId, rc.tenantId, code, customerRef, now]);
    return rows.length ? Number(rows[0].percent_off) : null;
  }

  /** Frees the coupon redeemed by an order (a cancelled one): unredeemed again, bound to no order. Returns whether one was. */
  async release(rc: RequestContext, orderId: string): Promise<boolean> {
    const rows = await this.db.sql(rc).rows<{ code: string }>(
      'UPDATE crm_coupons SET redeemed_at = NULL, order_id = NULL WHERE tenant_id = ? AND order_id = ? RETURNING code', [rc.tenantId, orderId]);
    return rows.length > 0;
  }

  async find(rc: RequestContext, code: string): Promise<Coupon | null> {
    const rows = await this.db.sql(rc).rows<CouponRow>(
      `SELECT ${COLUMNS} FROM crm_coupons WHERE tenant_id = ? AND code = ?`, [rc.tenantId, code]);
    return rows[0] ? toCoupon(rows[0]) : null;
  }

  /** Newest first. */
  async list(rc: RequestContext, customerRef: string | undefined, page: { limit: number; offset: number }): Promise<{ items: Coupon[]; hasMore: boolean }> {
    const where = customerRef === undefined ? 'tenant_id = ?' : 'tenant_id = ? AND customer_ref = ?';
    const bindings = customerRef === undefined ? [rc.tenantId] : [rc.tenantId, customerRef];
    const rows = await this.db.sql(rc).rows<CouponRow>(
      `SELECT ${COLUMNS} FROM crm_coupons WHERE ${where} ORDER BY created_at DESC, code LIMIT ? OFFSET ?`,
      [...bindings, page.limit + 1, page.offset]);
    return { items: rows.slice(0, page.limit).map(toCoupon), hasMore: rows.length > page.limit };
  }
}

function toCoupon(row: CouponRow): Coupon {
  return {
    code: row.code, customerRef: row.customer_ref, percentOff: Number(row.percent_off), expiresAt: row.expires_at,
    redeemedAt: row.redeemed_at, orderId: row.order_id,
  };
}
