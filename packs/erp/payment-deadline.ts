import type { Config } from '../../core/pack-api.js';

const MINUTE_MS = 60_000;
const DAY_MS = 24 * 60 * MINUTE_MS;

/** What decides whether an unpaid order expires: its status and payment method as placed. */
export interface UnpaidOrder {
  status: string;
  paymentMethod: string;
  payments?: ReadonlyArray<unknown> | null;
}

/**
 * When an order placed at `placedAt` (ms) is cancelled for want of its payment (CONTRACT 15.3, 15.6): a card
 * order waiting for its payment (`pending_payment`) after PAYMENT_TIMEOUT_MINUTES, a bank transfer after
 * MANUAL_PAYMENT_TIMEOUT_DAYS; null for an order that never expires (cash on delivery, the other methods). The
 * deadline is fixed when the order is placed: a later change of the setting applies to later orders.
 */
export function paymentDueAt(payments: Config['payments'], order: UnpaidOrder, placedAt: number): string | null {
  if (order.status === 'pending_payment') return new Date(placedAt + payments.paymentTimeoutMinutes * MINUTE_MS).toISOString();
  if (order.status === 'placed' && order.paymentMethod === 'bank_transfer') return new Date(placedAt + payments.manualPaymentTimeoutDays * DAY_MS).toISOString();
  return null;
}

/**
 * Whether an order is still one the payment timeout cancels: waiting for its card payment, or a placed bank
 * transfer order of which nothing was paid (one paid in part is left to an admin, who can refund what came).
 */
export function stillUnpaid(order: UnpaidOrder): boolean {
  if (order.status === 'pending_payment') return true;
  return order.status === 'placed' && order.paymentMethod === 'bank_transfer' && !(order.payments ?? []).length;
}

/** The shortest of the two timeouts (ms): the sweep runs often enough to cancel within 30 s of a deadline. */
export function shortestTimeoutMs(payments: Config['payments']): number {
  return Math.min(payments.paymentTimeoutMinutes * MINUTE_MS, payments.manualPaymentTimeoutDays * DAY_MS);
}
