import { expect } from 'chai';
import { createTenant, sharedTestApp, startTestApp, type TestApp } from '../helpers/test-app.js';
import { as, bearer } from '../helpers/tokens.js';
import { OUTBOX_OLDEST_AGE_GAUGE, OUTBOX_PENDING_GAUGE } from '../../core/metrics/metrics.js';

/** The sample lines of one metric family. */
function samples(text: string, name: string): string[] {
  return text.split('\n').filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `));
}

describe('GET /metrics', () => {
  let t: TestApp;

  before(async () => {
    t = await sharedTestApp();
  });

  it('counts requests by declared route and status with a latency histogram, never by raw path', async () => {
    const tenant = await createTenant(t, 'met');
    await t.http.post('/api/v1/metadata/schemas').set(as(tenant, 'admin'))
      .send({ namespace: 'shop', name: 'gadget', schema: { type: 'object', properties: { name: { type: 'string' } } } }).expect(201);
    await t.http.post('/api/v1/data/shop/gadget').set(as(tenant, 'editor')).send({ name: 'a' }).expect(201);
    await t.http.get('/api/v1/data/shop/gadget').set(as(tenant, 'viewer')).expect(200);
    await t.http.get('/api/v1/data/shop/nope').set(as(tenant, 'viewer')).expect(404);
    await t.http.get(`/api/v1/unknown-${tenant}`).expect(404);

    const res = await t.http.get('/metrics');
    expect(res.status).to.equal(200);
    expect(res.headers['content-type']).to.match(/^text\/plain/);
    const requests = samples(res.text, 'http_requests_total');
    expect(requests.some((l) => l.includes('method="POST"') && l.includes('route="/api/v1/data/:ns/:schema"') && l.includes('status="201"'))).to.equal(true);
    expect(requests.some((l) => l.includes('method="GET"') && l.includes('route="/api/v1/data/:ns/:schema"') && l.includes('status="404"'))).to.equal(true);
    expect(requests.some((l) => l.includes('route="unmatched"') && l.includes('status="404"'))).to.equal(true);
    expect(res.text).to.not.contain('/api/v1/data/shop/gadget');
    expect(res.text).to.not.contain(tenant);
    const buckets = samples(res.text, 'http_request_duration_seconds_bucket');
    expect(buckets.some((l) => l.includes('route="/api/v1/data/:ns/:schema"') && l.includes('le="0.005"'))).to.equal(true);
    expect(samples(res.text, 'http_request_duration_seconds_count').length).to.be.greaterThan(0);
  });

  it('reports database pool usage, process metrics and the delivery and mail counters', async () => {
    const text = (await t.http.get('/metrics').expect(200)).text;
    const pool = samples(text, 'platform_db_pool_connections');
    expect(pool.map((l) => /state="(\w+)"/.exec(l)?.[1])).to.include.members(['used', 'free', 'pending_acquires']);
    expect(samples(text, 'process_cpu_user_seconds_total')).to.have.length(1);
    expect(samples(text, 'nodejs_heap_size_used_bytes')).to.have.length(1);
    for (const counter of ['platform_webhook_deliveries_attempted_total', 'platform_webhook_deliveries_failed_total', 'platform_mails_attempted_total', 'platform_mails_failed_total']) {
      expect(samples(text, counter), counter).to.have.length(1);
    }
  });

  it('shows the counters other areas increment and the gauges they register', async () => {
    const { metrics } = t.app.kernel;
    const before = Number(/platform_mails_failed_total\{[^}]*\} (\d+)/.exec((await t.http.get('/metrics')).text)?.[1]);
    metrics.mails.failed.inc();
    metrics.registerGauge('test_probe_queue_depth', 'A gauge a test plugs in', async () => [
      { labels: { queue: 'a' }, value: 3 },
      { labels: { queue: 'b' }, value: 5 },
    ], ['queue']);
    const text = (await t.http.get('/metrics')).text;
    expect(Number(/platform_mails_failed_total\{[^}]*\} (\d+)/.exec(text)?.[1])).to.equal(before + 1);
    expect(samples(text, 'test_probe_queue_depth').join('\n')).to.contain('queue="a"').and.contain('} 3').and.contain('queue="b"');
    // The outbox gauges are fed the same way by the events area.
    expect(OUTBOX_PENDING_GAUGE).to.match(/^platform_outbox_/);
    expect(OUTBOX_OLDEST_AGE_GAUGE).to.match(/^platform_outbox_/);
  });

  describe('with METRICS_TOKEN', () => {
    let guarded: TestApp;

    before(async () => {
      guarded = await startTestApp({ database: t.database, env: { METRICS_TOKEN: 'metrics-token-0123', MIGRATE_ON_START: 'false' } });
    });

    after(async () => {
      await guarded?.close();
    });

    it('answers 401 without the token and with a wrong one', async () => {
      const missing = await guarded.http.get('/metrics');
      expect(missing.status).to.equal(401);
      expect(missing.headers['www-authenticate']).to.equal('Bearer');
      expect(missing.body.error.code).to.equal('unauthenticated');
      expect((await guarded.http.get('/metrics').set(bearer('metrics-token-wrong'))).status).to.equal(401);
    });

    it('answers the metrics for Bearer METRICS_TOKEN', async () => {
      const res = await guarded.http.get('/metrics').set(bearer('metrics-token-0123'));
      expect(res.status).to.equal(200);
      expect(samples(res.text, 'http_requests_total').some((l) => l.includes('route="/metrics"') && l.includes('status="401"'))).to.equal(true);
    });
  });
});
