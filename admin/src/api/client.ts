import { HttpError } from 'react-admin';
import { takeEarly } from './early.js';
import { session } from './session.js';

export const API = '/api/v1';

export interface Issue { path: string; message: string }

/** A failed call, with the contract's code and the failing paths (JSend `errors` or BFF `details`). */
export type ApiError = HttpError & { code: string; issues: Issue[] };

/**
 * react-admin's HttpError (it shows `body.errors` at the form's fields: server-side validation) with the
 * code and paths added. Not a subclass: HttpError resets its prototype, so a subclass would fail instanceof.
 */
function apiError(message: string, status: number, code: string, issues: Issue[]): ApiError {
  return Object.assign(new HttpError(message, status, { code, errors: fieldErrors(message, issues) }), { code, issues });
}

export const isApiError = (err: unknown): err is ApiError => err instanceof HttpError && Array.isArray((err as ApiError).issues);

/** `/seo/title` → `seo.title`: the name react-admin gives the input. The root issue goes to the form. */
function fieldErrors(message: string, issues: Issue[]): Record<string, unknown> {
  const errors: Record<string, unknown> = {};
  for (const issue of issues) {
    const name = issue.path.replace(/^\/(body\/)?/, '').split('/').filter(Boolean).join('.');
    if (name) errors[name] = issue.message;
    else errors.root = { serverError: issue.message };
  }
  if (!issues.length) errors.root = { serverError: message };
  return errors;
}

export interface CallOptions {
  method?: string;
  body?: unknown;
  /** A raw body (an upload) sent as it is. */
  raw?: Blob;
  headers?: Record<string, string>;
  /** Leave out X-Tenant-Id (platform routes). */
  noTenant?: boolean;
  token?: string;
}

export interface CallResult<T> { data: T; status: number; headers: Headers }

/** Calls the API with the session's token and tenant; answers `data` of either envelope, throws ApiError. */
export async function call<T = any>(path: string, options: CallOptions = {}): Promise<CallResult<T>> {
  const headers: Record<string, string> = { Accept: 'application/json', ...options.headers };
  const token = options.token ?? session.token;
  if (token) headers.Authorization = `Bearer ${token}`;
  const tenant = session.tenant;
  if (tenant && !options.noTenant) headers['X-Tenant-Id'] = tenant;
  let body: BodyInit | undefined;
  if (options.raw) body = options.raw;
  else if (options.body !== undefined) {
    headers['Content-Type'] = 'application/json';
    body = JSON.stringify(options.body);
  }
  const method = options.method ?? 'GET';
  // The first screen's GETs were started by main.ts before this code loaded: take the answer once.
  const early = method === 'GET' && !options.headers && !options.noTenant ? takeEarly(path, token, tenant) : undefined;
  const res = await (early ?? fetch(`${API}${path}`, { method, headers, body, credentials: 'omit' }));
  const text = await res.text();
  const json = text ? safeJson(text) : null;
  if (!res.ok) {
    const { message, code, issues } = errorOf(json, res.status);
    throw apiError(message, res.status, code, issues);
  }
  return { data: (json?.data ?? null) as T, status: res.status, headers: res.headers };
}

export async function api<T = any>(path: string, options: CallOptions = {}): Promise<T> {
  return (await call<T>(path, options)).data;
}

function safeJson(text: string): any {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

function errorOf(json: any, status: number): { message: string; code: string; issues: Issue[] } {
  if (json?.status === 'fail') {
    return { message: json.data?.message ?? `HTTP ${status}`, code: json.data?.code ?? 'error', issues: json.data?.errors ?? [] };
  }
  if (json?.status === 'error') {
    return { message: json.message ?? `HTTP ${status}`, code: json.error?.code ?? json.code ?? 'error', issues: json.error?.details ?? [] };
  }
  return { message: `HTTP ${status}`, code: 'error', issues: [] };
}

/** A query string from pairs, leaving out empty values. */
export function query(params: Record<string, string | number | boolean | null | undefined>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value !== undefined && value !== null && value !== '') search.set(key, String(value));
  const text = search.toString();
  return text ? `?${text}` : '';
}
