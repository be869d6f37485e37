import { AppError, type EventHandler, type PackContext, systemContext } from '../../core/pack-api.js';
import { findInvoiceBy } from './invoice-unique.js';

type Deal = Record<string, unknown> & { id: string };

/** The draft invoice for a won deal: one line with the deal's value, no tax (to be edited before issuing). */
export function draftInvoiceFor(deal: Deal): Record<string, unknown> {
  return {
    number: `DEAL-${deal.id}`,
    customerRef: String(deal.contactEmail ?? deal.contactName ?? deal.title),
    currency: deal.currency ?? 'EUR',
    status: 'draft',
    dealId: deal.id,
    lines: [{ description: `Deal: ${String(deal.title)}`, quantity: 1, unitPriceCents: deal.valueCents ?? 0, taxRateBasisPoints: 0 }],
    notes: 'Created when the deal was won.',
  };
}

/**
 * `crm.deal.created|updated`: when a deal becomes `won` and the tenant has `erp` enabled, creates one draft
 * invoice for it. Events arrive at least once, so this is idempotent: a lookup by `dealId` in the write
 * transaction, and the unique index on `dealId` for a delivery racing this one (its conflict means done).
 * The event only triggers the check: the invoice is drafted from the stored deal, re-read in the transaction,
 * and only if it exists and is won (an event's payload is never trusted on its own).
 */
export const draftInvoiceForWonDeal: EventHandler = async (event, pack) => {
  const deal = event.payload.record as Deal | undefined;
  const previous = event.payload.previous as Record<string, unknown> | null | undefined;
  if (!event.tenantId || !deal || deal.stage !== 'won' || previous?.stage === 'won') return;
  if (!(await pack.tenants.isModuleEnabled(null, event.tenantId, 'erp'))) return;

  const rc = systemContext(event.tenantId, pack.logger);
  try {
    await pack.db.transaction(rc, async (rc) => {
      const stored = await pack.records.find(rc, 'crm', 'deal', deal.id);
      if (!stored || stored.stage !== 'won') return;
      if (await findInvoiceBy(pack, rc, 'dealId', deal.id)) return;
      const invoice = await pack.records.create(rc, 'erp', 'invoice', draftInvoiceFor(stored));
      pack.logger.info({ tenantId: event.tenantId, dealId: deal.id, invoiceId: invoice.id }, 'draft invoice created for a won deal');
    });
  } catch (err) {
    if (!isDuplicate(err, pack)) throw err;
    pack.logger.info({ tenantId: event.tenantId, dealId: deal.id, eventId: event.id }, 'the won deal has its invoice already');
  }
};

function isDuplicate(err: unknown, pack: PackContext): boolean {
  return (err instanceof AppError && err.code === 'conflict') || pack.db.dialect.isUniqueViolation(err);
}
