import type { Logger } from 'pino';
import { infoLine } from '../base/logger.js';
import type { AppContext } from './app-state.js';

/** The access log line's fields, in the order they are written. */
const FIELDS = ['requestId', 'method', 'route', 'path', 'status', 'ms', 'tenantId', 'userId'] as const;
// The request id is checked as it comes in (core/http/request-id.ts) or is a UUID; Node's parser takes only known methods.
const writeLine = infoLine(FIELDS, 'request', ['requestId', 'method']);

/**
 * Writes the one log line of a finished request (called by core/http/request-pipeline.ts): request id,
 * tenant, user, route, status and duration. The path is logged without its query string, so signatures
 * and tokens in signed URLs never reach the log.
 */
export function logRequest(logger: Logger, ctx: AppContext, status: number, endedAt: bigint): void {
  const level = status >= 500 ? 'error' : 'info';
  if (!logger.isLevelEnabled(level)) return;
  const state = ctx.state;
  const ms = Math.round(Number(endedAt - state.startedAt) / 1e5) / 10;
  const values = [
    state.requestId, ctx.method, state.routePath ?? null, state.logPath ?? state.path, status, ms,
    state.rc?.tenantId ?? state.tenant?.id ?? null, state.principal?.userId ?? null,
  ];
  if (level === 'info') writeLine(logger, values);
  else logger.error(Object.fromEntries(FIELDS.map((key, i) => [key, values[i]])), 'request');
}
