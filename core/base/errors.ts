/**
 * The error catalogue: every contract error code is declared once here. Code throws typed errors;
 * core/http/error-handler.ts renders them in the envelope of the route family.
 */

export interface ErrorDetail {
  path: string;
  message: string;
  /** The record a detail is about (schema_incompatible, conflict over references, a release's items). */
  id?: string;
  /** A release's item (CONTRACT.md 17.3): its schema, and why it cannot be published or rolled back. */
  namespace?: string;
  schema?: string;
  code?: string;
  /** price_changed: the current price in cents. */
  expected?: number;
  /** insufficient_stock: the product short of stock, and how much of it there is. */
  sku?: string;
  available?: number;
}

export class AppError extends Error {
  constructor(
    readonly code: string,
    readonly status: number,
    message: string,
    readonly details: ErrorDetail[] = [],
    readonly headers: Record<string, string> = {},
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'AppError';
  }
}

export interface ErrorFactory<P, C extends string = string> {
  (params: P, details?: ErrorDetail[], headers?: Record<string, string>): AppError;
  readonly code: C;
  readonly status: number;
}

/** The status of every code declared with defineError (the catalogue's and the packs' own). */
const STATUS_OF_CODE = new Map<string, number>();

/**
 * Declares an error code with its HTTP status and message. The catalogue below is the kernel's; a pack
 * declares its own codes the same way (`defineError('out_of_stock', 409, (sku: string) => ...)`) and lists
 * the factory in a route's `errors`. The message's parameter type is the factory's.
 */
export function defineError<P = void, const C extends string = string>(code: C, status: number, message: (params: P) => string): ErrorFactory<P, C> {
  const known = STATUS_OF_CODE.get(code);
  if (known !== undefined && known !== status) throw new Error(`defineError: "${code}" is declared with ${known} and ${status}`);
  STATUS_OF_CODE.set(code, status);
  const factory = (params: P, details: ErrorDetail[] = [], headers: Record<string, string> = {}) =>
    new AppError(code, status, message(params), details, headers);
  return Object.assign(factory, { code, status });
}

/** The status a declared error code is answered with, or undefined for a code nobody declared. */
export function statusOfDeclaredCode(code: string): number | undefined {
  return STATUS_OF_CODE.get(code);
}

// 400
export const ValidationFailed = defineError('validation_failed', 400, (m: string | void) => m || 'The request failed validation');
export const InvalidJson = defineError('invalid_json', 400, (m: string | void) => m || 'The request body is not valid JSON');
export const InvalidIdentifier = defineError(
  'invalid_identifier', 400,
  ({ name, value }: { name: string; value: string }) => `Invalid ${name} "${value.slice(0, 60)}": it must match ^[a-z][a-z0-9_]{0,39}$`,
);
export const InvalidFilter = defineError('invalid_filter', 400, (m: string) => m);
export const InvalidCursor = defineError('invalid_cursor', 400, (m: string) => m);
export const InvalidSchema = defineError('invalid_schema', 400, (m: string | void) => m || 'The JSON Schema is invalid');
export const MissingHeader = defineError('missing_header', 400, (h: string) => `The header ${h} is required`);
export const TenantRequired = defineError('tenant_required', 400, () => 'No tenant: the token has no tenant claim and no X-Tenant-Id was given');
export const UrlNotAllowed = defineError('url_not_allowed', 400, (m: string | void) => m || 'The URL points at an address that may not be fetched');
export const InvalidKeySegment = defineError('invalid_key_segment', 400, (s: string) => `Invalid storage key segment "${s.slice(0, 60)}"`);
export const BadRequest = defineError('bad_request', 400, (m: string) => m);
// 401
export const Unauthenticated = defineError('unauthenticated', 401, () => 'Authentication is required');
export const InvalidToken = defineError('invalid_token', 401, (m: string | void) => m || 'The access token is invalid');
// 402
// 403
export const Forbidden = defineError('forbidden', 403, (m: string | void) => m || 'You are not allowed to do this');
export const SuperadminRequired = defineError('superadmin_required', 403, () => 'Only a platform superadmin may do this');
export const ModuleDisabled = defineError('module_disabled', 403, (m: string) => `The module "${m}" is disabled for this tenant`);
export const ReservedNamespace = defineError('reserved_namespace', 403, (ns: string) => `The namespace "${ns}" is reserved`);
// 404
export const NotFound = defineError('not_found', 404, (m: string | void) => m || 'Not found');
export const SchemaNotFound = defineError('schema_not_found', 404, ({ ns, name }: { ns: string; name: string }) => `No schema ${ns}.${name}`);
export const TenantNotFound = defineError('tenant_not_found', 404, (id: string) => `No tenant "${id}"`);
// 405
export const MethodNotAllowed = defineError('method_not_allowed', 405, (m: string) => `Method ${m} is not allowed here`);
// 408
export const RequestTimeout = defineError('request_timeout', 408, () => 'The request took too long to arrive');
// 409
export const Conflict = defineError('conflict', 409, (m: string | void) => m || 'The request conflicts with the current state');
export const SchemaExists = defineError('schema_exists', 409, ({ ns, name }: { ns: string; name: string }) => `The schema ${ns}.${name} exists already`);
export const SchemaIncompatible = defineError('schema_incompatible', 409, (m: string) => m);
export const CouponInvalid = defineError('coupon_invalid', 409, (reason: string) => `The coupon cannot be used: ${reason}`);
export const InvalidTransition = defineError('invalid_transition', 409, ({ from, to }: { from: string; to: string }) => `The status cannot go from ${from} to ${to}`);
// 412
export const VersionMismatch = defineError(
  'version_mismatch', 412, ({ expected, actual }: { expected: string; actual: number }) => `If-Match ${expected} does not match the current version "${actual}"`,
);
// 413
export const PayloadTooLarge = defineError('payload_too_large', 413, (limit: number) => `The body exceeds the limit of ${limit} bytes`);
// 415
export const UnsupportedMediaType = defineError('unsupported_media_type', 415, (m: string | void) => m || 'The body must be application/json');
// 416
export const RangeNotSatisfiable = defineError('range_not_satisfiable', 416, (size: number) => `The range is outside the ${size} bytes of the object`);
// 422
export const IdempotencyKeyReused = defineError('idempotency_key_reused', 422, () => 'This Idempotency-Key was used with another request body');
// 428
export const PreconditionRequired = defineError('precondition_required', 428, (what: string) => `${what} needs an If-Match header with the current version, e.g. If-Match: "3"`);
// 429
export const RateLimited = defineError('rate_limited', 429, (s: number) => `Too many requests; retry in ${s} s`);
// 431
export const HeadersTooLarge = defineError('headers_too_large', 431, () => 'The request headers are too large');
// 502
export const UpstreamFailed = defineError('upstream_failed', 502, (m: string) => m);
// 503
export const DatabaseUnavailable = defineError('unavailable', 503, (s: number) => `The database cannot be reached; retry in ${s} s`);
export const StorageUnavailable = defineError('unavailable', 503, (s: number) => `The storage cannot be reached; retry in ${s} s`);
export const NotReady = defineError('not_ready', 503, (m: string | void) => m || 'The service is not ready');
export const Unavailable = defineError('unavailable', 503, (m: string | void) => m || 'The service is unavailable; retry shortly');
// 500
export const Internal = defineError('internal', 500, () => 'Internal server error');
