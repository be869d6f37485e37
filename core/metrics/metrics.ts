import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
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
  /** http_requests_total and http_request_duration_seconds, counted here and read by the registry at scrape time. */
  private readonly http = new HttpRequestMetrics(LATENCY_BUCKETS);
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
    this.registry.registerMetric(this.http.counter('http_requests_total', 'HTTP requests by declared route, method and status') as never);
    this.registry.registerMetric(this.http.histogram('http_request_duration_seconds', 'HTTP request latency by declared route, method and status') as never);
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
    this.http.observe(method, route, status, seconds);
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

/** The requests of one method, declared route and status: their count, latency sum and count per bucket. */
interface RequestSeries {
  labels: { method: string; route: string; status: string };
  count: number;
  sum: number;
  /** Observations per bucket (not cumulative), the last for those above every bound. */
  perBucket: number[];
}

/** One exported sample, as prom-client's own metrics give them to the registry. */
interface Sample {
  value: number;
  labels: Record<string, string | number>;
  sharedLabels?: Record<string, string>;
  metricName?: string;
}

/**
 * The HTTP request counter and latency histogram, as prom-client's Counter and Histogram with the labels
 * method, route and status would export them, but counted in plain numbers per series found through
 * nested maps (route, then method, then status: strings the request already holds, no label object or
 * label hash per request). The registry reads them at scrape time through the two metric objects below.
 */
class HttpRequestMetrics {
  private readonly routes = new Map<string, Map<string, Map<number, RequestSeries>>>();
  private readonly all: RequestSeries[] = [];

  constructor(private readonly buckets: readonly number[]) {}

  observe(method: string, route: string, status: number, seconds: number): void {
    let methods = this.routes.get(route);
    if (!methods) this.routes.set(route, (methods = new Map()));
    let statuses = methods.get(method);
    if (!statuses) methods.set(method, (statuses = new Map()));
    let series = statuses.get(status);
    if (!series) {
      series = { labels: { method, route, status: String(status) }, count: 0, sum: 0, perBucket: new Array<number>(this.buckets.length + 1).fill(0) };
      statuses.set(status, series);
      this.all.push(series);
    }
    series.count++;
    series.sum += seconds;
    const buckets = this.buckets;
    let i = 0;
    while (i < buckets.length && seconds > buckets[i]!) i++;
    series.perBucket[i]!++;
  }

  reset(): void {
    this.routes.clear();
    this.all.length = 0;
  }

  /** The counter's metric object for the registry: one sample per series. */
  counter(name: string, help: string) {
    const get = async () => ({
      name, help, type: 'counter', aggregator: 'sum',
      values: this.all.map((s): Sample => ({ value: s.count, labels: { ...s.labels } })),
    });
    return { name, help, type: 'counter', aggregator: 'sum', get, reset: () => this.reset() };
  }

  /**
   * The histogram's metric object: per series a cumulative sample per bound (`le`), `+Inf`, `_sum` and
   * `_count`, the series' labels as shared labels (as prom-client's Histogram gives them to the text format;
   * `get` merges them into the labels, as its get does).
   */
  histogram(name: string, help: string) {
    const samples = (): Sample[] => this.all.flatMap((s) => {
      const out: Sample[] = [];
      let cumulative = 0;
      this.buckets.forEach((le, i) => {
        cumulative += s.perBucket[i]!;
        out.push({ labels: { le }, sharedLabels: s.labels, value: cumulative, metricName: `${name}_bucket` });
      });
      out.push(
        { labels: { le: '+Inf' }, sharedLabels: s.labels, value: s.count, metricName: `${name}_bucket` },
        { labels: {}, sharedLabels: s.labels, value: s.sum, metricName: `${name}_sum` },
        { labels: {}, sharedLabels: s.labels, value: s.count, metricName: `${name}_count` },
      );
      return out;
    });
    const meta = { name, help, type: 'histogram', aggregator: 'sum' };
    return {
      ...meta,
      getForPromString: async () => ({ ...meta, values: samples() }),
      get: async () => ({ ...meta, values: samples().map(({ sharedLabels, ...sample }) => ({ ...sample, labels: { ...sample.labels, ...sharedLabels } })) }),
      reset: () => this.reset(),
    };
  }
}
