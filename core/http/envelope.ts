import type { ErrorDetail } from '../base/errors.js';

/** Envelopes of CONTRACT.md section 1: the BFF envelope and JSend for /metadata and /data. */

/** The content type of every JSON envelope (what Koa's `ctx.type = 'json'` resolves to). */
export const JSON_TYPE = 'application/json; charset=utf-8';

export type RouteFamily = 'bff' | 'jsend';

export interface Pagination {
  limit: number;
  offset: number;
  total: number | null;
  /** Lists of the data API: whether `total` is the planner's estimate (count=estimated) rather than exact. */
  totalEstimated?: boolean;
  hasMore: boolean;
  nextCursor: string | null;
}

export interface Page<T> {
  items: T[];
  pagination: Pagination;
}

export function bffSuccess(data: unknown) {
  return { status: 'success', data, message: null, error: null };
}

export function bffError(code: string, message: string, details: ErrorDetail[]) {
  return { status: 'error', data: null, message, error: { code, details } };
}

export function jsendSuccess(data: unknown) {
  return { status: 'success', data };
}

export function jsendFail(code: string, message: string, errors: ErrorDetail[]) {
  return { status: 'fail', data: { code, message, errors } };
}

export function jsendError(code: string, message: string) {
  return { status: 'error', code, message };
}

export function successEnvelope(family: RouteFamily, data: unknown) {
  return family === 'jsend' ? jsendSuccess(data) : bffSuccess(data);
}

export function errorEnvelope(family: RouteFamily, status: number, code: string, message: string, details: ErrorDetail[]) {
  if (family === 'bff') return bffError(code, message, details);
  return status >= 500 ? jsendError(code, message) : jsendFail(code, message, details);
}

/** The family is decided by the path, so that even unmatched routes render the right envelope. */
export function familyOf(path: string): RouteFamily {
  return /^\/api\/v1\/(metadata|data)(\/|$)/.test(path) ? 'jsend' : 'bff';
}
