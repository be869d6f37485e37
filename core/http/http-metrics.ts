import type { AppContext } from './app-state.js';
import type { Metrics } from '../metrics/metrics.js';

/** Route label of requests that matched no declared route (kept as one value to bound cardinality). */
export const UNMATCHED_ROUTE = 'unmatched';

/**
 * Counts a finished request and observes its latency, labelled by the declared route path and the status
 * (called by core/http/request-pipeline.ts).
 */
export function recordRequest(metrics: Metrics, ctx: AppContext, status: number, endedAt: bigint): void {
  const seconds = Number(endedAt - ctx.state.startedAt) / 1e9;
  metrics.observeRequest(ctx.method, ctx.state.routePath ?? UNMATCHED_ROUTE, status, seconds);
}
