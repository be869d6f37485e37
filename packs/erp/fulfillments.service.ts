import { Conflict, InvalidTransition, newId, nowIso, type PackContext, type RequestContext } from '../../core/pack-api.js';
import { fulfillmentStatusOf, leftToShip, orderUnits, type Fulfillment, type SkuUnits } from './order-parts.js';
import type { Order, OrdersService } from './orders.service.js';

export interface FulfillmentInput {
  items: SkuUnits[];
  carrier?: string;
  trackingNumber?: string;
  trackingUrl?: string;
}

/**
 * Fulfilments (CONTRACT 15.4): parcels of an order that is `paid`, or `placed` with cash on delivery, each
 * written into the order under its row lock, so that two parcels of the last units never both pass (the
 * second sees what the first shipped: 409 conflict). `fulfillmentStatus` follows; once every unit is shipped
 * the order is `fulfilled` and `erp.order.fulfilled` goes out, in the same transaction.
 */
export class FulfillmentsService {
  constructor(private readonly pack: PackContext, private readonly orders: OrdersService) {}

  async create(rc: RequestContext, ref: string, input: FulfillmentInput): Promise<{ fulfillment: Fulfillment; order: Order }> {
    const order = await this.orders.get(rc, ref);
    return this.ship(rc, order.id, (current) => orderUnits(current, input.items).map((u) => {
      const left = leftToShip(current, u.sku);
      if (u.quantity > left) {
        throw Conflict(`${left} units of ${u.sku} are left to ship`, [{ path: `/items/${u.index}/quantity`, message: `must be at most ${left}`, sku: u.sku, available: left }]);
      }
      return { sku: u.sku, quantity: u.quantity };
    }), input);
  }

  /** Ships every unit left in one fulfilment (11.2's PATCH to `fulfilled`); nothing left to ship: 409 invalid_transition. */
  async shipRest(rc: RequestContext, ref: string): Promise<Order> {
    const order = await this.orders.get(rc, ref);
    const shipped = await this.ship(rc, order.id, (current) => current.items.flatMap((i) => {
      const left = leftToShip(current, i.sku);
      return left > 0 ? [{ sku: i.sku, quantity: left }] : [];
    }), {});
    return shipped.order;
  }

  private async ship(rc: RequestContext, orderId: string, units: (current: Order) => SkuUnits[], details: Omit<FulfillmentInput, 'items'>): Promise<{ fulfillment: Fulfillment; order: Order }> {
    return this.pack.db.transaction(rc, async (rc) => {
      let fulfillment: Fulfillment | undefined;
      const order = await this.pack.records.modify(rc, 'erp', 'order', orderId, (current) => {
        checkShippable(current);
        const items = units(current);
        if (!items.length) throw InvalidTransition({ from: current.status, to: 'fulfilled' }, [{ path: '/status', message: 'nothing is left to ship' }]);
        fulfillment = {
          id: newId(), items, carrier: details.carrier ?? null, trackingNumber: details.trackingNumber ?? null, trackingUrl: details.trackingUrl ?? null, createdAt: nowIso(),
        };
        const next = { ...current, fulfillments: [...(current.fulfillments ?? []), fulfillment] };
        const fulfillmentStatus = fulfillmentStatusOf(next);
        return { fulfillments: next.fulfillments, fulfillmentStatus, ...(fulfillmentStatus === 'fulfilled' ? { status: 'fulfilled' } : {}) };
      });
      if (order.status === 'fulfilled') await this.orders.publish(rc, 'erp.order.fulfilled', order);
      return { fulfillment: fulfillment!, order };
    });
  }
}

/** An order ships when it is paid, or placed to be paid on delivery; else 409 invalid_transition. */
function checkShippable(order: Order): void {
  if (order.status === 'paid' || (order.status === 'placed' && order.paymentMethod === 'cash_on_delivery')) return;
  const why = order.status === 'placed' ? `a ${order.paymentMethod} order ships once it is paid` : `the order is ${order.status}`;
  throw InvalidTransition({ from: order.status, to: 'fulfilled' }, [{ path: '/status', message: why }]);
}
