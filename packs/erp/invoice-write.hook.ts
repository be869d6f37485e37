import { Conflict, type FilterHook } from '../../core/pack-api.js';
import { applyTotals } from './invoice-totals.js';
import { checkTransition } from './invoice-status.js';
import { assertUniqueInvoice } from './invoice-unique.js';

/**
 * `erp.invoice.create|update`, inside the write transaction: checks the status transition (409), keeps
 * `number` and `dealId` unique per tenant (409), stamps `issueDate` when the invoice is issued, and
 * computes the totals in integer cents (400 when client-sent totals disagree).
 */
export const invoiceWrite: FilterHook = async ({ id, data, previous }, rc, pack) => {
  checkTransition(data, previous);
  for (const field of ['number', 'dealId'] as const) {
    if (previous === null || data[field] !== previous[field]) await assertUniqueInvoice(pack, rc, id, field, data[field]);
  }
  const issued = data.status === 'issued' && data.issueDate === undefined ? { issueDate: new Date().toISOString().slice(0, 10) } : {};
  return applyTotals({ ...data, ...issued }, previous);
};

/** `erp.invoice.delete`: only a draft may be deleted; an issued invoice is voided instead. */
export const invoiceDelete: FilterHook = ({ previous }) => {
  if (previous && previous.status !== 'draft') {
    throw Conflict(`Only a draft invoice can be deleted; this one is ${String(previous.status)} (void it instead)`);
  }
};
