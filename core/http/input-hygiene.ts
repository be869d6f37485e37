import type { AppContext } from './app-state.js';
import { InvalidIdentifier, InvalidJson, ValidationFailed, type ErrorDetail } from '../base/errors.js';

/** How deep a JSON body may nest (objects and arrays); deeper bodies are refused before they are parsed. */
export const MAX_JSON_DEPTH = 64;

/** Path parameters and query values that name a namespace, schema or content type: refused as invalid_identifier. */
const IDENTIFIER_PARAMS: Record<string, string> = { ns: 'namespace', schema: 'schema', name: 'name', contentType: 'contentType' };
const IDENTIFIER_QUERY = new Set(['namespace']);

/**
 * A string neither engine can store the same way: a NUL character (PostgreSQL refuses it in text and
 * JSON) or a lone UTF-16 surrogate (not valid Unicode, so no UTF-8 encoding exists).
 */
export function isUnstorable(value: string): boolean {
  return value.includes('\u0000') || !(value as string & { isWellFormed(): boolean }).isWellFormed();
}

/**
 * Refuses a request whose path parameters or query values hold a NUL or a lone surrogate, before any
 * query: invalid_identifier for a namespace, schema or content type, else validation_failed naming each.
 * `hasQuery`: whether the URL has a query string (the route wrapper knows it from the raw URL).
 */
export function assertCleanParamsAndQuery(ctx: AppContext, ownChecks: string[], hasQuery: boolean): void {
  const issues: ErrorDetail[] = [];
  const params: Record<string, unknown> | undefined = ctx.params;
  for (const name in params) {
    const value = params[name];
    if (typeof value !== 'string' || ownChecks.includes(name) || !isUnstorable(value)) continue;
    if (IDENTIFIER_PARAMS[name]) throw InvalidIdentifier({ name: IDENTIFIER_PARAMS[name]!, value: printable(value) });
    issues.push({ path: `path/${name}`, message: 'must not contain a NUL character or a lone surrogate' });
  }
  // Without a query string there is nothing to parse or check.
  if (hasQuery) {
    for (const [name, value] of Object.entries(ctx.query)) {
      const values = Array.isArray(value) ? value : [value];
      if (!isUnstorable(name) && !values.some((v) => typeof v === 'string' && isUnstorable(v))) continue;
      if (IDENTIFIER_QUERY.has(name)) throw InvalidIdentifier({ name, value: printable(String(values[0])) });
      issues.push({ path: `query/${printable(name)}`, message: 'must not contain a NUL character or a lone surrogate' });
    }
  }
  if (issues.length) throw ValidationFailed('The request holds characters that cannot be stored', issues);
}

/** Refuses JSON text that nests objects and arrays deeper than `max`, by one pass over the text (no recursion). */
export function assertJsonDepth(text: string, max = MAX_JSON_DEPTH): void {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) throw InvalidJson(`The request body nests deeper than ${max} levels`);
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
}

/** Refuses a parsed JSON body with a NUL or a lone surrogate in any string or key, naming each path (JSON Pointer). */
export function assertCleanJson(value: unknown): void {
  const issues: ErrorDetail[] = [];
  collectUnstorable(value, '', issues);
  if (issues.length) throw ValidationFailed('The request body holds characters that cannot be stored', issues);
}

const MAX_ISSUES = 20;

function collectUnstorable(value: unknown, path: string, issues: ErrorDetail[]): void {
  if (issues.length >= MAX_ISSUES) return;
  if (typeof value === 'string') {
    if (isUnstorable(value)) issues.push({ path: path || '/', message: 'must not contain a NUL character or a lone surrogate' });
    return;
  }
  if (!value || typeof value !== 'object') return;
  if (Array.isArray(value)) {
    value.forEach((item, i) => collectUnstorable(item, `${path}/${i}`, issues));
    return;
  }
  for (const [key, item] of Object.entries(value)) {
    const at = `${path}/${escapePointer(printable(key))}`;
    if (isUnstorable(key)) issues.push({ path: at, message: 'the key must not contain a NUL character or a lone surrogate' });
    else collectUnstorable(item, at, issues);
  }
}

/** The string with each NUL and lone surrogate shown as U+FFFD, for messages. */
function printable(value: string): string {
  return (value as string & { toWellFormed(): string }).toWellFormed().replaceAll('\u0000', '\uFFFD');
}

function escapePointer(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}
