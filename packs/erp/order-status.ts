import { InvalidTransition } from '../../core/pack-api.js';

export type OrderStatus = 'pending_payment' | 'placed' | 'paid' | 'fulfilled' | 'cancelled';

/** placed → paid → fulfilled, placed | paid → cancelled, pending_payment → paid | cancelled; nothing else. */
export const ORDER_TRANSITIONS: Record<OrderStatus, OrderStatus[]> = {
  pending_payment: ['paid', 'cancelled'],
  placed: ['paid', 'cancelled'],
  paid: ['fulfilled', 'cancelled'],
  fulfilled: [],
  cancelled: [],
};

/** 409 invalid_transition unless the order may go from `from` to `to`. */
export function checkOrderTransition(from: OrderStatus, to: OrderStatus): void {
  if (!ORDER_TRANSITIONS[from].includes(to)) {
    const allowed = ORDER_TRANSITIONS[from].length ? ORDER_TRANSITIONS[from].join(' or ') : 'nothing (it is final)';
    throw InvalidTransition({ from, to }, [{ path: '/status', message: `from ${from} it may go to ${allowed}` }]);
  }
}
