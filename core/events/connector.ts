/** A tenant's webhook subscription, as the API shows it (the secret is write-only: only `hasSecret`). */
export interface Connector {
  id: string;
  url: string;
  /** Exact event names and `prefix.*` patterns. */
  events: string[];
  /** Only events published with this product; null: every product. */
  product: string | null;
  active: boolean;
  description: string | null;
  hasSecret: boolean;
  /** Set when the platform turned the connector off (`gone`: the receiver answered 410). */
  disabledReason: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface ConnectorInput {
  url: string;
  events: string[];
  product?: string | null;
  active?: boolean;
  description?: string | null;
  /** Own signing secret; null removes it (SIGNING_SECRET is used). */
  secret?: string | null;
}

/** A connector row with its sealed secret, for the dispatcher only. */
export interface ConnectorRow extends Connector {
  sealedSecret: string | null;
}
