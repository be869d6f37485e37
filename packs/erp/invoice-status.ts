import { Conflict } from '../../core/pack-api.js';

export type InvoiceStatus = 'draft' | 'issued' | 'paid' | 'void';

/** The allowed status transitions: draft → issued → paid, and draft | issued → void. */
export const TRANSITIONS: Record<InvoiceStatus, InvoiceStatus[]> = {
  draft: ['issued', 'void'],
  issued: ['paid', 'void'],
  paid: [],
  void: [],
};

/** A new invoice starts as a draft, or is issued at once. */
export const INITIAL_STATUSES: InvoiceStatus[] = ['draft', 'issued'];

/** What may not change once an invoice has left draft: everything that is printed on it. */
export const FROZEN_FIELDS = ['number', 'customerRef', 'currency', 'issueDate', 'lines', 'dealId'] as const;

/** Refuses (409 conflict) a status the invoice may not take from where it is, and changes to an issued invoice. */
export function checkTransition(data: Record<string, unknown>, previous: Record<string, unknown> | null): void {
  const next = data.status as InvoiceStatus;
  if (previous === null) {
    if (!INITIAL_STATUSES.includes(next)) {
      throw Conflict(`A new invoice starts as ${INITIAL_STATUSES.join(' or ')}, not ${next}`, [{ path: '/status', message: `must be ${INITIAL_STATUSES.join(' or ')}` }]);
    }
    return;
  }
  const from = previous.status as InvoiceStatus;
  if (from !== next && !TRANSITIONS[from].includes(next)) {
    const allowed = TRANSITIONS[from].length ? TRANSITIONS[from].join(' or ') : 'nothing (it is final)';
    throw Conflict(`An invoice cannot go from ${from} to ${next}`, [{ path: '/status', message: `from ${from} it may go to ${allowed}` }]);
  }
  if (from === 'draft') return;
  const changed = FROZEN_FIELDS.filter((f) => canonical(data[f]) !== canonical(previous[f]));
  if (changed.length) {
    throw Conflict(`Only a draft invoice can be changed; this one is ${from}`, changed.map((f) => ({ path: `/${f}`, message: 'may not change after the invoice left draft' })));
  }
}

/** JSON with object keys sorted: PostgreSQL jsonb does not keep the key order a client sent. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    (v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : 1))) : v));
}
