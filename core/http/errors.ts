/**
 * The error catalogue: every contract error code is declared once here. Code throws typed errors;
 * core/http/error-handler.ts renders them in the envelope of the route family.
 */

export interface ErrorDetail {
  path: string;
  message: string;
  /** The record a detail is about (schema_incompatible, conflict over references). */
  id?: string;
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

export interface ErrorFactory<P> {
  (params: P, details?: ErrorDetail[], headers?: Record<string, string>): AppError;
  readonly code: string;
  readonly status: number;
}

export function defineError<P = void>(code: string, status: number, message: (params: P) => string): ErrorFactory<P> {
  const factory = (params: P, details: ErrorDetail[] = [], headers: Record<string, string> = {}) =>
    new AppError(code, status, message(params), details, headers);
  return Object.assign(factory, { code, status });
}

// 400
export const ValidationFailed = defineError<string | void>('validation_failed', 400, (m) => m || 'The request failed validation');
export const InvalidJson = defineError<string | void>('invalid_json', 400, (m) => m || 'The request body is not valid JSON');
export const InvalidIdentifier = defineError<{ name: string; value: string }>(
  'invalid_identifier', 400,
  ({ name, value }) => `Invalid ${name} "${value.slice(0, 60)}": it must match ^[a-z][a-z0-9_]{0,39}$`,
);
export const InvalidFilter = defineError<string>('invalid_filter', 400, (m) => m);
export const InvalidSchema = defineError<string | void>('invalid_schema', 400, (m) => m || 'The JSON Schema is invalid');
export const MissingHeader = defineError<string>('missing_header', 400, (h) => `The header ${h} is required`);
export const TenantRequired = defineError('tenant_required', 400, () => 'No tenant: the token has no tenant claim and no X-Tenant-Id was given');
export const UrlNotAllowed = defineError<string | void>('url_not_allowed', 400, (m) => m || 'The URL points at an address that may not be fetched');
export const InvalidKeySegment = defineError<string>('invalid_key_segment', 400, (s) => `Invalid storage key segment "${s.slice(0, 60)}"`);
export const BadRequest = defineError<string>('bad_request', 400, (m) => m);
// 401
export const Unauthenticated = defineError('unauthenticated', 401, () => 'Authentication is required', );
export const InvalidToken = defineError<string | void>('invalid_token', 401, (m) => m || 'The access token is invalid');
// 402
export const FeatureRequired = defineError<string>('feature_required', 402, (f) => `This requires the "${f}" feature`);
// 403
export const Forbidden = defineError<string | void>('forbidden', 403, (m) => m || 'You are not allowed to do this');
export const SuperadminRequired = defineError('superadmin_required', 403, () => 'Only a platform superadmin may do this');
export const ModuleDisabled = defineError<string>('module_disabled', 403, (m) => `The module "${m}" is disabled for this tenant`);
export const ReservedNamespace = defineError<string>('reserved_namespace', 403, (ns) => `The namespace "${ns}" is reserved`);
// 404
export const NotFound = defineError<string | void>('not_found', 404, (m) => m || 'Not found');
export const SchemaNotFound = defineError<{ ns: string; name: string }>('schema_not_found', 404, ({ ns, name }) => `No schema ${ns}.${name}`);
export const TenantNotFound = defineError<string>('tenant_not_found', 404, (id) => `No tenant "${id}"`);
export const HostNotFound = defineError<string>('host_not_found', 404, (h) => `No tenant serves the host "${h}"`);
// 405
export const MethodNotAllowed = defineError<string>('method_not_allowed', 405, (m) => `Method ${m} is not allowed here`);
// 409
export const Conflict = defineError<string | void>('conflict', 409, (m) => m || 'The request conflicts with the current state');
export const SchemaExists = defineError<{ ns: string; name: string }>('schema_exists', 409, ({ ns, name }) => `The schema ${ns}.${name} exists already`);
export const DomainTaken = defineError<string>('domain_taken', 409, (d) => `The domain "${d}" is held by another tenant`);
export const SchemaIncompatible = defineError<string>('schema_incompatible', 409, (m) => m);
export const AlreadyMember = defineError<string>('already_member', 409, (e) => `${e} is a member or has a pending invitation already`);
export const InsufficientStock = defineError<string>('insufficient_stock', 409, (m) => m);
export const PriceChanged = defineError<string | void>('price_changed', 409, (m) => m || 'A price changed since the client read it');
export const CouponInvalid = defineError<string>('coupon_invalid', 409, (reason) => `The coupon cannot be used: ${reason}`);
export const InvalidTransition = defineError<{ from: string; to: string }>('invalid_transition', 409, ({ from, to }) => `The status cannot go from ${from} to ${to}`);
// 410
export const InvitationExpired = defineError<string>('invitation_expired', 410, (at) => `The invitation expired at ${at}`);
// 412
export const VersionMismatch = defineError<{ expected: string; actual: number }>(
  'version_mismatch', 412, ({ expected, actual }) => `If-Match ${expected} does not match the current version "${actual}"`,
);
// 428
export const PreconditionRequired = defineError<string>('precondition_required', 428, (what) => `${what} needs an If-Match header with the current version, e.g. If-Match: "3"`);
// 413
export const RequestTimeout = defineError('request_timeout', 408, () => 'The request took too long to arrive');
export const PayloadTooLarge = defineError<number>('payload_too_large', 413, (limit) => `The body exceeds the limit of ${limit} bytes`);
// 415
export const UnsupportedMediaType = defineError<string | void>('unsupported_media_type', 415, (m) => m || 'The body must be application/json');
// 416
export const RangeNotSatisfiable = defineError<number>('range_not_satisfiable', 416, (size) => `The range is outside the ${size} bytes of the object`);
// 422
export const IdempotencyKeyReused = defineError('idempotency_key_reused', 422, () => 'This Idempotency-Key was used with another request body');
// 429
export const HeadersTooLarge = defineError('headers_too_large', 431, () => 'The request headers are too large');
export const RateLimited = defineError<number>('rate_limited', 429, (s) => `Too many requests; retry in ${s} s`);
// 502
export const SmtpFailed = defineError<string>('smtp_failed', 502, (m) => `The SMTP server refused: ${m}`);
export const UpstreamFailed = defineError<string>('upstream_failed', 502, (m) => m);
// 503
export const DatabaseUnavailable = defineError<number>('unavailable', 503, (s) => `The database cannot be reached; retry in ${s} s`);
export const NotReady = defineError<string | void>('not_ready', 503, (m) => m || 'The service is not ready');
export const Unavailable = defineError<string | void>('unavailable', 503, (m) => m || 'The service is unavailable; retry shortly');
// 500
export const Internal = defineError('internal', 500, () => 'Internal server error');
