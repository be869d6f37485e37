import { definePack } from '../../core/pack-api.js';
import { erpServices } from './erp.services.js';
import { draftInvoiceForWonDeal } from './deal-won-invoice.subscriber.js';
import { invoiceDelete, invoiceWrite } from './invoice-write.hook.js';
import { invoicesRoutes } from './invoices.routes.js';
import { erpCommerceMigration } from './migrations/0500-erp-commerce.js';
import { erpCoPurchasesMigration } from './migrations/0510-erp-co-purchases.js';
import { erpCartsMigration } from './migrations/0540-erp-carts.js';
import { erpPaymentProvidersMigration } from './migrations/0541-erp-payment-providers.js';
import { erpStripeEventsMigration } from './migrations/0542-erp-stripe-events.js';
import { erpCartClientSecretMigration } from './migrations/0543-erp-cart-client-secret.js';
import { erpPaymentDeadlinesMigration } from './migrations/0544-erp-payment-deadlines.js';
import { stripeWebhookRoutes } from './stripe-webhook.routes.js';
import { paymentProvidersRoutes } from './payment-providers.routes.js';
import { cartsRoutes } from './carts.routes.js';
import { shippingOptionsRoutes } from './shipping-options.routes.js';
import { taxRegionsRoutes } from './tax-regions.routes.js';
import { ordersRoutes } from './orders.routes.js';
import { orderPartsRoutes } from './order-parts.routes.js';
import { productCreate, productUpdate } from './product-write.hook.js';
import { productsRoutes } from './products.routes.js';
import { storefrontRoutes } from './storefront.routes.js';
import { productTools } from './product.tools.js';
import { orderTools } from './order.tools.js';
import { reportsRoutes } from './reports.routes.js';

/**
 * ERP: invoices, products with a stock ledger, orders and the storefront catalogue. A closed namespace;
 * invoices and products are records whose hooks keep their rules on every write path (/data too); orders
 * are sealed: written only by this pack (/erp/orders), through the records service with its authority. Subscribes to CRM deal events by name (it imports nothing from the
 * crm pack): a won deal gets one draft invoice. Tax regions and shipping options are sealed records too
 * (written only through their routes); storefront carts live in tables of the pack's own and tell the CRM's
 * `crm.events` (optional) what changed in the cart of a known customer.
 */
export default definePack({
  name: 'erp',
  description: 'Enterprise resource planning: invoices, products, stock, orders',
  admin: 'admin/screens.ts',
  licensed: 'erp',
  migrations: [erpCommerceMigration, erpCoPurchasesMigration, erpCartsMigration, erpPaymentProvidersMigration, erpStripeEventsMigration, erpCartClientSecretMigration,
    erpPaymentDeadlinesMigration],
  provides: erpServices,
  requires: ['crm.coupons?', 'crm.events?', 'tenant-admin.siteProfile?'],
  events: ['erp.inventory.updated', 'erp.order.paid', 'erp.order.cancelled', 'erp.order.fulfilled', 'erp.order.refunded'],
  namespaces: [{ name: 'erp', open: false, schemas: ['invoice', 'product', 'order', 'tax_region', 'shipping_option'], sealed: ['order', 'tax_region', 'shipping_option'] }],
  hooks: {
    'erp.invoice.create': invoiceWrite,
    'erp.invoice.update': invoiceWrite,
    'erp.invoice.delete': invoiceDelete,
    'erp.product.create': productCreate,
    'erp.product.update': productUpdate,
  },
  on: {
    'crm.deal.created': draftInvoiceForWonDeal,
    'crm.deal.updated': draftInvoiceForWonDeal,
  },
  routes(router, pack) {
    invoicesRoutes(router, pack);
    productsRoutes(router, pack);
    ordersRoutes(router, pack);
    orderPartsRoutes(router, pack);
    storefrontRoutes(router, pack);
    taxRegionsRoutes(router, pack);
    shippingOptionsRoutes(router, pack);
    cartsRoutes(router, pack);
    paymentProvidersRoutes(router, pack);
    stripeWebhookRoutes(router, pack);
    reportsRoutes(router, pack);
  },
  tools: { ...productTools, ...orderTools },
  // Unpaid orders are cancelled by the service itself (CONTRACT 15.3, 15.6), in every process.
  start: (pack) => pack.use('erp.paymentTimeouts').start(),
  stop: (pack) => pack.use('erp.paymentTimeouts').stop(),
});
