/** A customer's cart as its events make it (CONTRACT 11.4), before the time rules are applied. */

export interface CartEventRow {
  id: string;
  eventType: string;
  eventData: Record<string, unknown>;
  occurredAt: string;
  bot: boolean;
}

export type DerivedCart =
  /** No cart events since the last checkout.completed: the customer is not listed. */
  | { kind: 'none' }
  | { kind: 'ordered'; lastEvent: CartEventRow }
  | { kind: 'empty'; lastEvent: CartEventRow }
  | { kind: 'cart'; lastEvent: CartEventRow; items: Array<{ sku: string; quantity: number }>; bot: boolean };

export const CART_EVENT_TYPES = ['cart.item_added', 'cart.item_removed'] as const;
export const CHECKOUT_COMPLETED = 'checkout.completed';

/**
 * `events` are one customer's cart and checkout.completed events in time order; `lastOrderAt` is the createdAt
 * of its latest order that is not cancelled. The cart events are those since the last checkout.completed; an
 * order placed after the last of them makes the cart `ordered`; else the cart is the net of the cart events
 * after the last order (nothing left: `empty`). `bot` when any of those events came from a bot.
 */
export function deriveCart(events: CartEventRow[], lastOrderAt: string | null): DerivedCart {
  let start = 0;
  for (let i = events.length - 1; i >= 0; i--) {
    if (events[i].eventType === CHECKOUT_COMPLETED) { start = i + 1; break; }
  }
  const cartEvents = events.slice(start).filter((e) => e.eventType !== CHECKOUT_COMPLETED);
  if (!cartEvents.length) return { kind: 'none' };
  const lastEvent = cartEvents[cartEvents.length - 1];
  if (lastOrderAt !== null && lastOrderAt > lastEvent.occurredAt) return { kind: 'ordered', lastEvent };

  const lines = new Map<string, number>();
  let bot = false;
  for (const e of cartEvents) {
    if (lastOrderAt !== null && e.occurredAt <= lastOrderAt) continue;
    bot ||= e.bot;
    const sku = String(e.eventData.sku);
    const quantity = typeof e.eventData.quantity === 'number' ? e.eventData.quantity : null;
    if (e.eventType === 'cart.item_added') lines.set(sku, (lines.get(sku) ?? 0) + (quantity ?? 1));
    else if (quantity === null) lines.delete(sku);
    else lines.set(sku, Math.max(0, (lines.get(sku) ?? 0) - quantity));
  }
  const items = [...lines].filter(([, q]) => q > 0).map(([sku, quantity]) => ({ sku, quantity })).sort((a, b) => (a.sku < b.sku ? -1 : a.sku > b.sku ? 1 : 0));
  if (!items.length) return { kind: 'empty', lastEvent };
  return { kind: 'cart', lastEvent, items, bot };
}
