/**
 * What is left to ship of an order's lines, from its parcels and restocked refunds: a pure function of the order
 * document, shared by the service (fulfilments, 11.2's PATCH to fulfilled) and the console's order page.
 */

interface Units { sku: string; quantity: number }

/** The parts of an order this needs. */
export interface OrderUnits {
  items: Units[];
  fulfillments?: { items: Units[]; createdAt: string }[] | null;
  refunds?: { items: Units[]; restock: boolean; status: string; createdAt: string }[] | null;
}

/**
 * Units of a line left to ship: its quantity less the shipped ones, less the units refunded with restock that were
 * not shipped when they were refunded. In time order, a restocked unit is a returned parcel's first (up to what was
 * shipped and not yet returned); the rest are cancelled from shipping for good, so a later parcel does not turn them
 * into returns and ask for them again.
 */
export function leftToShip(order: OrderUnits, sku: string): number {
  const line = order.items.find((i) => i.sku === sku);
  if (!line) return 0;
  const unitsOf = (items: Units[]) => items.filter((i) => i.sku === sku).reduce((s, i) => s + i.quantity, 0);
  const steps = [
    ...(order.fulfillments ?? []).map((f) => ({ at: Date.parse(f.createdAt), shipped: unitsOf(f.items), restocked: 0 })),
    ...(order.refunds ?? []).filter((r) => r.restock && r.status !== 'failed')
      .map((r) => ({ at: Date.parse(r.createdAt), shipped: 0, restocked: unitsOf(r.items) })),
  ].sort((a, b) => a.at - b.at || b.shipped - a.shipped);
  let outstanding = 0;
  let shipped = 0;
  let dropped = 0;
  for (const step of steps) {
    shipped += step.shipped;
    outstanding += step.shipped;
    const returned = Math.min(step.restocked, outstanding);
    outstanding -= returned;
    dropped += step.restocked - returned;
  }
  return Math.max(0, line.quantity - shipped - dropped);
}

