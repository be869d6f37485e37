import { statusOfDeclaredCode } from '../base/errors.js';
import type { RouteSpec } from '../http/route.js';

/** Path parameters that name a namespace, schema or content type (see core/http/input-hygiene.ts). */
const IDENTIFIER_PARAM = /:(ns|schema|name|contentType)\b/;
/** Routes whose lists speak the data API's query language (filters, sort, fields, cursor). */
const LIST_PATHS = /\/(data\/:ns\/:schema|tenant\/:tenantId\/content\/:contentType|public\/tenant\/:tenantId\/content\/:contentType|cms\/pages|crm\/deals|erp\/invoices)$/;

/** The status an error code is answered with (the catalogue's and packs' defineError); 400 for an unknown code. */
export function statusOfCode(code: string): number {
  return statusOfDeclaredCode(code) ?? 400;
}

/**
 * Every error code a route may answer with: its declared `errors` plus what the pipeline around the
 * handler raises for its auth level, tenant, role, module, body and query.
 */
export function routeErrorCodes(spec: RouteSpec, hasBody: boolean, hasModule: boolean, path = ''): string[] {
  const codes = new Set<string>((spec.errors ?? []).map((e) => (typeof e === 'string' ? e : e.code)));
  // Every path parameter and query value is checked for NUL and lone surrogates (core/http/input-hygiene.ts),
  // the ones naming a namespace, schema or content type answer invalid_identifier.
  codes.add('validation_failed');
  if (IDENTIFIER_PARAM.test(path) || spec.query && 'namespace' in ((spec.query as { properties?: object }).properties ?? {})) codes.add('invalid_identifier');
  if (LIST_PATHS.test(path)) codes.add('invalid_filter').add('invalid_cursor');
  if (path.startsWith('/api/v1/public/')) codes.add('rate_limited');
  // An Idempotency-Key reused with another body, or still in flight (core/http/idempotency.ts).
  if (spec.idempotent) codes.add('idempotency_key_reused').add('conflict');
  // Any request may find the database unreachable.
  codes.add('unavailable');
  if (spec.auth !== 'public') codes.add('unauthenticated').add('invalid_token');
  if (spec.auth === 'superadmin') codes.add('superadmin_required');
  const tenantScoped = spec.auth === 'tenant' || (spec.auth === 'superadmin' && spec.tenantParam);
  if (tenantScoped) {
    codes.add('tenant_not_found');
    if (spec.auth === 'tenant') codes.add('forbidden');
    if (!spec.tenantParam) codes.add('tenant_required');
  }
  if (spec.auth === 'public' && spec.tenantParam) codes.add('tenant_not_found');
  if (hasModule && (tenantScoped || spec.tenantParam)) codes.add(spec.absentWithoutModule === undefined ? 'module_disabled' : 'not_found');
  if (hasBody) codes.add('invalid_json').add('validation_failed').add('payload_too_large').add('unsupported_media_type');
  if (spec.query) codes.add('validation_failed');
  if (spec.idempotent) codes.add('idempotency_key_reused').add('conflict').add('validation_failed');
  codes.add('internal');
  return [...codes];
}

/** Codes grouped by status, statuses ascending. */
export function groupByStatus(codes: string[]): Array<[number, string[]]> {
  const groups = new Map<number, string[]>();
  for (const code of codes) {
    const status = statusOfCode(code);
    groups.set(status, [...(groups.get(status) ?? []), code]);
  }
  return [...groups.entries()].sort(([a], [b]) => a - b).map(([status, list]) => [status, list.sort()]);
}
