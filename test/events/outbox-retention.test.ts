import { expect } from 'chai';
import { createTenant, sharedTestApp, type TestApp } from '../helpers/test-app.js';
import { startReceiver, type HttpReceiver } from '../helpers/http-receiver.js';
import { as } from '../helpers/tokens.js';
import type { OutboxRetention } from '../../core/events/outbox-retention.js';

const DAY_MS = 24 * 60 * 60 * 1000;

describe('outbox retention', () => {
  let t: TestApp;
  let tenant: string;
  let ok: HttpReceiver;
  let down: HttpReceiver;

  before(async () => {
    t = await sharedTestApp();
    ok = await startReceiver();
    down = await startReceiver();
    down.responder = (_req, res) => { res.writeHead(500); res.end('down'); };
  });

  after(async () => {
    await ok.stop();
    await down.stop();
  });

  beforeEach(async () => {
    tenant = await createTenant(t, 'ret');
  });

  const retention = () => t.app.kernel.background.get('outbox-retention') as OutboxRetention;
  const connector = async (url: string, events: string[]) => {
    const res = await t.http.post('/api/v1/connectors').set(as(tenant, 'admin')).send({ url, events });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body.data.id as string;
  };
  const deliveries = async (connectorId: string) => {
    const res = await t.http.get(`/api/v1/connectors/${connectorId}/deliveries`).set(as(tenant, 'admin'));
    expect(res.status).to.equal(200);
    return res.body.data.items as Array<{ status: string }>;
  };
  const eventsOfTenant = async () => Number((await t.app.kernel.db.knex('outbox_events').where('tenant_id', tenant).count({ n: '*' }))[0].n);
  const until = async (check: () => Promise<boolean>) => {
    const deadline = Date.now() + 10_000;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error('timed out');
      await new Promise((r) => setTimeout(r, 50));
    }
  };

  it('deletes finished deliveries and settled events past the retention period and keeps pending work', async () => {
    const delivered = await connector(`${ok.url}/hook`, ['shop.done']);
    const failing = await connector(`${down.url}/hook`, ['shop.pending']);
    await t.http.post('/api/v1/events/publish').set(as(tenant, 'editor')).send({ event: 'shop.done', payload: {} }).expect(202);
    await t.http.post('/api/v1/events/publish').set(as(tenant, 'editor')).send({ event: 'shop.pending', payload: {} }).expect(202);
    // An event no connector wants: nothing is ever delivered for it.
    await t.http.post('/api/v1/events/publish').set(as(tenant, 'editor')).send({ event: 'shop.ignored', payload: {} }).expect(202);
    await until(async () => (await deliveries(delivered))[0]?.status === 'delivered');
    await until(async () => down.requests.length > 0);
    expect(await eventsOfTenant()).to.equal(3);

    // Within the retention period nothing goes.
    await retention().pruneOnce(new Date());
    expect(await deliveries(delivered)).to.have.length(1);
    expect(await eventsOfTenant()).to.equal(3);

    // Past it: the delivered delivery and the settled events go; the pending delivery and its event stay.
    const result = await retention().pruneOnce(new Date(Date.now() + 8 * DAY_MS));
    expect(result.deliveries).to.be.at.least(1);
    expect(result.events).to.be.at.least(2);
    expect(await deliveries(delivered)).to.deep.equal([]);
    const pending = await deliveries(failing);
    expect(pending.map((d) => d.status)).to.deep.equal(['pending']);
    expect(await eventsOfTenant()).to.equal(1);
  });
});
