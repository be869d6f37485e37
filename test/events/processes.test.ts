import { expect } from 'chai';
import { createTestDatabase, ENGINE, type TestDatabase } from '../helpers/engine.js';
import { startReceiver, type HttpReceiver } from '../helpers/http-receiver.js';
import { startServiceProcess, type ServiceProcess } from '../helpers/service-process.js';
import { superadmin } from '../helpers/tokens.js';
import { uniqueTenantId } from '../helpers/test-app.js';

async function setUpTenant(service: ServiceProcess, receiverUrl: string): Promise<{ tenant: string; connectorId: string }> {
  const tenant = uniqueTenantId('proc');
  const created = await service.http.post('/api/v1/admin/tenants').set(superadmin()).send({ id: tenant, name: 'Processes' });
  expect(created.status, JSON.stringify(created.body)).to.equal(201);
  const connector = await service.http.post('/api/v1/connectors').set(superadmin(tenant)).send({ url: `${receiverUrl}/hook`, events: ['proc.*'] });
  expect(connector.status, JSON.stringify(connector.body)).to.equal(201);
  return { tenant, connectorId: connector.body.data.id };
}

async function publish(service: ServiceProcess, tenant: string, n: number): Promise<string> {
  const res = await service.http.post('/api/v1/events/publish').set(superadmin(tenant)).send({ event: 'proc.item.created', payload: { n } });
  expect(res.status, JSON.stringify(res.body)).to.equal(202);
  expect(res.body.data.deliveries).to.equal(1);
  return res.body.data.id;
}

describe(`the service as a process (npm start, ${ENGINE})`, function () {
  this.timeout(120_000);
  let database: TestDatabase;
  let receiver: HttpReceiver;
  const services: ServiceProcess[] = [];

  beforeEach(async () => {
    database = await createTestDatabase();
    receiver = await startReceiver();
  });

  afterEach(async () => {
    for (const s of services.splice(0)) {
      s.kill('SIGKILL');
      await s.exited;
    }
    await receiver.stop();
    await database.drop();
  });

  it('delivers events committed before a SIGKILL once the service is started again', async () => {
    // Dispatcher off: the events are committed and not yet delivered when the process dies.
    const first = await startServiceProcess(database.url, { DISPATCHER_ENABLED: 'false' });
    services.push(first);
    const { tenant } = await setUpTenant(first, receiver.url);
    const ids: string[] = [];
    for (let n = 0; n < 5; n++) ids.push(await publish(first, tenant, n));
    first.kill('SIGKILL');
    expect(await first.exited).to.equal('SIGKILL');
    expect(receiver.requests).to.have.length(0);

    const second = await startServiceProcess(database.url);
    services.push(second);
    await receiver.waitFor(5, 20_000);
    expect(receiver.requests.map((r) => JSON.parse(r.body).id).sort()).to.deep.equal([...ids].sort());
  });

  it('runs a pack handler whose event was committed before a SIGKILL once the service is started again', async () => {
    // Dispatcher off: the won deal is committed with its handler run queued, and the handler has not run.
    const first = await startServiceProcess(database.url, { DISPATCHER_ENABLED: 'false' });
    services.push(first);
    const { tenant } = await setUpTenant(first, receiver.url);
    const deal = await first.http.post('/api/v1/crm/deals').set(superadmin(tenant)).send({ title: 'Won before the crash', valueCents: 4200, stage: 'won' });
    expect(deal.status, JSON.stringify(deal.body)).to.equal(201);
    const invoices = (service: ServiceProcess) => service.http.get('/api/v1/erp/invoices').query({ 'filter[dealId]': deal.body.data.id }).set(superadmin(tenant));
    expect((await invoices(first)).body.data.items).to.have.length(0);
    first.kill('SIGKILL');
    expect(await first.exited).to.equal('SIGKILL');

    const second = await startServiceProcess(database.url);
    services.push(second);
    let items: Array<Record<string, unknown>> = [];
    for (let i = 0; i < 200 && !items.length; i++) {
      items = (await invoices(second)).body.data.items;
      if (!items.length) await new Promise((r) => setTimeout(r, 100));
    }
    expect(items).to.have.length(1);
    expect(items[0]).to.include({ dealId: deal.body.data.id, status: 'draft', totalCents: 4200 });
    const runs = await second.http.get('/api/v1/events/handler-runs').query({ handler: 'erp:crm.deal.created' }).set(superadmin(tenant));
    expect(runs.body.data.map((r: { status: string; attemptCount: number }) => [r.status, r.attemptCount])).to.deep.equal([['delivered', 1]]);
  });

  it('re-takes a delivery whose process was SIGKILLed during the attempt once its claim expires', async () => {
    const env = { DISPATCHER_TIMEOUT_MS: '1000', DISPATCHER_CLAIM_TTL_MS: '3000' };
    let answering = false;
    receiver.responder = (_req, res) => {
      if (!answering) return; // hangs: the attempt is under way when the process dies
      res.writeHead(200);
      res.end();
    };
    const first = await startServiceProcess(database.url, env);
    services.push(first);
    const { tenant, connectorId } = await setUpTenant(first, receiver.url);
    const id = await publish(first, tenant, 1);
    await receiver.waitFor(1);
    first.kill('SIGKILL');
    await first.exited;
    answering = true;
    const killedAt = Date.now();

    const second = await startServiceProcess(database.url, env);
    services.push(second);
    await receiver.waitFor(2, 20_000);
    expect(JSON.parse(receiver.requests[1].body).id).to.equal(id);
    // Not before the dead process's claim (3 s) ran out.
    expect(receiver.requests[1].receivedAt - receiver.requests[0].receivedAt).to.be.at.least(2500);
    let item: any;
    for (let i = 0; i < 100; i++) {
      const log = await second.http.get(`/api/v1/connectors/${connectorId}/deliveries`).set(superadmin(tenant));
      item = log.body.data.items[0];
      if (item.status === 'delivered') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(item.status).to.equal('delivered');
    // The killed process never recorded its attempt: the one attempt logged is the second process's.
    expect(item.attempts).to.have.length(1);
    expect(item.attempts[0].statusCode).to.equal(200);
    expect(Date.now() - killedAt).to.be.below(20_000);
  });

  it('on SIGTERM finishes the attempt under way, records it and exits within 25 s', async () => {
    receiver.responder = (_req, res) => {
      setTimeout(() => { res.writeHead(200); res.end('late but fine'); }, 1500);
    };
    const service = await startServiceProcess(database.url);
    services.push(service);
    const { tenant, connectorId } = await setUpTenant(service, receiver.url);
    await publish(service, tenant, 1);
    await receiver.waitFor(1);
    const started = Date.now();
    service.kill('SIGTERM');
    expect(await service.exited).to.equal(0);
    expect(Date.now() - started).to.be.below(25_000);

    const again = await startServiceProcess(database.url);
    services.push(again);
    const log = await again.http.get(`/api/v1/connectors/${connectorId}/deliveries`).set(superadmin(tenant));
    expect(log.body.data.items[0].status).to.equal('delivered');
    expect(log.body.data.items[0].attempts).to.have.length(1);
    await new Promise((r) => setTimeout(r, 500));
    expect(receiver.requests).to.have.length(1);
  });

  if (ENGINE === 'postgres') {
    it('two processes on one PostgreSQL deliver 500 events, none lost and none sent twice at once', async () => {
      const inFlight = new Set<string>();
      let overlapping = 0;
      receiver.responder = (req, res) => {
        const id = String(req.headers['x-platform-delivery']);
        if (inFlight.has(id)) overlapping += 1;
        inFlight.add(id);
        setTimeout(() => {
          inFlight.delete(id);
          res.writeHead(200);
          res.end();
        }, Math.floor(Math.random() * 5));
      };
      const a = await startServiceProcess(database.url);
      services.push(a);
      const b = await startServiceProcess(database.url);
      services.push(b);
      const { tenant } = await setUpTenant(a, receiver.url);
      const ids: string[] = [];
      for (let batch = 0; batch < 25; batch++) {
        const published = await Promise.all(Array.from({ length: 20 }, (_, i) => publish(i % 2 ? a : b, tenant, batch * 20 + i)));
        ids.push(...published);
      }
      await receiver.waitFor(500, 60_000);
      await new Promise((r) => setTimeout(r, 1000));
      const received = receiver.requests.map((r) => JSON.parse(r.body).id as string);
      expect(new Set(received).size).to.equal(500);
      expect([...new Set(received)].sort()).to.deep.equal([...ids].sort());
      expect(overlapping).to.equal(0);
      expect(received).to.have.length(500);
    });
  }
});
