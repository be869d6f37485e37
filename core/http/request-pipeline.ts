import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import type { AppContext, AppState } from './app-state.js';
import { logRequest } from './access-log.js';
import { noRoute, renderError } from './error-handler.js';
import { recordRequest } from './http-metrics.js';
import { startRequest } from './request-id.js';
import type { Metrics } from '../metrics/metrics.js';

export interface RequestPipelineOptions {
  logger: Logger;
  /** HTTP request metrics; null leaves them out (the observability benchmark measures their cost). */
  metrics: Metrics | null;
  /**
   * Checks run before the routes, in order, each throwing the error to answer (the public rate limit), or
   * returning true when it has answered the request itself (a CORS preflight): then nothing further runs.
   */
  guards?: Array<(ctx: AppContext) => void | boolean>;
  /** The routes (core/http/route-dispatch.ts), run by the pipeline itself: no compose layer in between. */
  routes: Middleware<AppState>;
}

/** What the routes call when no route matched: nothing further runs. */
const END = () => Promise.resolve();

/**
 * What every request passes through around the routes, as one middleware (one promise layer instead of
 * one per concern): the request id and ctx.state (request-id.ts), the guards, the routes, the error handler
 * (error-handler.ts, which renders a thrown error and a request no route answered), then the access log
 * line (access-log.ts) and the HTTP metrics (http-metrics.ts) with the status the response ends with.
 */
export function requestPipeline(options: RequestPipelineOptions): Middleware<AppState> {
  const { logger, metrics, guards = [], routes } = options;
  if (!logger) throw new TypeError('requestPipeline needs a logger');
  return async function requestPipeline(ctx) {
    startRequest(ctx);
    try {
      if (!answeredBy(guards, ctx)) {
        await routes(ctx, END);
        if (ctx.status === 404 && ctx.body === undefined) throw noRoute(ctx);
      }
    } catch (thrown) {
      renderError(ctx, thrown, logger);
    }
    const endedAt = process.hrtime.bigint();
    const status = ctx.status;
    logRequest(logger, ctx, status, endedAt);
    if (metrics) recordRequest(metrics, ctx, status, endedAt);
  };
}

/** Runs the guards in order; true when one answered the request. */
function answeredBy(guards: Array<(ctx: AppContext) => void | boolean>, ctx: AppContext): boolean {
  for (const guard of guards) if (guard(ctx) === true) return true;
  return false;
}
