import type { PackContext, ServiceBuilder } from '../../core/pack-api.js';
import { Catalog } from './catalog.service.js';
import type { CouponRedeemer } from './coupon-redeemer.js';
import { OrdersService } from './orders.service.js';

declare module '../../core/pack-api.js' {
  interface PackServices {
    /** The product catalogue: products by number, UUID or sku, stock changes with their movements, the storefront view. */
    'erp.catalog': Catalog;
    /** Orders: placement, transitions, and what the CRM reads of them (last orders, the recommender over the co-purchase counts). */
    'erp.orders': OrdersService;
  }
}

/**
 * The coupon service of the CRM pack, when one is loaded (an optional requirement). Read by name through a
 * plain signature: its type is the CRM pack's to declare; order placement needs only `redeem`.
 */
function coupons(pack: PackContext): CouponRedeemer | undefined {
  const use = pack.use as unknown as (name: string) => CouponRedeemer | undefined;
  return use('crm.coupons?');
}

/** The services the ERP pack provides, built once per app. */
export const erpServices = {
  catalog: (pack) => new Catalog(pack),
  orders: (pack) => new OrdersService(pack, pack.use('erp.catalog'), () => coupons(pack)),
} satisfies Record<string, ServiceBuilder>;
