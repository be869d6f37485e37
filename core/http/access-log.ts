import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import type { AppState } from './app-state.js';

/** One log line per request: request id, tenant, user, route, status and duration. */
export function accessLog(logger: Logger): Middleware<AppState> {
  return async function accessLog(ctx, next) {
    try {
      await next();
    } finally {
      const ms = Number(process.hrtime.bigint() - ctx.state.startedAt) / 1e6;
      const line = {
        requestId: ctx.state.requestId,
        method: ctx.method,
        route: ctx.state.routePath ?? null,
        path: ctx.path,
        status: ctx.status,
        ms: Math.round(ms * 10) / 10,
        tenantId: ctx.state.rc?.tenantId ?? null,
        userId: ctx.state.principal?.userId ?? null,
      };
      if (ctx.status >= 500) logger.error(line, 'request');
      else logger.info(line, 'request');
    }
  };
}
