import { errorEnvelope, successEnvelope, type RouteFamily } from '../http/envelope.js';
import { toAppError } from '../http/error-handler.js';
import { AppError } from '../base/errors.js';
import type { IdempotencyKeys, StoredAnswer } from '../http/idempotency.js';
import type { RequestContext } from '../base/request-context.js';

/** The route a tool call stands for: its key space, its envelope and its success status. */
export interface RouteEquivalent {
  method: string;
  /** The request path, e.g. /api/v1/data/shop/note. */
  path: string;
  family: RouteFamily;
  status: number;
  /** Headers the route's answer carries (an ETag), kept for its replays. */
  headers?: (data: unknown) => Record<string, string>;
}

const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * Runs a tool call under an idempotency key with the semantics of the route it stands for, sharing that
 * route's keys: the same key and body replay the first answer (from either side) and run nothing; another
 * body is 422 idempotency_key_reused; a call while the first runs is 409 conflict. The answer is kept as
 * the route would have answered, so a retry over HTTP replays a call made through MCP and the other way round.
 */
export async function idempotentCall<T>(keys: IdempotencyKeys, rc: RequestContext, route: RouteEquivalent, key: string, body: unknown, run: () => Promise<T>): Promise<T> {
  const outcome = await keys.claimKey(rc, route.method, route.path, key, body);
  if (!outcome) return run();
  if ('replay' in outcome) return replayed(outcome.replay.status, outcome.replay.answer) as T;
  let data: T;
  try {
    data = await run();
  } catch (thrown) {
    const error = toAppError(thrown);
    const envelope = errorEnvelope(route.family, error.status, error.code, error.message, error.details);
    await outcome.claim.finish(error.status, { body: JSON.stringify(envelope), headers: { 'content-type': JSON_TYPE } });
    throw thrown;
  }
  await outcome.claim.finish(route.status, { body: JSON.stringify(successEnvelope(route.family, data)), headers: { 'content-type': JSON_TYPE, ...route.headers?.(data) } });
  return data;
}

/** The first answer again: its `data`, or its error thrown as the AppError it was (JSend or BFF envelope). */
function replayed(status: number, answer: StoredAnswer): unknown {
  const envelope = JSON.parse(answer.body) as Record<string, any>;
  if (status < 400) return envelope.data;
  if (envelope.status === 'fail') throw new AppError(envelope.data.code, status, envelope.data.message, envelope.data.errors ?? []);
  throw new AppError(envelope.error?.code ?? envelope.code ?? 'internal', status, envelope.message ?? 'Error', envelope.error?.details ?? []);
}
