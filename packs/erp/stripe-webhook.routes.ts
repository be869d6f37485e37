import type { PackContext, PackRouter } from '../../core/pack-api.js';
import { InvalidSignature } from './erp.errors.js';

/** The largest webhook body read (Stripe's events are far smaller). */
const MAX_BYTES = 1024 * 1024;

/**
 * Stripe's webhook per tenant (CONTRACT 15.3): no credentials, not rate-limited, and served while the `erp`
 * module is off (existing card orders still settle). The raw body is what Stripe signed.
 */
export function stripeWebhookRoutes(router: PackRouter, pack: PackContext): void {
  const webhook = pack.use('erp.stripeWebhook');
  router.post('/public/payments/stripe/:tenantId/webhook', {
    summary: 'Stripe\'s webhook of a tenant: payment_intent.succeeded, .payment_failed and .canceled settle the order of the PaymentIntent; charge.refunded, refund.updated and refund.failed settle a pending refund',
    description: 'Signed with the tenant\'s webhookSecret (Stripe-Signature, 300 s tolerance): else 400 invalid_signature. Each event id is handled once.',
    tags: ['public'], auth: 'public', tenantParam: 'tenantId', module: null, body: 'raw',
    response: { type: 'object', properties: { received: { type: 'boolean' } } }, errors: [InvalidSignature],
  }, async (ctx) => {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of ctx.req) {
      size += (chunk as Buffer).length;
      // Larger than any event Stripe sends: not Stripe's, so its signature cannot hold.
      if (size > MAX_BYTES) throw InvalidSignature(`A webhook body is at most ${MAX_BYTES} bytes`);
      chunks.push(chunk as Buffer);
    }
    return webhook.receive(ctx.state.rc, Buffer.concat(chunks), ctx.get('Stripe-Signature') || undefined);
  });
}
