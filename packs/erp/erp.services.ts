import type { PackContext } from '../../core/kernel/pack-context.js';
import { Catalog } from './catalog.service.js';
import { OrdersService } from './orders.service.js';

export interface ErpServices {
  catalog: Catalog;
  orders: OrdersService;
}

const built = new WeakMap<PackContext, ErpServices>();

/** The pack's services, built once per app from its PackContext (routes and hooks share them). */
export function erpServices(pack: PackContext): ErpServices {
  const existing = built.get(pack);
  if (existing) return existing;
  const catalog = new Catalog(pack);
  // No coupon service yet: an order with a couponCode answers 409 coupon_invalid.
  const orders = new OrdersService(pack, catalog, () => undefined);
  const services = { catalog, orders };
  built.set(pack, services);
  return services;
}
