import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Database } from '../db/database.js';

/** Names of the outbox gauges; the events area feeds them with `metrics.registerGauge`. */
export const OUTBOX_PENDING_GAUGE = 'platform_outbox_pending_deliveries';
export const OUTBOX_OLDEST_AGE_GAUGE = 'platform_outbox_oldest_pending_age_seconds';

/** One sample of a gauge: a plain number, or values per label set. */
export type GaugeSample = number | null | Array<{ labels: Record<string, string>; value: number }>;
export type GaugeCollector = () => GaugeSample | Promise<GaugeSample>;

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;

/** Seconds; from 5 ms to 10 s, for JSON APIs. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * The app's Prometheus metrics, on a registry of its own (several apps may run in one process).
 * HTTP metrics are labelled by the declared route path, never the raw path, so their cardinality stays
 * bounded. Other areas increment the counters here and plug gauges in with `registerGauge`.
 */
export class Metrics {
  readonly registry = new Registry();
  readonly httpRequests: Counter<'method' | 'route' | 'status'>;
  readonly httpDuration: Histogram<'method' | 'route' | 'status'>;
  /** Webhook deliveries: each attempt, and each attempt that did not get a 2xx. */
  readonly deliveries: { attempted: Counter; failed: Counter };
  /** Mails: each send attempt, and each that failed. */
  readonly mails: { attempted: Counter; failed: Counter };
  /** Pack event handler runs (through the outbox): each run, and each that threw. */
  readonly handlers: { attempted: Counter; failed: Counter };
  private readonly gauges = new Map<string, Gauge<string>>();

  constructor(db: Database) {
    this.registry.setDefaultLabels({ service: 'headless-platform' });
    collectDefaultMetrics({ register: this.registry });
    this.httpRequests = new Counter({
      name: 'http_requests_total', help: 'HTTP requests by declared route, method and status',
      labelNames: ['method', 'route', 'status'], registers: [this.registry],
    });
    this.httpDuration = new Histogram({
      name: 'http_request_duration_seconds', help: 'HTTP request latency by declared route, method and status',
      labelNames: ['method', 'route', 'status'], buckets: LATENCY_BUCKETS, registers: [this.registry],
    });
    this.deliveries = {
      attempted: this.counter('platform_webhook_deliveries_attempted_total', 'Webhook delivery attempts'),
      failed: this.counter('platform_webhook_deliveries_failed_total', 'Webhook delivery attempts that failed (no 2xx answer)'),
    };
    this.mails = {
      attempted: this.counter('platform_mails_attempted_total', 'Mail send attempts'),
      failed: this.counter('platform_mails_failed_total', 'Mail send attempts that failed'),
    };
    this.handlers = {
      attempted: this.counter('platform_pack_handler_runs_total', 'Pack event handler runs'),
      failed: this.counter('platform_pack_handler_runs_failed_total', 'Pack event handler runs that threw (retried with back-off)'),
    };
    this.registerPool(db);
  }

  /**
   * Plugs a gauge in: `collect` runs on every scrape and returns a number, values per label set, or
   * null when there is nothing to report. Registering a name again replaces its collector.
   */
  registerGauge(name: string, help: string, collect: GaugeCollector, labelNames: string[] = []): void {
    if (!METRIC_NAME.test(name)) throw new Error(`Invalid metric name "${name}"`);
    if (this.gauges.has(name)) {
      this.registry.removeSingleMetric(name);
      this.gauges.delete(name);
    }
    const gauge = new Gauge({
      name, help, labelNames, registers: [this.registry],
      async collect() {
        this.reset();
        const sample = await collect();
        if (sample === null) return;
        if (typeof sample === 'number') this.set(sample);
        else for (const { labels, value } of sample) this.set(labels, value);
      },
    });
    this.gauges.set(name, gauge);
  }

  /** Records one finished HTTP request. */
  observeRequest(method: string, route: string, status: number, seconds: number): void {
    const labels = { method, route, status: String(status) };
    this.httpRequests.inc(labels);
    this.httpDuration.observe(labels, seconds);
  }

  /** The exposition text and its content type. */
  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  private counter(name: string, help: string): Counter {
    return new Counter({ name, help, registers: [this.registry] });
  }

  /** Database pool usage: connections in use, idle, and acquisitions waiting for one. */
  private registerPool(db: Database): void {
    this.registerGauge('platform_db_pool_connections', 'Database pool connections by state', () => {
      const current = (db.knex.client as { pool?: PoolStats }).pool;
      if (!current) return null;
      return [
        { labels: { state: 'used' }, value: current.numUsed() },
        { labels: { state: 'free' }, value: current.numFree() },
        { labels: { state: 'pending_acquires' }, value: current.numPendingAcquires() },
      ];
    }, ['state']);
  }
}

interface PoolStats {
  numUsed(): number;
  numFree(): number;
  numPendingAcquires(): number;
}
