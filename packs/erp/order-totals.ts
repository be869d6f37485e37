import { ValidationFailed } from '../../core/pack-api.js';
import { lineTaxCents } from './invoice-totals.js';

export interface OrderLineInput {
  quantity: number;
  unitPriceCents: number;
  taxRateBasisPoints: number;
}

export interface OrderLineAmounts {
  discountCents: number;
  netCents: number;
  taxCents: number;
  totalCents: number;
}

export interface OrderTotals {
  subtotalCents: number;
  discountCents: number;
  taxCents: number;
  totalCents: number;
}

/**
 * One order line in integer cents: gross = unit price × quantity; the coupon's percentage off it rounded
 * half up (percentOff is taken to two decimals, as basis points); net = gross − discount; tax = net × rate
 * rounded half up (the invoices' rule, invoice-totals.ts); total = net + tax.
 */
export function orderLine(line: OrderLineInput, percentOff = 0): OrderLineAmounts {
  const gross = BigInt(line.quantity) * BigInt(line.unitPriceCents);
  const offBasisPoints = BigInt(Math.round(Math.min(Math.max(percentOff, 0), 100) * 100));
  const discount = (gross * offBasisPoints + 5_000n) / 10_000n;
  const net = gross - discount;
  const tax = lineTaxCents(net, BigInt(line.taxRateBasisPoints));
  return { discountCents: Number(discount), netCents: Number(net), taxCents: Number(tax), totalCents: Number(net + tax) };
}

/** The order's amounts: exact sums of its lines. A total beyond 2^53 cents is refused. */
export function orderTotals(lines: Array<OrderLineInput & OrderLineAmounts>): OrderTotals {
  let subtotal = 0n;
  let discount = 0n;
  let tax = 0n;
  let total = 0n;
  for (const l of lines) {
    subtotal += BigInt(l.quantity) * BigInt(l.unitPriceCents);
    discount += BigInt(l.discountCents);
    tax += BigInt(l.taxCents);
    total += BigInt(l.totalCents);
  }
  if (subtotal > BigInt(Number.MAX_SAFE_INTEGER) || total > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw ValidationFailed('The order total is too large', [{ path: '/items', message: `the total must not exceed ${Number.MAX_SAFE_INTEGER} cents` }]);
  }
  return { subtotalCents: Number(subtotal), discountCents: Number(discount), taxCents: Number(tax), totalCents: Number(total) };
}
