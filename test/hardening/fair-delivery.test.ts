import { expect } from 'chai';
import { systemContext } from '../../core/base/request-context.js';
import { startReceiver, type HttpReceiver } from '../helpers/http-receiver.js';
import { createTenant, startTestApp, type TestApp } from '../helpers/test-app.js';
import { as } from '../helpers/tokens.js';

/**
 * One tenant's connectors accept connections and never answer (tarpits), with 1,000 deliveries queued;
 * another tenant's delivery must still leave within 2 s.
 */
describe('Fair delivery across tenants (#17)', function () {
  this.timeout(90_000);
  let t: TestApp;
  const tarpits: HttpReceiver[] = [];
  let receiver: HttpReceiver;

  before(async () => {
    // The default concurrency and the production attempt timeout (15 s): stuck attempts hold their slots.
    t = await startTestApp({ env: { DISPATCHER_TIMEOUT_MS: '15000' } });
    receiver = await startReceiver();
    for (let i = 0; i < 3; i++) {
      const tarpit = await startReceiver();
      tarpit.responder = () => { /* accepts, never answers */ };
      tarpits.push(tarpit);
    }
  });
  after(async () => {
    await t?.close();
    for (const r of [...tarpits, receiver]) await r?.stop();
  });

  it('delivers another tenant\'s event within 2 s while 1,000 deliveries of one tenant hang on tarpits', async () => {
    const busy = await createTenant(t, 'busy');
    const calm = await createTenant(t, 'calm');
    for (const [i, tarpit] of tarpits.entries()) {
      const events = i === 0 ? ['*'] : ['shop.*'];
      await t.http.post('/api/v1/connectors').set(as(busy, 'admin')).send({ url: `${tarpit.url}/hook`, events }).expect(201);
    }
    await t.http.post('/api/v1/connectors').set(as(calm, 'admin')).send({ url: `${receiver.url}/hook`, events: ['*'] }).expect(201);

    // 334 events × 3 connectors: 1,002 deliveries of the busy tenant, queued in one transaction.
    const kernel = t.app.kernel;
    await kernel.db.transaction(systemContext(busy), async (rc) => {
      for (let i = 0; i < 334; i++) await kernel.events.publish(rc, { name: 'shop.order.placed', payload: { i }, product: null, source: 'api' });
    });
    const queued = await kernel.db.knex('outbox_deliveries').where({ tenant_id: busy, status: 'pending' }).count({ n: '*' }).first();
    expect(Number(queued!.n)).to.equal(1002);
    // Let the tarpits take every slot the busy tenant may have.
    await waitFor(() => tarpits.reduce((n, r) => n + r.requests.length, 0) >= 3, 5000);
    await new Promise((r) => setTimeout(r, 500));

    const started = Date.now();
    const published = await t.http.post('/api/v1/events/publish').set(as(calm, 'editor')).send({ event: 'shop.order.placed', payload: { calm: true } });
    expect(published.status).to.equal(202);
    expect(published.body.data.deliveries).to.equal(1);
    await receiver.waitFor(1, 2000);
    const elapsed = Date.now() - started;
    if (process.env.FAIRNESS_REPORT) console.log(`      the calm tenant's delivery arrived after ${elapsed} ms`);
    expect(elapsed).to.be.below(2000);
    expect(JSON.parse(receiver.requests[0]!.body)).to.include({ tenantId: calm, event: 'shop.order.placed' });
  });
});

async function waitFor(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}
