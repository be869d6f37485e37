import type Stripe from 'stripe';
import { nowIso, type PackContext, type RequestContext } from '../../core/pack-api.js';
import { InvalidSignature } from './erp.errors.js';
import type { Order, OrdersService, PendingRefund } from './orders.service.js';
import type { PaymentProvidersService } from './payment-providers.service.js';
import { StripeEventsRepository } from './stripe-events.repository.js';
import type { StripePayments } from './stripe-payments.js';

/** How old a signed webhook may be (seconds). */
const TOLERANCE_SECONDS = 300;

/**
 * Stripe's webhook of a tenant (CONTRACT 15.3): the signature is checked by the package with the tenant's
 * webhook secret (a bad or missing one, a stale timestamp or no keys: 400 invalid_signature, nothing changed);
 * the signed `data.object` is acted on as it is. Each event id is claimed in the transaction of its change, so
 * it counts as handled only once that commits. Events of unknown orders and other types change nothing.
 */
export class StripeWebhookService {
  private readonly events: StripeEventsRepository;

  constructor(
    private readonly pack: PackContext,
    private readonly providers: PaymentProvidersService,
    private readonly stripe: StripePayments,
    private readonly orders: OrdersService,
  ) {
    this.events = new StripeEventsRepository(pack.db);
  }

  async receive(rc: RequestContext, payload: Buffer, signature: string | undefined): Promise<{ received: true }> {
    const keys = await this.providers.stripeKeys(rc);
    if (!keys || !signature) throw InvalidSignature('The Stripe-Signature does not hold');
    let event: Stripe.Event;
    try {
      event = this.stripe.verify(keys.secretKey, payload, signature, keys.webhookSecret, TOLERANCE_SECONDS);
    } catch {
      throw InvalidSignature('The Stripe-Signature does not hold');
    }
    const refund = await this.pack.db.transaction(rc, async (rc): Promise<PendingRefund | null> => {
      if (!(await this.events.claim(rc, event.id, event.type, nowIso()))) return null;
      if (!event.type.startsWith('payment_intent.')) return null;
      const intent = event.data.object as Stripe.PaymentIntent;
      const order = await this.orderOf(rc, intent.id);
      if (!order) return null;
      if (event.type === 'payment_intent.succeeded') return this.orders.cardPaid(rc, order.id, intent);
      if (event.type === 'payment_intent.canceled') await this.orders.cancelUnpaid(rc, order.id, 'payment_cancelled');
      else if (event.type === 'payment_intent.payment_failed') await this.orders.cardFailed(rc, order.id, intent.last_payment_error?.message ?? 'The payment failed');
      return null;
    });
    // Money kept for a cancelled order goes back at once, after the commit (the refund's id as Stripe's idempotency key).
    if (refund) {
      try {
        const made = await this.stripe.refund(keys.secretKey, refund, rc.tenantId!);
        await this.orders.refundSucceeded(rc, refund, made.id);
      } catch (err) {
        this.pack.logger.warn({ err, orderId: refund.orderId, refundId: refund.refundId }, 'refunding a payment of a cancelled order failed: it stays pending');
      }
    }
    return { received: true };
  }

  /** The tenant's order of a PaymentIntent. */
  private async orderOf(rc: RequestContext, paymentIntentId: string): Promise<Order | null> {
    const page = await this.pack.records.list(rc, 'erp', 'order', { filter: [{ field: 'paymentIntentId', op: 'eq', value: paymentIntentId }], limit: 1, count: false });
    return (page.items[0] as Order | undefined) ?? null;
  }
}
