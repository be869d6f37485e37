import { expect } from 'chai';
import { packs as defaultPacks } from '../../config/packs.js';
import { definePack, systemContext } from '../../core/pack-api.js';
import { createTenant, startTestApp, type TestApp } from '../helpers/test-app.js';
import { as } from '../helpers/tokens.js';
import { waitUntil } from '../helpers/wait.js';

/** Calls of the flaky handler per deal id: it throws on the first two, and writes a page on the third. */
const calls = new Map<string, number>();

/**
 * A pack whose handler of `crm.deal.created` fails twice before it succeeds. Its effect is a CMS page with
 * the deal's id as slug (unique per tenant, so even a second success could not write a second page).
 */
const flaky = definePack({
  name: 'flaky',
  on: {
    'crm.deal.created': async (event, pack) => {
      const id = String((event.payload.record as { id: string }).id);
      const n = (calls.get(id) ?? 0) + 1;
      calls.set(id, n);
      if (n <= 2) throw new Error(`flaky failure ${n}`);
      await pack.records.create(systemContext(event.tenantId), 'cms', 'page', { title: 'From a deal', slug: `deal-${id}` });
    },
  },
});

describe('pack event handlers run at least once, through the outbox', () => {
  let t: TestApp;

  before(async () => {
    t = await startTestApp({ packs: [...defaultPacks, flaky], env: { DISPATCHER_RETRY_BASE_MS: '50', DISPATCHER_INTERVAL_MS: '20' } });
  });
  after(() => t?.close());

  it('a handler that fails twice then succeeds runs three times with one effect, visible in the run log and metrics', async () => {
    const tenant = await createTenant(t, 'flaky');
    const created = await t.http.post('/api/v1/crm/deals').set(as(tenant, 'editor')).send({ title: 'Flaky deal' });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const dealId = created.body.data.id as string;

    const pages = async () => (await t.http.get(`/api/v1/data/cms/page?filter[slug]=deal-${dealId}`).set(as(tenant, 'viewer'))).body.data.items as unknown[];
    await waitUntil('the page the handler writes', async () => (await pages()).length === 1, 10_000);
    expect(calls.get(dealId)).to.equal(3);

    const runLog = () => t.http.get('/api/v1/events/handler-runs').query({ handler: 'flaky:crm.deal.created' }).set(as(tenant, 'admin'));
    // The run is marked delivered once the handler's transaction has committed: the page may show a moment before.
    await waitUntil('the run marked delivered', async () => (await runLog()).body.data?.[0]?.status === 'delivered', 10_000);
    const log = await runLog();
    expect(log.status, JSON.stringify(log.body)).to.equal(200);
    expect(log.body.data).to.have.length(1);
    const [run] = log.body.data;
    expect(run).to.include({ handler: 'flaky:crm.deal.created', event: 'crm.deal.created', status: 'delivered', attemptCount: 3 });
    expect(run.attempts.map((a: { error: string | null }) => a.error)).to.deep.equal(['flaky failure 1', 'flaky failure 2', null]);

    // Nothing runs it again: still one page and three calls a moment later.
    await new Promise((r) => setTimeout(r, 300));
    expect(await pages()).to.have.length(1);
    expect(calls.get(dealId)).to.equal(3);

    const metrics = await t.http.get('/metrics');
    expect(metrics.text).to.match(/platform_pack_handler_runs_total\{[^}]*\} [3-9]/);
    expect(metrics.text).to.match(/platform_pack_handler_runs_failed_total\{[^}]*\} [2-9]/);
  });

  it('an event an integrator publishes reaches no pack handler', async () => {
    const tenant = await createTenant(t, 'flaky');
    const res = await t.http.post('/api/v1/events/publish').set(as(tenant, 'editor')).send({ event: 'flaky.outside.happened', payload: {} });
    expect(res.status).to.equal(202);
    const log = await t.http.get('/api/v1/events/handler-runs').query({ eventId: res.body.data.id }).set(as(tenant, 'admin'));
    expect(log.body.data).to.deep.equal([]);
  });
});
