import type { Logger } from 'pino';
import type { AppContext } from './app-state.js';
import { errorEnvelope } from './envelope.js';
import { AppError } from '../base/errors.js';
import { translateDbError } from '../db/translate-error.js';

/**
 * The one place that turns errors into responses (called by core/http/request-pipeline.ts). 4xx messages
 * are shown as thrown; anything else becomes 500 `internal` with no stack, SQL or secret, and is logged
 * with its cause.
 */
export function renderError(ctx: AppContext, thrown: unknown, logger: Logger): void {
  const error = toAppError(thrown);
  if (error.status >= 500) {
    logger.error({ err: thrown, requestId: ctx.state.requestId, path: ctx.state.logPath ?? ctx.path }, 'request failed');
  }
  ctx.status = error.status;
  for (const [name, value] of Object.entries(error.headers)) ctx.set(name, value);
  if (error.status === 401 && !error.headers['WWW-Authenticate']) {
    ctx.set('WWW-Authenticate', error.code === 'invalid_token' ? 'Bearer error="invalid_token"' : 'Bearer');
  }
  ctx.body = errorEnvelope(ctx.state.family ?? 'bff', error.status, error.code, error.message, error.details);
}

/** A request no route answered: 404 not_found naming the method and path. */
export function noRoute(ctx: AppContext): AppError {
  return new AppError('not_found', 404, `No route ${ctx.method} ${ctx.path}`);
}

export function toAppError(thrown: unknown): AppError {
  if (thrown instanceof AppError) return thrown;
  const translated = translateDbError(thrown);
  if (translated) return translated;
  const err = thrown as { status?: number; statusCode?: number; expose?: boolean; message?: string; type?: string };
  const status = err?.status ?? err?.statusCode;
  // Errors from koa/raw-body that are safe to show (client errors only).
  if (typeof status === 'number' && status >= 400 && status < 500) {
    if (status === 413) return new AppError('payload_too_large', 413, 'The body is too large');
    if (status === 415) return new AppError('unsupported_media_type', 415, err.message ?? 'Unsupported media type');
    return new AppError(status === 404 ? 'not_found' : 'bad_request', status, err.expose && err.message ? err.message : 'Bad request');
  }
  return new AppError('internal', 500, 'Internal server error', [], {}, { cause: thrown });
}
