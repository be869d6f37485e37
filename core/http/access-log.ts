import type { Logger } from 'pino';
import { writeInfoLine } from '../logger.js';
import type { AppContext } from './app-state.js';

/**
 * Writes the one log line of a finished request (called by core/http/request-pipeline.ts): request id,
 * tenant, user, route, status and duration. The path is logged without its query string, so signatures
 * and tokens in signed URLs never reach the log.
 */
export function logRequest(logger: Logger, ctx: AppContext, status: number, endedAt: bigint): void {
  const level = status >= 500 ? 'error' : 'info';
  if (!logger.isLevelEnabled(level)) return;
  const state = ctx.state;
  const ms = Number(endedAt - state.startedAt) / 1e6;
  const line = {
    requestId: state.requestId,
    method: ctx.method,
    route: state.routePath ?? null,
    path: state.logPath ?? ctx.path,
    status,
    ms: Math.round(ms * 10) / 10,
    tenantId: state.rc?.tenantId ?? state.tenant?.id ?? null,
    userId: state.principal?.userId ?? null,
  };
  if (level === 'info') writeInfoLine(logger, line, 'request');
  else logger.error(line, 'request');
}
