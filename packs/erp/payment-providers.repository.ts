import type { PackContext, RequestContext } from '../../core/pack-api.js';

type Database = PackContext['db'];

/** A provider's row: the secrets sealed, their masked hints beside them. */
export interface ProviderRow {
  provider: string;
  enabled: boolean;
  secretKey: string;
  webhookSecret: string;
  secretKeyHint: string;
  webhookSecretHint: string;
  publishableKey: string | null;
  updatedAt: string;
}

interface Row {
  provider: string;
  enabled: boolean | number;
  secret_key: string;
  webhook_secret: string;
  secret_key_hint: string;
  webhook_secret_hint: string;
  publishable_key: string | null;
  updated_at: string;
}

const COLUMNS = 'provider, enabled, secret_key, webhook_secret, secret_key_hint, webhook_secret_hint, publishable_key, updated_at';

/** SQL of erp_payment_providers (migrations/0541-erp-payment-providers.ts). */
export class PaymentProvidersRepository {
  constructor(private readonly db: Database) {}

  async find(rc: RequestContext, provider: string): Promise<ProviderRow | null> {
    const rows = await this.db.sql(rc).rows<Row>(`SELECT ${COLUMNS} FROM erp_payment_providers WHERE tenant_id = ? AND provider = ?`, [rc.tenantId, provider]);
    return rows[0] ? toProvider(rows[0]) : null;
  }

  /** Stores the provider's keys, enabled (one upsert: concurrent writes never fail on the key). */
  async put(rc: RequestContext, row: ProviderRow): Promise<ProviderRow> {
    const rows = await this.db.sql(rc).rows<Row>(
      `INSERT INTO erp_payment_providers (tenant_id, ${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) `
      + 'ON CONFLICT (tenant_id, provider) DO UPDATE SET enabled = excluded.enabled, secret_key = excluded.secret_key, '
      + 'webhook_secret = excluded.webhook_secret, secret_key_hint = excluded.secret_key_hint, webhook_secret_hint = excluded.webhook_secret_hint, '
      + `publishable_key = excluded.publishable_key, updated_at = excluded.updated_at RETURNING ${COLUMNS}`,
      [rc.tenantId, row.provider, row.enabled, row.secretKey, row.webhookSecret, row.secretKeyHint, row.webhookSecretHint, row.publishableKey, row.updatedAt]);
    return toProvider(rows[0]);
  }

  /** Disables the provider, keeping its keys; null when the tenant has none. */
  async disable(rc: RequestContext, provider: string, now: string): Promise<ProviderRow | null> {
    const rows = await this.db.sql(rc).rows<Row>(
      `UPDATE erp_payment_providers SET enabled = ?, updated_at = ? WHERE tenant_id = ? AND provider = ? RETURNING ${COLUMNS}`,
      [false, now, rc.tenantId, provider]);
    return rows[0] ? toProvider(rows[0]) : null;
  }
}

function toProvider(r: Row): ProviderRow {
  return {
    provider: r.provider, enabled: r.enabled === true || r.enabled === 1, secretKey: r.secret_key, webhookSecret: r.webhook_secret,
    secretKeyHint: r.secret_key_hint, webhookSecretHint: r.webhook_secret_hint, publishableKey: r.publishable_key, updatedAt: r.updated_at,
  };
}
