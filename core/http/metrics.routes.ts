import { timingSafeEqual } from 'node:crypto';
import { NotFound, Unauthenticated } from '../base/errors.js';
import type { PackRouter } from './route.js';
import type { Metrics } from '../metrics/metrics.js';

/**
 * GET /metrics: Prometheus exposition; with METRICS_TOKEN set, only for `Authorization: Bearer <METRICS_TOKEN>`.
 * In production without a token it answers 404 unless METRICS_PUBLIC=true says it is public on purpose.
 */
export function metricsRoutes(router: PackRouter, metrics: Metrics, access: { token: string | null; hidden: boolean }): void {
  const expected = access.token ? Buffer.from(`Bearer ${access.token}`) : null;
  router.get('/metrics', {
    summary: 'Prometheus metrics (Bearer METRICS_TOKEN when that is set)',
    description: 'Requests by declared route and status with a latency histogram, outbox depth and age, deliveries and mails '
      + 'attempted/failed, database pool usage and process metrics. When METRICS_TOKEN is set, send it as `Authorization: Bearer <METRICS_TOKEN>`.',
    tags: ['operations'], auth: 'public', produces: 'text/plain; version=0.0.4', response: { type: 'string' },
    errors: ['unauthenticated', 'not_found'],
  }, async (ctx) => {
    if (access.hidden) throw NotFound('No route GET /metrics (set METRICS_TOKEN, or METRICS_PUBLIC=true)');
    if (expected) {
      const given = Buffer.from(ctx.get('Authorization'));
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw Unauthenticated();
    }
    const { contentType, body } = await metrics.render();
    ctx.type = contentType;
    ctx.set('Cache-Control', 'no-store');
    ctx.body = body;
  });
}
