import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * HMAC-SHA256 signatures for the local driver's URLs. The signed text names the purpose, the method,
 * the key, the expiry and every constraint, one per line, so that changing any of them breaks the
 * signature. The secret is SIGNING_SECRET.
 */
export class UrlSigner {
  constructor(private readonly secret: string) {
    if (!secret || secret.length < 16) throw new Error('UrlSigner needs a secret of at least 16 characters');
  }

  sign(method: 'GET' | 'PUT', key: string, expires: number, constraints: Record<string, string | number> = {}): string {
    return createHmac('sha256', this.secret).update(canonical(method, key, expires, constraints)).digest('base64url');
  }

  /** Whether the signature matches; expiry is checked by the caller so that it can say which failed. */
  verify(method: 'GET' | 'PUT', key: string, expires: number, constraints: Record<string, string | number>, signature: string): boolean {
    const expected = Buffer.from(this.sign(method, key, expires, constraints));
    const given = Buffer.from(String(signature));
    return expected.length === given.length && timingSafeEqual(expected, given);
  }
}

function canonical(method: string, key: string, expires: number, constraints: Record<string, string | number>): string {
  const lines = Object.keys(constraints).sort().map((name) => `${name}=${constraints[name]}`);
  return ['storage-local-v1', method, key, String(expires), ...lines].join('\n');
}
