import type { Middleware } from 'koa';
import type { AppState } from './app-state.js';
import { observeRequest } from './observe-request.js';
import type { Metrics } from '../metrics/metrics.js';

/** Route label of requests that matched no declared route (kept as one value to bound cardinality). */
export const UNMATCHED_ROUTE = 'unmatched';

/** Counts each request and observes its latency, labelled by the declared route path and the status. */
export function httpMetrics(metrics: Metrics): Middleware<AppState> {
  if (!metrics) throw new TypeError('httpMetrics needs a Metrics instance');
  return async function httpMetrics(ctx, next) {
    await observeRequest(ctx, next, (status) => {
      const seconds = Number(process.hrtime.bigint() - ctx.state.startedAt) / 1e9;
      metrics.observeRequest(ctx.method, ctx.state.routePath ?? UNMATCHED_ROUTE, status, seconds);
    });
  };
}
