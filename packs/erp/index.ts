import { definePack } from '../../core/pack-api.js';
import { erpServices } from './erp.services.js';
import { draftInvoiceForWonDeal } from './deal-won-invoice.subscriber.js';
import { invoiceDelete, invoiceWrite } from './invoice-write.hook.js';
import { invoicesRoutes } from './invoices.routes.js';
import { erpCommerceMigration } from './migrations/0500-erp-commerce.migration.js';
import { erpCoPurchasesMigration } from './migrations/0510-erp-co-purchases.migration.js';
import { ordersRoutes } from './orders.routes.js';
import { orderWriteRefused, productCreate, productUpdate } from './product-write.hook.js';
import { productsRoutes } from './products.routes.js';
import { storefrontRoutes } from './storefront.routes.js';
import { productTools } from './product.tools.js';

/**
 * ERP: invoices, products with a stock ledger, orders and the storefront catalogue. A closed namespace;
 * invoices and products are records whose hooks keep their rules on every write path (/data too); orders
 * are written only through /erp/orders. Subscribes to CRM deal events by name (it imports nothing from the
 * crm pack): a won deal gets one draft invoice.
 */
export default definePack({
  name: 'erp',
  description: 'Enterprise resource planning: invoices, products, stock, orders',
  admin: 'admin/screens.ts',
  licensed: 'erp',
  migrations: [erpCommerceMigration, erpCoPurchasesMigration],
  provides: erpServices,
  requires: ['crm.coupons?'],
  events: ['erp.inventory.updated'],
  namespaces: [{ name: 'erp', open: false, schemas: ['invoice', 'product', 'order'] }],
  hooks: {
    'erp.invoice.create': invoiceWrite,
    'erp.invoice.update': invoiceWrite,
    'erp.invoice.delete': invoiceDelete,
    'erp.product.create': productCreate,
    'erp.product.update': productUpdate,
    'erp.order.create': orderWriteRefused,
    'erp.order.update': orderWriteRefused,
    'erp.order.delete': orderWriteRefused,
  },
  on: {
    'crm.deal.created': draftInvoiceForWonDeal,
    'crm.deal.updated': draftInvoiceForWonDeal,
  },
  routes(router, pack) {
    invoicesRoutes(router, pack);
    productsRoutes(router, pack);
    ordersRoutes(router, pack);
    storefrontRoutes(router, pack);
  },
  tools: productTools,
});
