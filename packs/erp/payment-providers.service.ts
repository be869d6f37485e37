import { NotFound, nowIso } from '../../core/pack-api.js';
import type { PackContext, RequestContext } from '../../core/pack-api.js';
import { PaymentProvidersRepository, type ProviderRow } from './payment-providers.repository.js';

/** The manual methods: always enabled, nothing to configure. */
export const MANUAL_METHODS = ['bank_transfer', 'cash_on_delivery'] as const;

export interface StripeKeys {
  secretKey: string;
  webhookSecret: string;
  publishableKey?: string;
}

/** A provider as the API shows it: secrets masked, never whole. */
export interface ProviderView {
  provider: string;
  enabled: boolean;
  secretKey?: string | null;
  webhookSecret?: string | null;
  publishableKey?: string | null;
}

/** The sealing context of a secret: a sealed value cannot be opened as another tenant's or another field's. */
const context = (tenantId: string, field: string) => `erp-payment-provider:${tenantId}:stripe:${field}`;

/** `sk_…1234`: the kind of key (its prefix up to the first `_`) and its last 4 characters. */
export function mask(secret: string): string {
  return `${secret.slice(0, secret.indexOf('_') + 1)}…${secret.slice(-4)}`;
}

/**
 * Payment providers per tenant (CONTRACT 15.3, first part): Stripe's keys, sealed at rest with the kernel's
 * secret box and shown masked; the manual methods are always there. Stripe is not called here.
 */
export class PaymentProvidersService {
  private readonly repository: PaymentProvidersRepository;
  private readonly box: PackContext['secrets'];

  constructor(pack: PackContext) {
    this.repository = new PaymentProvidersRepository(pack.db);
    this.box = pack.secrets;
  }

  async putStripe(rc: RequestContext, keys: StripeKeys): Promise<ProviderView> {
    const tenantId = rc.tenantId!;
    const row = await this.repository.put(rc, {
      provider: 'stripe', enabled: true,
      secretKey: this.box.seal(keys.secretKey, context(tenantId, 'secretKey')),
      webhookSecret: this.box.seal(keys.webhookSecret, context(tenantId, 'webhookSecret')),
      secretKeyHint: mask(keys.secretKey), webhookSecretHint: mask(keys.webhookSecret),
      publishableKey: keys.publishableKey ?? null, updatedAt: nowIso(),
    });
    return view(row);
  }

  /** Stops new card checkouts through Stripe; the keys stay for the orders that use them. 404 when none are stored. */
  async disableStripe(rc: RequestContext): Promise<ProviderView> {
    const row = await this.repository.disable(rc, 'stripe', nowIso());
    if (!row) throw NotFound('Stripe is not configured for this tenant');
    return view(row);
  }

  /** Stripe (enabled or not) and the manual methods. */
  async list(rc: RequestContext): Promise<ProviderView[]> {
    const stripe = await this.repository.find(rc, 'stripe');
    return [
      stripe ? view(stripe) : { provider: 'stripe', enabled: false, secretKey: null, webhookSecret: null, publishableKey: null },
      ...MANUAL_METHODS.map((provider) => ({ provider, enabled: true })),
    ];
  }

  /** The tenant's Stripe keys opened (for the payment calls and webhook checks), or null when none are stored. */
  async stripeKeys(rc: RequestContext): Promise<(StripeKeys & { enabled: boolean }) | null> {
    const row = await this.repository.find(rc, 'stripe');
    if (!row) return null;
    return {
      enabled: row.enabled,
      secretKey: this.box.open(row.secretKey, context(rc.tenantId!, 'secretKey')),
      webhookSecret: this.box.open(row.webhookSecret, context(rc.tenantId!, 'webhookSecret')),
      publishableKey: row.publishableKey ?? undefined,
    };
  }
}

function view(row: ProviderRow): ProviderView {
  return { provider: row.provider, enabled: row.enabled, secretKey: row.secretKeyHint, webhookSecret: row.webhookSecretHint, publishableKey: row.publishableKey };
}
