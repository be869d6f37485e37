import { createPublicKey, type KeyObject } from 'node:crypto';

export interface JwksOptions {
  /** How long a fetched key set is trusted before it is fetched again (default 10 min). */
  maxAgeMs?: number;
  /** An unknown `kid` refetches the key set at most once per this interval (default 30 s). */
  refetchIntervalMs?: number;
  timeoutMs?: number;
  /** Clock, in milliseconds (injectable so the refetch rule can be checked without waiting). */
  now?: () => number;
}

interface Jwk {
  kid?: string;
  kty?: string;
  use?: string;
  alg?: string;
  [key: string]: unknown;
}

/**
 * The identity provider's signing keys from its JWKS URL (RSA and EC public keys), cached. An unknown key
 * id refetches the set at most once per `refetchIntervalMs`, so a flood of tokens with made-up `kid`s
 * cannot turn the service into a load generator against the identity provider.
 */
export class JwksKeySet {
  private keys = new Map<string, KeyObject>();
  private fetchedAt = Number.NEGATIVE_INFINITY;
  private inflight: Promise<void> | null = null;
  private readonly maxAgeMs: number;
  private readonly refetchIntervalMs: number;
  private readonly timeoutMs: number;
  private readonly now: () => number;

  constructor(private readonly uri: string, options: JwksOptions = {}) {
    this.maxAgeMs = options.maxAgeMs ?? 10 * 60_000;
    this.refetchIntervalMs = options.refetchIntervalMs ?? 30_000;
    this.timeoutMs = options.timeoutMs ?? 5_000;
    this.now = options.now ?? Date.now;
  }

  /** The public key for `kid`, or null when the identity provider does not publish it. */
  async get(kid: string): Promise<KeyObject | null> {
    const age = this.now() - this.fetchedAt;
    const known = this.keys.get(kid);
    if (known && age < this.maxAgeMs) return known;
    if (age >= this.refetchIntervalMs) {
      try {
        await this.refresh();
      } catch {
        // The identity provider is unreachable: keep serving the keys we have.
      }
    }
    return this.keys.get(kid) ?? null;
  }

  private refresh(): Promise<void> {
    this.inflight ??= this.fetchKeys().finally(() => {
      this.inflight = null;
    });
    return this.inflight;
  }

  private async fetchKeys(): Promise<void> {
    // Counted as a fetch even when it fails, so an unreachable provider is not hammered either.
    this.fetchedAt = this.now();
    const res = await fetch(this.uri, { signal: AbortSignal.timeout(this.timeoutMs), headers: { Accept: 'application/json' } });
    if (!res.ok) throw new Error(`JWKS answered ${res.status}`);
    const body = (await res.json()) as { keys?: Jwk[] };
    const keys = new Map<string, KeyObject>();
    for (const jwk of body.keys ?? []) {
      if (!jwk.kid || (jwk.kty !== 'RSA' && jwk.kty !== 'EC') || (jwk.use && jwk.use !== 'sig')) continue;
      try {
        keys.set(jwk.kid, createPublicKey({ key: jwk as any, format: 'jwk' }));
      } catch {
        // A key we cannot read is skipped.
      }
    }
    this.keys = keys;
  }
}
