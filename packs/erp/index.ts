import { definePack } from '../../core/pack-api.js';
import { draftInvoiceForWonDeal } from './deal-won-invoice.subscriber.js';
import { invoiceDelete, invoiceWrite } from './invoice-write.hook.js';
import { invoicesRoutes } from './invoices.routes.js';

/**
 * ERP: invoices. A closed namespace; invoices are records (`erp.invoice`) written through
 * /data/erp/invoice, whose hooks compute totals and guard the status. Subscribes to CRM deal events by
 * name (it imports nothing from the crm pack): a won deal gets one draft invoice.
 */
export default definePack({
  name: 'erp',
  description: 'Enterprise resource planning: invoices',
  licensed: 'erp',
  namespaces: [{ name: 'erp', open: false, schemas: ['invoice'] }],
  hooks: {
    'erp.invoice.create': invoiceWrite,
    'erp.invoice.update': invoiceWrite,
    'erp.invoice.delete': invoiceDelete,
  },
  on: {
    'crm.deal.created': draftInvoiceForWonDeal,
    'crm.deal.updated': draftInvoiceForWonDeal,
  },
  routes(router, pack) {
    invoicesRoutes(router, pack);
  },
});
