import type { PackContext, ServiceBuilder } from '../../core/pack-api.js';
import { Catalog } from './catalog.service.js';
import type { CartEventRecorder, CouponChecker } from './cart-services.js';
import { CartsService } from './carts.service.js';
import { CheckoutConfigCache } from './checkout-config.js';
import type { CouponRedeemer } from './coupon-redeemer.js';
import { FulfillmentsService } from './fulfillments.service.js';
import { OrdersService } from './orders.service.js';
import { RefundsService } from './refunds.service.js';
import { PaymentProvidersService } from './payment-providers.service.js';
import { PaymentTimeouts } from './payment-timeouts.service.js';
import { ReportsService } from './reports.service.js';
import { ShippingOptionsService } from './shipping-options.service.js';
import { StripePayments } from './stripe-payments.js';
import { StripeWebhookService } from './stripe-webhook.service.js';
import { TaxRegionsService } from './tax-regions.service.js';

declare module '../../core/pack-api.js' {
  interface PackServices {
    /** The product catalogue: products by number, UUID or sku, stock changes with their movements, the storefront view. */
    'erp.catalog': Catalog;
    /** Orders: placement, transitions, and what the CRM reads of them (last orders, the recommender over the co-purchase counts). */
    'erp.orders': OrdersService;
    /** Tax regions by destination country (`erp.tax_region`, sealed). */
    'erp.taxRegions': TaxRegionsService;
    /** Shipping options (`erp.shipping_option`, sealed) and the storefront's options of a destination. */
    'erp.shippingOptions': ShippingOptionsService;
    /** Storefront carts behind a secret token, priced at every read. */
    'erp.carts': CartsService;
    /** The tenants' tax regions and shipping options as cart reads use them, kept per tenant until a write. */
    'erp.checkoutConfig': CheckoutConfigCache;
    /** Payment providers per tenant: Stripe's keys sealed at rest and shown masked; the manual methods. */
    'erp.paymentProviders': PaymentProvidersService;
    /** Fulfilments of orders: parcels with tracking; the order fulfilled once every unit shipped. */
    'erp.fulfillments': FulfillmentsService;
    /** Refunds of orders (manual at once, card through Stripe) and the cancellation of a paid order. */
    'erp.refunds': RefundsService;
    /** Stripe's webhook: signed events claimed once, applied to their orders. */
    'erp.stripeWebhook': StripeWebhookService;
    /** The payment timeout: unpaid card and bank transfer orders cancelled by a periodic sweep, each by one process. */
    'erp.paymentTimeouts': PaymentTimeouts;
    /** The dashboards' reports: sales per day in the tenant's timezone, low stock. */
    'erp.reports': ReportsService;
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

/** The CRM's coupon service as a cart checks a code (optional, like `coupons` above). */
function couponChecker(pack: PackContext): CouponChecker | undefined {
  const use = pack.use as unknown as (name: string) => CouponChecker | undefined;
  return use('crm.coupons?');
}

/** The CRM's first-party events, where a cart with a customerRef records its line changes (optional). */
function cartEvents(pack: PackContext): CartEventRecorder | undefined {
  const use = pack.use as unknown as (name: string) => CartEventRecorder | undefined;
  return use('crm.events?');
}

/** The services the ERP pack provides, built once per app. */
export const erpServices = {
  catalog: (pack) => new Catalog(pack),
  orders: (pack) => new OrdersService(pack, pack.use('erp.catalog'), () => coupons(pack)),
  checkoutConfig: (pack) => new CheckoutConfigCache(pack),
  reports: (pack) => new ReportsService(pack),
  paymentProviders: (pack) => new PaymentProvidersService(pack),
  fulfillments: (pack) => new FulfillmentsService(pack, pack.use('erp.orders')),
  refunds: (pack) => new RefundsService(pack, pack.use('erp.orders'), pack.use('erp.paymentProviders'), new StripePayments(pack)),
  stripeWebhook: (pack) => new StripeWebhookService(pack, pack.use('erp.paymentProviders'), new StripePayments(pack), pack.use('erp.orders'), pack.use('erp.refunds')),
  taxRegions: (pack) => new TaxRegionsService(pack, pack.use('erp.checkoutConfig')),
  shippingOptions: (pack) => new ShippingOptionsService(pack, pack.use('erp.checkoutConfig')),
  carts: (pack) => new CartsService(pack, pack.use('erp.checkoutConfig'), pack.use('erp.shippingOptions'), pack.use('erp.orders'), pack.use('erp.paymentProviders'), new StripePayments(pack),
    () => couponChecker(pack), () => cartEvents(pack)),
  paymentTimeouts: (pack) => new PaymentTimeouts(pack, pack.use('erp.orders'), pack.use('erp.paymentProviders'), new StripePayments(pack)),
} satisfies Record<string, ServiceBuilder>;
