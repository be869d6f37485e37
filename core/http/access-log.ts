import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import type { AppState } from './app-state.js';
import { observeRequest } from './observe-request.js';

/**
 * One log line per request: request id, tenant, user, route, status and duration. The path is logged
 * without its query string, so signatures and tokens in signed URLs never reach the log.
 */
export function accessLog(logger: Logger): Middleware<AppState> {
  return async function accessLog(ctx, next) {
    await observeRequest(ctx, next, (status) => {
      const level = status >= 500 ? 'error' : 'info';
      if (!logger.isLevelEnabled(level)) return;
      const ms = Number(process.hrtime.bigint() - ctx.state.startedAt) / 1e6;
      logger[level]({
        requestId: ctx.state.requestId,
        method: ctx.method,
        route: ctx.state.routePath ?? null,
        path: ctx.state.logPath ?? ctx.path,
        status,
        ms: Math.round(ms * 10) / 10,
        tenantId: ctx.state.rc?.tenantId ?? ctx.state.tenant?.id ?? null,
        userId: ctx.state.principal?.userId ?? null,
      }, 'request');
    });
  };
}
