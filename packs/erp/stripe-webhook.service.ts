import type Stripe from 'stripe';
import { nowIso, type PackContext, type RequestContext } from '../../core/pack-api.js';
import { InvalidSignature } from './erp.errors.js';
import type { OrdersService, PendingRefund } from './orders.service.js';
import type { RefundsService } from './refunds.service.js';
import type { PaymentProvidersService } from './payment-providers.service.js';
import { StripeEventsRepository } from './stripe-events.repository.js';
import type { StripePayments } from './stripe-payments.js';

/** The events that settle a pending refund (CONTRACT 15.3, 15.4). */
const REFUND_EVENTS = new Set(['charge.refunded', 'refund.updated', 'refund.failed']);

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
    private readonly refunds: RefundsService,
  ) {
    this.events = new StripeEventsRepository(pack.db);
  }

  async receive(rc: RequestContext, payload: Buffer, signature: string | undefined): Promise<{ received: true }> {
    const keys = await this.providers.stripeKeys(rc);
    if (!keys || !signature) throw InvalidSignature('The Stripe-Signature does not hold');
    let event: Stripe.Event;
    try {
      event = this.stripe.verify(payload, signature, keys.webhookSecret, TOLERANCE_SECONDS);
    } catch {
      throw InvalidSignature('The Stripe-Signature does not hold');
    }
    const refund = await this.pack.db.transaction(rc, async (rc): Promise<PendingRefund | null> => {
      if (!(await this.events.claim(rc, event.id, event.type, nowIso()))) return null;
      if (REFUND_EVENTS.has(event.type)) await this.refunds.settleFromWebhook(rc, event.type, event.data.object as Stripe.Refund | Stripe.Charge);
      if (!event.type.startsWith('payment_intent.')) return null;
      const intent = event.data.object as Stripe.PaymentIntent;
      if (event.type === 'payment_intent.succeeded') return this.orders.cardPaid(rc, intent);
      const order = await this.orders.byPaymentIntent(rc, intent.id);
      if (!order) return null;
      if (event.type === 'payment_intent.canceled') await this.orders.cancelUnpaid(rc, order.id, 'payment_cancelled');
      else if (event.type === 'payment_intent.payment_failed') await this.orders.cardFailed(rc, order.id, intent.last_payment_error?.message ?? 'The payment failed');
      return null;
    });
    // Money kept for a cancelled order goes back at once, after the commit (the refund's id as Stripe's idempotency
    // key); when Stripe does not answer, the refund stays pending for the refund webhooks.
    if (refund) await this.refunds.makePending(rc, refund);
    return { received: true };
  }
}
