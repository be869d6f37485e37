import { Conflict, ValidationFailed, type ErrorDetail } from '../../core/pack-api.js';
import type { Order } from './generated/order.js';
import { leftToShip } from './shared/order-units.js';

export { leftToShip };

/** A refund as the order keeps it (CONTRACT 15.4). */
export type Refund = NonNullable<Order['refunds']>[number];
/** A fulfilment (a parcel) as the order keeps it. */
export type Fulfillment = NonNullable<Order['fulfillments']>[number];
/** Units of one sku, as the bodies name them. */
export interface SkuUnits {
  sku: string;
  quantity: number;
}

/** What was paid: the sum of the order's payments. */
export function paidCents(order: Order): number {
  return (order.payments ?? []).reduce((sum, p) => sum + p.amountCents, 0);
}

/** What refunds hold of the payments: the succeeded ones and the pending ones (a failed refund holds nothing). */
export function heldByRefunds(order: Order): number {
  return (order.refunds ?? []).filter((r) => r.status !== 'failed').reduce((sum, r) => sum + r.amountCents, 0);
}

/** Money the shop keeps: what was paid less every refund that is not failed. */
export function keptCents(order: Order): number {
  return paidCents(order) - heldByRefunds(order);
}

/** The order's refunds that are still `pending` at the provider. */
export function pendingRefunds(order: Order): Refund[] {
  return (order.refunds ?? []).filter((r) => r.status === 'pending');
}

/** Units of `sku` in the order's refunds that match `which` (failed refunds never count). */
function refundedUnits(order: Order, sku: string, which: (r: Refund) => boolean): number {
  return (order.refunds ?? []).filter((r) => r.status !== 'failed' && which(r))
    .reduce((sum, r) => sum + r.items.filter((i) => i.sku === sku).reduce((s, i) => s + i.quantity, 0), 0);
}

/** Units of `sku` put back into stock by succeeded refunds (movements `return`). */
export function restockedUnits(order: Order, sku: string): number {
  return refundedUnits(order, sku, (r) => r.restock && r.status === 'succeeded');
}

/** Units of `sku` shipped by the order's fulfilments. */
export function shippedUnits(order: Order, sku: string): number {
  return (order.fulfillments ?? []).reduce((sum, f) => sum + f.items.filter((i) => i.sku === sku).reduce((s, i) => s + i.quantity, 0), 0);
}

/** `fulfilled` when no line has a unit left to ship, `partially_fulfilled` once anything shipped, else `unfulfilled`. */
export function fulfillmentStatusOf(order: Order): NonNullable<Order['fulfillmentStatus']> {
  if (order.items.every((i) => leftToShip(order, i.sku) === 0)) return 'fulfilled';
  return (order.fulfillments ?? []).length ? 'partially_fulfilled' : 'unfulfilled';
}

/** Merges units of the same sku (first mention's index kept) and names skus the order does not hold (400). */
export function orderUnits(order: Order, items: SkuUnits[]): Array<SkuUnits & { index: number }> {
  const merged = new Map<string, SkuUnits & { index: number }>();
  const issues: ErrorDetail[] = [];
  items.forEach((item, index) => {
    if (!order.items.some((i) => i.sku === item.sku)) issues.push({ path: `/items/${index}/sku`, message: 'the order has no line of this sku' });
    const seen = merged.get(item.sku);
    if (seen) seen.quantity += item.quantity;
    else merged.set(item.sku, { sku: item.sku, quantity: item.quantity, index });
  });
  if (issues.length) throw ValidationFailed('Some items name no line of the order', issues);
  return [...merged.values()];
}

/**
 * The refund items of `units` (CONTRACT 15.4): each line's units at round_half_up(totalCents × units ÷ quantity),
 * except that the line's last unrefunded units get what is left of its totalCents. A unit is refunded once:
 * more units than are left unrefunded answer 409 conflict naming the item.
 */
export function refundItems(order: Order, units: Array<SkuUnits & { index: number }>): Refund['items'] {
  return units.map((u) => {
    const line = order.items.find((i) => i.sku === u.sku)!;
    const before = (order.refunds ?? []).filter((r) => r.status !== 'failed').flatMap((r) => r.items.filter((i) => i.sku === u.sku));
    const unitsBefore = before.reduce((s, i) => s + i.quantity, 0);
    const left = line.quantity - unitsBefore;
    if (u.quantity > left) {
      throw Conflict(`${left} units of ${u.sku} are left unrefunded`, [{ path: `/items/${u.index}/quantity`, message: `must be at most ${left}`, sku: u.sku, available: left }]);
    }
    const amountCents = u.quantity === left
      ? line.totalCents - before.reduce((s, i) => s + i.amountCents, 0)
      : share(line.totalCents, u.quantity, line.quantity);
    return { sku: u.sku, quantity: u.quantity, amountCents };
  });
}

/**
 * The patch that settles a pending refund (`succeeded` with the provider's reference, counted in refundedCents,
 * paymentStatus following; or `failed`), or null when the refund is not pending (settled already, or unknown).
 */
export function settledRefund(order: Order, refundId: string, outcome: { status: 'succeeded' | 'failed'; providerReference: string | null }):
  { patch: Pick<Order, 'refunds' | 'refundedCents' | 'paymentStatus'>; refund: Refund } | null {
  const refunds = (order.refunds ?? []).map((r) => ({ ...r }));
  const mine = refunds.find((r) => r.id === refundId);
  if (!mine || mine.status !== 'pending') return null;
  mine.status = outcome.status;
  mine.providerReference = outcome.providerReference ?? mine.providerReference;
  if (outcome.status === 'failed') return { patch: { refunds }, refund: mine };
  return { patch: { refunds, ...refundedTotals(order, (order.refundedCents ?? 0) + mine.amountCents) }, refund: mine };
}

/** refundedCents and the paymentStatus that follows it: refunded once it reaches what was paid, else partially. */
export function refundedTotals(order: Order, refundedCents: number): Pick<Order, 'refundedCents' | 'paymentStatus'> {
  if (refundedCents === 0) return { refundedCents };
  return { refundedCents, paymentStatus: refundedCents >= paidCents(order) ? 'refunded' : 'partially_refunded' };
}

/** round_half_up(cents × units ÷ quantity) in integer arithmetic. */
function share(cents: number, units: number, quantity: number): number {
  return Number((2n * BigInt(cents) * BigInt(units) + BigInt(quantity)) / (2n * BigInt(quantity)));
}
