import { listQueryOf, type PackContext, type PackRouter, pageResponse, queryFromString, recordResponse } from '../../core/pack-api.js';
import invoiceDefinition from '../../schemas/erp/invoice.schema.json' with { type: 'json' };

const invoiceResponse = recordResponse(invoiceDefinition);

/** Invoices are listed here; they are created and changed through /data/erp/invoice (the same hooks apply). */
export function invoicesRoutes(router: PackRouter, pack: PackContext): void {
  router.get('/erp/invoices', {
    summary: 'List invoices (filter[status]=issued, filter[dueDate][lt]=2026-12-01, sort=-totalCents, …)',
    description: 'The data API query language. Invoices are created and changed through /data/erp/invoice.',
    tags: ['erp'], auth: 'tenant', query: listQueryOf(invoiceResponse), response: pageResponse(invoiceResponse),
    errors: ['validation_failed', 'module_disabled', 'invalid_filter', 'invalid_cursor', 'unauthenticated', 'tenant_required'],
  }, async (ctx) => pack.records.list(ctx.state.rc, 'erp', 'invoice', queryFromString(ctx.query)));
}
