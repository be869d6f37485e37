import type { PackContext, PackRouter } from '../../core/pack-api.js';

const provider = {
  type: 'object',
  required: ['provider', 'enabled'],
  properties: {
    provider: { type: 'string', enum: ['stripe', 'bank_transfer', 'cash_on_delivery'] },
    enabled: { type: 'boolean' },
    secretKey: { type: ['string', 'null'], description: 'Masked: sk_…<last 4>' },
    webhookSecret: { type: ['string', 'null'], description: 'Masked: whsec_…<last 4>' },
    publishableKey: { type: ['string', 'null'] },
  },
};

const stripeBody = {
  type: 'object', additionalProperties: false, required: ['secretKey', 'webhookSecret'],
  properties: {
    secretKey: { type: 'string', pattern: '^(sk|rk)_[A-Za-z0-9_]{8,250}$', description: 'A secret (sk_) or restricted (rk_) key; stored encrypted, never shown whole' },
    webhookSecret: { type: 'string', pattern: '^whsec_[A-Za-z0-9_+/=]{8,250}$', description: 'The webhook endpoint\'s signing secret; stored encrypted, never shown whole' },
    publishableKey: { type: 'string', pattern: '^pk_[A-Za-z0-9_]{8,250}$' },
  },
} as const;

/** /erp/payment-providers (admin): Stripe's keys, write-only; the manual methods are always enabled. */
export function paymentProvidersRoutes(router: PackRouter, pack: PackContext): void {
  const providers = pack.use('erp.paymentProviders');
  const tags = ['erp'];

  router.get('/erp/payment-providers', {
    summary: 'The tenant\'s payment providers: stripe (enabled or not, keys masked) and the manual methods',
    tags, auth: 'tenant', role: 'admin', response: { type: 'object', properties: { items: { type: 'array', items: provider } } },
  }, async (ctx) => ({ items: await providers.list(ctx.state.rc) }));

  router.put('/erp/payment-providers/stripe', {
    summary: 'Connect Stripe (admin): secret key (sk_ or rk_), webhook secret (whsec_), publishable key; stored encrypted, answered masked. Stripe is not called',
    tags, auth: 'tenant', role: 'admin', body: stripeBody, response: provider, errors: ['validation_failed'],
  }, async (ctx) => pack.audit.within(ctx.state.rc, { action: 'payment_provider.updated', target: 'payment_provider/stripe' }, (rc) => providers.putStripe(rc, ctx.state.body)));

  router.delete('/erp/payment-providers/stripe', {
    summary: 'Stop new stripe_card checkouts (admin); the keys stay for the orders that use them',
    tags, auth: 'tenant', role: 'admin', response: provider, errors: ['not_found'],
  }, async (ctx) => providers.disableStripe(ctx.state.rc));
}
