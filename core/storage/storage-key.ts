import { InvalidKeySegment } from '../base/errors.js';

/** One key segment (tenant, product, collection, filename): CONTRACT.md section 8. */
export const KEY_SEGMENT = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

export interface KeyParts {
  tenant: string;
  product: string;
  collection: string;
  filename: string;
}

/** Throws 400 invalid_key_segment unless the segment is safe. `..` can never pass the pattern. */
export function assertSegment(segment: string): string {
  if (typeof segment !== 'string' || !KEY_SEGMENT.test(segment) || segment === '..' || segment === '.') {
    throw InvalidKeySegment(String(segment));
  }
  return segment;
}

/** `tenants/{tenant}/products/{product}/{collection}/{filename}`, every segment checked. */
export function buildKey(parts: KeyParts): string {
  const { tenant, product, collection, filename } = parts;
  for (const s of [tenant, product, collection, filename]) assertSegment(s);
  return `tenants/${tenant}/products/${product}/${collection}/${filename}`;
}

/** Splits a key given by a caller; any other shape or a bad segment is 400 invalid_key_segment. */
export function parseKey(key: string): KeyParts {
  const parts = typeof key === 'string' ? key.split('/') : [];
  if (parts.length !== 6 || parts[0] !== 'tenants' || parts[2] !== 'products') {
    throw InvalidKeySegment(String(key));
  }
  const [, tenant, , product, collection, filename] = parts;
  buildKey({ tenant, product, collection, filename });
  return { tenant, product, collection, filename };
}

/** Like parseKey, but answers null instead of throwing (public paths: anything odd is a 404). */
export function tryParseKey(key: string): KeyParts | null {
  try {
    return parseKey(key);
  } catch {
    return null;
  }
}

const SEGMENT_SOURCE = KEY_SEGMENT.source.slice(1, -1);
/** A key segment as a route's query schema: the OpenAPI document gives the pattern, a value that fails it answers 400 invalid_key_segment. */
export const KEY_SEGMENT_SCHEMA = { type: 'string', pattern: KEY_SEGMENT.source, 'x-error': 'invalid_key_segment' } as const;
/** A whole key as a route's query schema: `tenants/{tenant}/products/{product}/{collection}/{filename}`. */
export const KEY_SCHEMA = {
  type: 'string', pattern: `^tenants/${SEGMENT_SOURCE}/products/${SEGMENT_SOURCE}/${SEGMENT_SOURCE}/${SEGMENT_SOURCE}$`, 'x-error': 'invalid_key_segment',
} as const;
