import type { PackContext, PackRouter } from '../../core/pack-api.js';
import { MAX_REPORT_DAYS } from './reports.service.js';

const day = { type: 'string', format: 'date', pattern: '^\\d{4}-\\d{2}-\\d{2}$' };

const salesQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    from: { ...day, description: 'The first day (YYYY-MM-DD, in the tenant\'s timezone); default 29 days before `to`' },
    to: { ...day, description: `The last day; default today (or 29 days after \`from\`); at most ${MAX_REPORT_DAYS} days in all` },
  },
};

/** `{ items: [...] }` of items with exactly these (required) properties. */
function itemsOf(properties: Record<string, unknown>) {
  const item = { type: 'object', required: Object.keys(properties), additionalProperties: false, properties };
  return { type: 'object', required: ['items'], properties: { items: { type: 'array', items: item } } };
}

const salesResponse = itemsOf({
  day: { type: 'string', format: 'date' },
  currency: { type: 'string', pattern: '^[A-Z]{3}$' },
  orders: { type: 'integer', minimum: 0, description: 'Orders placed that day that are not cancelled' },
  grossCents: { type: 'integer', minimum: 0, description: 'The sum of their totalCents', 'x-money': true },
  refundedCents: { type: 'integer', minimum: 0, description: 'What their succeeded refunds gave back', 'x-money': true },
  netCents: { type: 'integer', description: 'grossCents − refundedCents', 'x-money': true },
});

const lowStockQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    below: { type: 'integer', minimum: 1, maximum: 1000000000, default: 5, description: 'Products whose available stock is below this' },
    limit: { type: 'integer', minimum: 1, maximum: 200, default: 50 },
  },
};

const lowStockResponse = itemsOf({
  id: { type: 'string', format: 'uuid' }, number: { type: 'integer' }, sku: { type: 'string' }, name: { type: 'string' },
  availableStock: { type: 'integer', minimum: 0 },
});

/** /erp/reports: what a shop's dashboard shows (CONTRACT 15.5), for viewers. */
export function reportsRoutes(router: PackRouter, pack: PackContext): void {
  const reports = pack.use('erp.reports');
  const tags = ['erp'];

  router.get('/erp/reports/sales-by-day', {
    summary: 'Orders (not cancelled) and their gross, refunded and net amounts per day in the tenant\'s timezone and currency; every day listed',
    description: `One grouped query however many orders. Default the last 30 days; at most ${MAX_REPORT_DAYS}. Days come from the site config's `
      + '`timezone` (default UTC). A day without orders is listed with zeros in each currency of the period.',
    tags, auth: 'tenant', query: salesQuery, response: salesResponse, errors: ['validation_failed'],
  }, async (ctx) => ({ items: await reports.salesByDay(ctx.state.rc, ctx.state.query) }));

  router.get('/erp/reports/low-stock', {
    summary: 'Active products whose available stock is below `below` (default 5), the lowest first',
    tags, auth: 'tenant', query: lowStockQuery, response: lowStockResponse, errors: ['validation_failed'],
  }, async (ctx) => ({ items: await reports.lowStock(ctx.state.rc, ctx.state.query.below, ctx.state.query.limit) }));
}
