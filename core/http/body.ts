import getRawBody from 'raw-body';
import type { AppContext } from './app-state.js';
import { InvalidJson, PayloadTooLarge, UnsupportedMediaType } from '../base/errors.js';
import { assertCleanJson, assertJsonDepth } from './input-hygiene.js';

export const JSON_BODY_LIMIT = 1024 * 1024;

/**
 * Reads a JSON body: 415 for another content type, 413 past the limit, 400 invalid_json for bad JSON.
 * 400 invalid_json past 64 levels of nesting (checked before parsing), 400 validation_failed for a NUL or
 * a lone surrogate in any string or key. An empty body yields undefined.
 */
export async function readJsonBody(ctx: AppContext, limit = JSON_BODY_LIMIT): Promise<unknown> {
  const length = ctx.request.length;
  const hasBody = (length !== undefined && length > 0) || ctx.get('Transfer-Encoding') !== '';
  if (!hasBody) return undefined;
  if (!ctx.is('application/json', 'application/*+json')) {
    throw UnsupportedMediaType(`The body must be application/json, got "${ctx.get('Content-Type') || 'none'}"`);
  }
  // The rest of an oversized body is never read: close the connection after the answer.
  const tooLarge = () => PayloadTooLarge(limit, [], { Connection: 'close' });
  if (length !== undefined && length > limit) throw tooLarge();
  let text: string;
  try {
    text = await getRawBody(ctx.req, { limit, encoding: 'utf8', length });
  } catch (err) {
    if ((err as { type?: string }).type === 'entity.too.large') throw tooLarge();
    throw err;
  }
  if (text.trim() === '') return undefined;
  assertJsonDepth(text);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw InvalidJson(`The request body is not valid JSON: ${(err as Error).message}`);
  }
  assertCleanJson(value);
  return value;
}
