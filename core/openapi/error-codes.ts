import * as catalogue from '../http/errors.js';
import type { RouteSpec } from '../http/route.js';

/** Status of every code in the error catalogue (core/http/errors.ts), read from its factories. */
const STATUS_OF_CODE = new Map<string, number>(
  (Object.values(catalogue) as unknown[])
    .filter((value): value is { code: string; status: number } =>
      typeof value === 'function' && typeof (value as { code?: unknown }).code === 'string' && typeof (value as { status?: unknown }).status === 'number')
    .map((factory) => [factory.code, factory.status]),
);

/** Codes raised outside the catalogue by kernel modules (e.g. the list query's keyset cursor). */
const EXTRA_CODES: Record<string, number> = { invalid_cursor: 400, bad_request: 400 };

/** The status a contract error code is answered with; 400 for a code the catalogue does not know. */
export function statusOfCode(code: string): number {
  return STATUS_OF_CODE.get(code) ?? EXTRA_CODES[code] ?? 400;
}

/**
 * Every error code a route may answer with: its declared `errors` plus what the pipeline around the
 * handler raises for its auth level, tenant, role, module, body and query.
 */
export function routeErrorCodes(spec: RouteSpec, hasBody: boolean, hasModule: boolean): string[] {
  const codes = new Set<string>(spec.errors ?? []);
  if (spec.auth !== 'public') codes.add('unauthenticated').add('invalid_token');
  if (spec.auth === 'superadmin') codes.add('superadmin_required');
  const tenantScoped = spec.auth === 'tenant' || (spec.auth === 'superadmin' && spec.tenantParam);
  if (tenantScoped) {
    codes.add('tenant_not_found');
    if (spec.auth === 'tenant') codes.add('forbidden');
    if (!spec.tenantParam) codes.add('tenant_required');
  }
  if (spec.auth === 'public' && spec.tenantParam) codes.add('tenant_not_found');
  if (hasModule && (tenantScoped || spec.tenantParam)) codes.add('module_disabled');
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
