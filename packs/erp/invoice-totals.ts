import { type ErrorDetail, ValidationFailed } from '../../core/pack-api.js';

export interface InvoiceLine {
  description: string;
  quantity: number;
  unitPriceCents: number;
  taxRateBasisPoints: number;
}

export interface InvoiceTotals {
  subtotalCents: number;
  taxCents: number;
  totalCents: number;
}

export const TOTAL_FIELDS = ['subtotalCents', 'taxCents', 'totalCents'] as const;

/** The tax of one line in cents: net × basis points / 10 000, rounded half up (all values are ≥ 0). */
export function lineTaxCents(netCents: bigint, basisPoints: bigint): bigint {
  return (netCents * basisPoints + 5_000n) / 10_000n;
}

/**
 * The invoice totals in integer cents, per line: net = quantity × unitPriceCents, tax rounded half up
 * per line, then summed. BigInt keeps the products exact; a total beyond 2^53 is refused.
 */
export function computeTotals(lines: InvoiceLine[]): InvoiceTotals {
  let subtotal = 0n;
  let tax = 0n;
  for (const line of lines) {
    const net = BigInt(line.quantity) * BigInt(line.unitPriceCents);
    subtotal += net;
    tax += lineTaxCents(net, BigInt(line.taxRateBasisPoints));
  }
  const total = subtotal + tax;
  if (total > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw ValidationFailed('The invoice total is too large', [{ path: '/lines', message: `the total must not exceed ${Number.MAX_SAFE_INTEGER} cents` }]);
  }
  return { subtotalCents: Number(subtotal), taxCents: Number(tax), totalCents: Number(total) };
}

/**
 * Sets the computed totals on the document. A total the client sent (on update: one that differs from the
 * stored value, since a merge patch carries the stored totals along) must equal the computed one.
 */
export function applyTotals(data: Record<string, unknown>, previous: Record<string, unknown> | null): Record<string, unknown> {
  const totals = computeTotals((data.lines ?? []) as InvoiceLine[]);
  const issues: ErrorDetail[] = [];
  for (const field of TOTAL_FIELDS) {
    const sent = data[field];
    const clientSent = sent !== undefined && (previous === null || sent !== previous[field]);
    if (clientSent && sent !== totals[field]) {
      issues.push({ path: `/${field}`, message: `must be ${totals[field]} (computed from the lines) or left out` });
    }
  }
  if (issues.length) throw ValidationFailed('The invoice totals disagree with its lines', issues);
  return { ...data, ...totals };
}
