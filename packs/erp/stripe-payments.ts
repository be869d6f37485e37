import Stripe from 'stripe';
import type { PackContext } from '../../core/pack-api.js';

/** What came of a refund at Stripe (see StripePayments.refund). */
export interface RefundOutcome {
  status: 'succeeded' | 'failed' | 'pending' | 'refused' | 'unanswered';
  /** Stripe's refund id, when Stripe answered with a refund. */
  providerReference: string | null;
}

/** A PaymentIntent as the checkout keeps and answers it. */
export interface PaymentIntentView {
  id: string;
  clientSecret: string | null;
  status: string;
}

/**
 * Stripe through the official package (CONTRACT 15.3): `payment_method_types: ["card"]`, a 10 s timeout and one
 * retry per call (at most two attempts, the package's own retry with the same idempotency key), sent to
 * STRIPE_API_BASE when the operator set one. Never called inside a database transaction.
 */
export class StripePayments {
  constructor(private readonly pack: PackContext) {}

  /** A client for a tenant's secret key. */
  private client(secretKey: string): Stripe {
    const base = this.pack.config.payments.stripeApiBase;
    return new Stripe(secretKey, {
      timeout: 10_000, maxNetworkRetries: 1, telemetry: false,
      ...(base ? { host: base.host, port: base.port, protocol: base.protocol } : {}),
    });
  }

  /** A webhook's event, its Stripe-Signature checked by the package with the webhook secret (throws when it does not hold). */
  verify(payload: Buffer, signature: string, webhookSecret: string, toleranceSeconds: number): Stripe.Event {
    // The package's static helper: no client is needed (making one per event cost 100-150 µs).
    return Stripe.webhooks.constructEvent(payload, signature, webhookSecret, toleranceSeconds);
  }

  /**
   * Refunds a payment in full or in part, the refund's id as Stripe's idempotency key (CONTRACT 15.4). What
   * came of it: Stripe's refund (`succeeded`, `failed`, or still `pending`), `refused` when Stripe answered
   * with an error, `unanswered` when no answer came (a timeout, a connection that failed: the refund may or may
   * not have been made, and a webhook tells later).
   */
  async refund(secretKey: string, refund: { orderId: string; refundId: string; paymentIntentId: string; amountCents: number }, tenantId: string): Promise<RefundOutcome> {
    try {
      const made = await this.client(secretKey).refunds.create({
        payment_intent: refund.paymentIntentId, amount: refund.amountCents, reason: 'requested_by_customer',
        metadata: { tenantId, orderId: refund.orderId, refundId: refund.refundId },
      }, { idempotencyKey: refund.refundId });
      const status = made.status === 'succeeded' ? 'succeeded' : made.status === 'failed' || made.status === 'canceled' ? 'failed' : 'pending';
      return { status, providerReference: made.id };
    } catch (err) {
      this.pack.logger.warn({ err, orderId: refund.orderId, refundId: refund.refundId }, 'a refund at Stripe did not succeed');
      const answered = err instanceof Stripe.errors.StripeError && typeof err.statusCode === 'number';
      return { status: answered ? 'refused' : 'unanswered', providerReference: null };
    }
  }

  /** Cancels a PaymentIntent (an order cancelled for want of its payment); Stripe's 4xx when it succeeded or was cancelled already. */
  async cancelIntent(secretKey: string, paymentIntentId: string): Promise<void> {
    await this.client(secretKey).paymentIntents.cancel(paymentIntentId, { cancellation_reason: 'abandoned' });
  }

  /** Creates the PaymentIntent of an order, the order's id as Stripe's idempotency key (a retry finds the same intent). */
  async createIntent(secretKey: string, order: { id: string; totalCents: number; currency: string }, tenantId: string): Promise<PaymentIntentView> {
    // `payment_method_types` (CONTRACT 15.3) is still taken by Stripe's API; this package's types name only its successor.
    const params: Stripe.PaymentIntentCreateParams & { payment_method_types: string[] } = {
      amount: order.totalCents, currency: order.currency.toLowerCase(), payment_method_types: ['card'],
      metadata: { tenantId, orderId: order.id },
    };
    const intent = await this.client(secretKey).paymentIntents.create(params, { idempotencyKey: order.id });
    return { id: intent.id, clientSecret: intent.client_secret, status: intent.status };
  }
}
