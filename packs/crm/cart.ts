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
 * of its latest order that is not cancelled; `isProduct` tells the tenant's product skus. The cart events are
 * those since the last checkout.completed, bot events left out (CONTRACT 13) unless every one of them is a
 * bot's (then the cart is made of them and is `bot`, so that it is listed as such). An order placed after the
 * last of them makes the cart `ordered`; else the cart is the net of the cart events after the last order,
 * skus that are not products left out (nothing left: `empty`).
 */
export function deriveCart(events: CartEventRow[], lastOrderAt: string | null, isProduct: (sku: string) => boolean): DerivedCart {
  let start = 0;
  for (let i = events.length - 1; i >= 0; i--) {
    if (events[i].eventType === CHECKOUT_COMPLETED) { start = i + 1; break; }
  }
  const allCartEvents = events.slice(start).filter((e) => e.eventType !== CHECKOUT_COMPLETED);
  if (!allCartEvents.length) return { kind: 'none' };
  const human = allCartEvents.filter((e) => !e.bot);
  const bot = !human.length;
  const cartEvents = bot ? allCartEvents : human;
  const lastEvent = cartEvents[cartEvents.length - 1];
  if (lastOrderAt !== null && lastOrderAt > lastEvent.occurredAt) return { kind: 'ordered', lastEvent };

  const lines = new Map<string, number>();
  for (const e of cartEvents) {
    if (lastOrderAt !== null && e.occurredAt <= lastOrderAt) continue;
    const sku = String(e.eventData.sku);
    const quantity = typeof e.eventData.quantity === 'number' ? e.eventData.quantity : null;
    if (e.eventType === 'cart.item_added') lines.set(sku, (lines.get(sku) ?? 0) + (quantity ?? 1));
    else if (quantity === null) lines.delete(sku);
    else lines.set(sku, Math.max(0, (lines.get(sku) ?? 0) - quantity));
  }
  const items = [...lines].filter(([sku, q]) => q > 0 && isProduct(sku)).map(([sku, quantity]) => ({ sku, quantity })).sort((a, b) => (a.sku < b.sku ? -1 : a.sku > b.sku ? 1 : 0));
  if (!items.length) return { kind: 'empty', lastEvent };
  return { kind: 'cart', lastEvent, items, bot };
}

/** The skus the cart events of `events` name (every customer of a batch), to ask which are products. */
export function cartSkus(events: Iterable<CartEventRow[]>): string[] {
  const skus = new Set<string>();
  for (const list of events) for (const e of list) if (e.eventType !== CHECKOUT_COMPLETED) skus.add(String(e.eventData.sku));
  return [...skus];
}
