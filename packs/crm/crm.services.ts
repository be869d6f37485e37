import type { PackContext, ServiceBuilder } from '../../core/pack-api.js';
import { CartRecoveryScheduler } from './cart-recovery.scheduler.js';
import { CartRecoveryService, type OrderHistory } from './cart-recovery.service.js';
import { CouponsService } from './coupons.service.js';
import { CustomerContactsService } from './customer-contacts.service.js';
import { CrmEventsService } from './events.service.js';
import { SupportTicketsService } from './support-tickets.service.js';

declare module '../../core/pack-api.js' {
  interface PackServices {
    /** First-party events: record (deduplicated by eventId), list, erase a customer's. */
    'crm.events': CrmEventsService;
    /** Support tickets (PQRS): open one (numbered, with its SLA date), move it along its status machine. */
    'crm.tickets': SupportTicketsService;
    /** Coupons of the cart recovery; ERP's order placement calls `redeem` inside its transaction. */
    'crm.coupons': CouponsService;
    /** Abandoned-cart recovery. */
    'crm.cartRecovery': CartRecoveryService;
    /** Customers' contact addresses, and the cart reminders mailed to them. */
    'crm.customers': CustomerContactsService;
    /** Its opt-in schedule (CART_RECOVERY_INTERVAL_MINUTES). */
    'crm.cartRecoveryScheduler': CartRecoveryScheduler;
  }
}

/** Without an order history (no ERP pack loaded): nobody has ordered, nothing is recommended, and there are no products. */
const NO_ORDERS: OrderHistory = {
  lastOrderTimes: async () => new Map(),
  recommender: async () => async () => new Map(),
  productSkus: async () => new Set(),
};

/** The ERP pack's orders, read when a recovery runs (an optional requirement: ERP's services are built lazily too). */
function orderHistory(pack: PackContext): () => OrderHistory {
  return () => pack.use('erp.orders?') ?? NO_ORDERS;
}

/** The CRM pack's services, built once per app. */
export const crmServices = {
  events: (pack) => new CrmEventsService(pack.db),
  tickets: (pack) => new SupportTicketsService(pack),
  coupons: (pack) => new CouponsService(pack.db),
  cartRecovery: (pack) => new CartRecoveryService(pack, pack.use('crm.coupons'), orderHistory(pack), pack.use('crm.customers')),
  cartRecoveryScheduler: (pack) => new CartRecoveryScheduler(pack),
  customers: (pack) => new CustomerContactsService(pack),
} satisfies Record<string, ServiceBuilder>;
