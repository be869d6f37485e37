import { createHmac, timingSafeEqual } from 'node:crypto';
import { expect } from 'chai';
import { Webhook } from 'standardwebhooks';
import { startReceiver, type HttpReceiver, type ReceivedRequest } from '../helpers/http-receiver.js';
import { createTenant, startTestApp, type TestApp } from '../helpers/test-app.js';
import { as } from '../helpers/tokens.js';
import { waitUntil } from '../helpers/wait.js';

const SIGNING_SECRET = 'test-signing-secret-0123456789abcdefghij';

/** A hand check of X-Platform-Signature, as a receiver would write it. */
function verifyPlatformSignature(req: ReceivedRequest, secret: string): boolean {
  const header = String(req.headers['x-platform-signature']);
  const parts = Object.fromEntries(header.split(',').map((p) => p.split('=') as [string, string]));
  const expected = createHmac('sha256', secret).update(`${parts.t}.${req.body}`).digest('hex');
  return Math.abs(Date.now() / 1000 - Number(parts.t)) < 300 && timingSafeEqual(Buffer.from(expected), Buffer.from(parts.v1));
}

function standardVerify(req: ReceivedRequest, secret: string): unknown {
  const wh = new Webhook(`whsec_${Buffer.from(secret).toString('base64')}`);
  return wh.verify(req.body, {
    'webhook-id': String(req.headers['webhook-id']),
    'webhook-timestamp': String(req.headers['webhook-timestamp']),
    'webhook-signature': String(req.headers['webhook-signature']),
  });
}

describe('event delivery to connectors', () => {
  let t: TestApp;
  let tenant: string;
  let receiver: HttpReceiver;

  before(async () => {
    t = await startTestApp({
      env: { DISPATCHER_RETRY_BASE_MS: '100', DISPATCHER_TIMEOUT_MS: '1000', DISPATCHER_RETRY_WINDOW_MS: '4000' },
    });
  });

  after(async () => {
    await t.close();
  });

  beforeEach(async () => {
    tenant = await createTenant(t, 'dlv');
    receiver = await startReceiver();
  });

  afterEach(async () => {
    await receiver.stop();
  });

  async function connector(body: Record<string, unknown>, who = tenant): Promise<string> {
    const res = await t.http.post('/api/v1/connectors').set(as(who, 'admin')).send({ url: `${receiver.url}/hook`, events: ['shop.*'], ...body });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body.data.id;
  }

  async function publish(event: string, payload: Record<string, unknown>, who = tenant, product?: string) {
    const res = await t.http.post('/api/v1/events/publish').set(as(who, 'editor')).send({ event, payload, ...(product ? { product } : {}) });
    expect(res.status, JSON.stringify(res.body)).to.equal(202);
    return res.body.data as { id: string; deliveries: number };
  }

  async function deliveries(connectorId: string, who = tenant) {
    const res = await t.http.get(`/api/v1/connectors/${connectorId}/deliveries`).set(as(who, 'admin'));
    expect(res.status).to.equal(200);
    return res.body.data as { items: any[]; pagination: any };
  }

  it('POSTs the envelope with both signatures, verified by the standardwebhooks package and by hand', async () => {
    const id = await connector({});
    const published = await publish('shop.order.created', { orderId: 'o-1', total: 42 }, tenant, 'shop');
    expect(published.deliveries).to.equal(1);
    const [req] = await receiver.waitFor(1);
    expect(req.method).to.equal('POST');
    expect(req.path).to.equal('/hook');
    expect(req.headers['content-type']).to.equal('application/json');
    expect(req.headers['x-platform-event']).to.equal('shop.order.created');
    const body = JSON.parse(req.body);
    expect(body).to.deep.include({ id: published.id, event: 'shop.order.created', tenantId: tenant, product: 'shop', payload: { orderId: 'o-1', total: 42 } });
    expect(body.occurredAt).to.match(/^\d{4}-\d\d-\d\dT/);
    expect(verifyPlatformSignature(req, SIGNING_SECRET)).to.equal(true);
    expect(verifyPlatformSignature(req, 'another-secret')).to.equal(false);
    expect(standardVerify(req, SIGNING_SECRET)).to.deep.equal(body);
    expect(() => standardVerify(req, 'another-secret-0123456789')).to.throw();

    const log = await waitUntil('delivered', async () => {
      const d = (await deliveries(id)).items[0];
      return d?.status === 'delivered' ? d : null;
    });
    expect(log.id).to.equal(req.headers['x-platform-delivery']);
    expect(log.id).to.equal(req.headers['webhook-id']);
    expect(log.attempts).to.have.length(1);
    expect(log.attempts[0]).to.include({ attempt: 1, statusCode: 200, error: null });
    expect(log.attempts[0].durationMs).to.be.a('number');
  });

  it('signs with the connector\'s own secret when it has one', async () => {
    const own = 'connector-own-secret-abcdef0123456789';
    await connector({ secret: own });
    await publish('shop.cart.updated', { n: 1 });
    const [req] = await receiver.waitFor(1);
    expect(verifyPlatformSignature(req, own)).to.equal(true);
    expect(verifyPlatformSignature(req, SIGNING_SECRET)).to.equal(false);
    expect(standardVerify(req, own)).to.have.property('event', 'shop.cart.updated');
  });

  it('delivers a record event raised by the data API (written to the outbox in the write transaction)', async () => {
    const schema = await t.http.post('/api/v1/metadata/schemas').set(as(tenant, 'admin')).send({
      namespace: 'shop', name: 'item', schema: { type: 'object', properties: { title: { type: 'string' } } },
    });
    expect(schema.status, JSON.stringify(schema.body)).to.equal(201);
    await connector({ events: ['shop.item.created'] });
    const created = await t.http.post('/api/v1/data/shop/item').set(as(tenant, 'editor')).send({ title: 'Lamp' });
    expect(created.status).to.equal(201);
    const [req] = await receiver.waitFor(1);
    const body = JSON.parse(req.body);
    expect(body.event).to.equal('shop.item.created');
    expect(body.payload.id).to.equal(created.body.data.item.id);
  });

  it('retries after a 500 and records both attempts (500 then 200)', async () => {
    let calls = 0;
    receiver.responder = (_req, res) => {
      calls += 1;
      res.writeHead(calls === 1 ? 500 : 200, { 'Content-Type': 'text/plain' });
      res.end(calls === 1 ? 'boom' : 'ok');
    };
    const id = await connector({});
    await publish('shop.order.paid', { n: 1 });
    const reqs = await receiver.waitFor(2);
    expect(reqs[0].headers['x-platform-delivery']).to.equal(reqs[1].headers['x-platform-delivery']);
    const log = await waitUntil('delivered', async () => {
      const d = (await deliveries(id)).items[0];
      return d?.status === 'delivered' ? d : null;
    });
    expect(log.attempts.map((a: any) => a.statusCode)).to.deep.equal([500, 200]);
    expect(log.attempts[0].error).to.equal('HTTP 500: boom');
  });

  it('keeps every attempt\'s answer: its time, status, headers and the first KiB of a 3 KiB body', async () => {
    // 3 KiB of text, the last line of each KiB named so a reader sees where the kept part ends.
    const body = ['A', 'B', 'C'].map((kib) => `${kib}`.repeat(1023) + '\n').join('');
    let calls = 0;
    receiver.responder = (_req, res) => {
      calls += 1;
      res.writeHead(calls === 1 ? 503 : 202, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Receiver-Trace': `trace-${calls}`, 'Cache-Control': 'no-store' });
      res.end(body);
    };
    const id = await connector({});
    const started = new Date().toISOString();
    await publish('shop.order.paid', { n: 7 });
    await receiver.waitFor(2);
    const listed = await waitUntil('delivered', async () => {
      const d = (await deliveries(id)).items[0];
      return d?.status === 'delivered' ? d : null;
    });
    const res = await t.http.get(`/api/v1/connectors/${id}/deliveries/${listed.id}`).set(as(tenant, 'admin')).expect(200);
    const { attempts } = res.body.data;
    expect(attempts.map((a: any) => a.statusCode)).to.deep.equal([503, 202]);
    attempts.forEach((a: any, i: number) => {
      // When each attempt ended, in order, after the event was published.
      expect(a.at >= started, a.at).to.equal(true);
      if (i) expect(a.at >= attempts[i - 1].at).to.equal(true);
      expect(a.responseHeaders).to.include({ 'content-type': 'text/plain; charset=utf-8', 'x-receiver-trace': `trace-${i + 1}`, 'cache-control': 'no-store' });
      expect(a.responseBody).to.equal(body.slice(0, 1024));
      expect(Buffer.byteLength(a.responseBody)).to.equal(1024);
    });
    // The request the attempts sent, byte for byte, beside them.
    expect(JSON.parse(res.body.data.request.body).payload).to.deep.equal({ n: 7 });
    // The same answers on the log.
    expect(listed.attempts[1].responseHeaders['x-receiver-trace']).to.equal('trace-2');
    // The OpenAPI document describes them.
    const doc = (await t.http.get('/api/v1/openapi.json').expect(200)).body;
    const json = JSON.stringify(doc);
    expect(json).to.contain('responseHeaders').and.contain('responseBody');
  });

  it('delivers once the receiver is up again (receiver down, then up)', async () => {
    const port = receiver.port;
    await receiver.stop();
    const id = await connector({});
    await publish('shop.order.created', { n: 2 });
    const failed = await waitUntil('a failed attempt', async () => {
      const d = (await deliveries(id)).items[0];
      return d?.attempts.length >= 1 ? d : null;
    });
    expect(failed.status).to.equal('pending');
    expect(failed.attempts[0].statusCode).to.equal(null);
    expect(failed.attempts[0].error).to.match(/ECONNREFUSED/);
    await receiver.start(port);
    const [req] = await receiver.waitFor(1);
    expect(JSON.parse(req.body).payload).to.deep.equal({ n: 2 });
    await waitUntil('delivered', async () => (await deliveries(id)).items[0]?.status === 'delivered');
  });

  it('waits as long as Retry-After says before the next attempt', async () => {
    let calls = 0;
    receiver.responder = (_req, res) => {
      calls += 1;
      res.writeHead(calls === 1 ? 503 : 200, calls === 1 ? { 'Retry-After': '1' } : {});
      res.end();
    };
    await connector({});
    await publish('shop.order.created', { n: 3 });
    const reqs = await receiver.waitFor(2);
    const gap = reqs[1].receivedAt - reqs[0].receivedAt;
    // The back-off alone would retry after about 100 ms.
    expect(gap).to.be.at.least(950);
  });

  it('disables the connector on 410 and cancels its queue; later events queue nothing for it', async () => {
    receiver.serve({ '/hook': { status: 410, body: 'gone' } });
    const id = await connector({});
    await publish('shop.order.created', { n: 4 });
    const connectorAfter = await waitUntil('connector disabled', async () => {
      const c = (await t.http.get(`/api/v1/connectors/${id}`).set(as(tenant, 'admin'))).body.data;
      return c.active === false ? c : null;
    });
    expect(connectorAfter.disabledReason).to.equal('gone');
    const log = (await deliveries(id)).items[0];
    expect(log.status).to.equal('failed');
    expect(log.attempts[0].statusCode).to.equal(410);
    expect((await publish('shop.order.created', { n: 5 })).deliveries).to.equal(0);
    expect(receiver.requests).to.have.length(1);
  });

  it('times out a hanging receiver while another connector gets its delivery at once', async () => {
    const hanging = await startReceiver();
    hanging.responder = () => { /* never answers */ };
    try {
      const slowId = await connector({ url: `${hanging.url}/slow` });
      await connector({});
      const started = Date.now();
      await publish('shop.order.created', { n: 6 });
      await receiver.waitFor(1);
      expect(Date.now() - started).to.be.below(800);
      const log = await waitUntil('timeout recorded', async () => {
        const d = (await deliveries(slowId)).items[0];
        return d?.attempts.length ? d : null;
      });
      expect(log.attempts[0].error).to.match(/within 1000 ms/);
      expect(log.attempts[0].durationMs).to.be.at.least(900);
    } finally {
      await hanging.stop();
    }
  });

  it('marks a delivery failed when the retry window is over, and POST .../retry sends it again', async () => {
    receiver.serve({ '/hook': { status: 500, body: 'down' } });
    const id = await connector({});
    await publish('shop.order.created', { n: 7 });
    const failed = await waitUntil('failed', async () => {
      const d = (await deliveries(id)).items[0];
      return d?.status === 'failed' ? d : null;
    }, 15_000);
    expect(failed.attempts.length).to.be.at.least(3);
    const gaps = failed.attempts.slice(1).map((a: any, i: number) => Date.parse(a.at) - Date.parse(failed.attempts[i].at));
    expect(gaps[1]).to.be.greaterThan(gaps[0] * 0.9);

    receiver.serve({ '/hook': 'fine' });
    const before = receiver.requests.length;
    const retried = await t.http.post(`/api/v1/connectors/${id}/deliveries/${failed.id}/retry`).set(as(tenant, 'admin'));
    expect(retried.status).to.equal(202);
    expect(retried.body.data.status).to.equal('pending');
    await receiver.waitFor(before + 1);
    await waitUntil('delivered after retry', async () => (await deliveries(id)).items[0]?.status === 'delivered');
  });

  it('GET /api/v1/connectors/:id/deliveries pages newest first and filters by status', async () => {
    const id = await connector({});
    const published: string[] = [];
    for (let n = 0; n < 3; n++) published.push((await publish('shop.page.viewed', { n })).id);
    await receiver.waitFor(3);
    await waitUntil('all delivered', async () => (await t.http.get(`/api/v1/connectors/${id}/deliveries?status=delivered`).set(as(tenant, 'admin'))).body.data.pagination.total === 3);
    const page = await t.http.get(`/api/v1/connectors/${id}/deliveries?limit=2`).set(as(tenant, 'admin'));
    expect(page.status).to.equal(200);
    expect(page.body.data.items.map((d: any) => d.eventId)).to.deep.equal([published[2], published[1]]);
    expect(page.body.data.pagination).to.include({ limit: 2, offset: 0, total: 3, hasMore: true });
    const rest = await t.http.get(`/api/v1/connectors/${id}/deliveries?limit=2&offset=2`).set(as(tenant, 'admin'));
    expect(rest.body.data.items.map((d: any) => d.eventId)).to.deep.equal([published[0]]);
    const failed = await t.http.get(`/api/v1/connectors/${id}/deliveries?status=failed`).set(as(tenant, 'admin'));
    expect(failed.body.data.items).to.deep.equal([]);
    const bad = await t.http.get(`/api/v1/connectors/${id}/deliveries?status=lost`).set(as(tenant, 'admin'));
    expect(bad.status).to.equal(400);
  });

  it('answers 409 conflict on retry while the delivery is being attempted, and never sends it twice at once', async () => {
    let open = 0;
    let maxOpen = 0;
    receiver.responder = async (_req, res) => {
      open++;
      maxOpen = Math.max(maxOpen, open);
      await new Promise((r) => setTimeout(r, 800));
      open--;
      res.writeHead(200);
      res.end('ok');
    };
    const id = await connector({});
    await publish('shop.order.created', { n: 9 });
    await receiver.waitFor(1);
    const deliveryId = String(receiver.requests[0].headers['x-platform-delivery']);
    const retried = await t.http.post(`/api/v1/connectors/${id}/deliveries/${deliveryId}/retry`).set(as(tenant, 'admin'));
    expect(retried.status, JSON.stringify(retried.body)).to.equal(409);
    expect(retried.body.error.code).to.equal('conflict');
    expect(retried.body.message).to.match(/being attempted right now/);
    const delivered = await waitUntil('delivered', async () => {
      const d = (await deliveries(id)).items[0];
      return d?.status === 'delivered' ? d : null;
    });
    expect(delivered.attempts).to.have.length(1);
    expect(maxOpen).to.equal(1);

    // Once the attempt is recorded, retry sends it again.
    const again = await t.http.post(`/api/v1/connectors/${id}/deliveries/${deliveryId}/retry`).set(as(tenant, 'admin'));
    expect(again.status).to.equal(202);
    await receiver.waitFor(2);
    await waitUntil('delivered twice', async () => (await deliveries(id)).items[0]?.attempts.length === 2);
    expect(receiver.requests.map((r) => r.headers['x-platform-delivery'])).to.deep.equal([deliveryId, deliveryId]);
    expect(maxOpen).to.equal(1);
  });

  it('answers 404 for a delivery of another connector on retry', async () => {
    const id = await connector({});
    const res = await t.http.post(`/api/v1/connectors/${id}/deliveries/00000000-0000-7000-8000-000000000000/retry`).set(as(tenant, 'admin'));
    expect(res.status).to.equal(404);
  });

  it('never delivers tenant B\'s events to tenant A\'s connector', async () => {
    const other = await createTenant(t, 'dlv');
    await connector({ events: ['*'] });
    const b = await publish('shop.secret.created', { of: 'B' }, other);
    expect(b.deliveries).to.equal(0);
    await publish('shop.visible.created', { of: 'A' });
    await receiver.waitFor(1);
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.requests.map((r) => JSON.parse(r.body).payload.of)).to.deep.equal(['A']);
    expect(receiver.requests.every((r) => JSON.parse(r.body).tenantId === tenant)).to.equal(true);
  });
  it('shows one delivery\'s attempts with their times and the request sent (URL, headers, the very body), and filters the log by status and event', async () => {
    let answered = 0;
    receiver.responder = (_req, res) => {
      answered++;
      if (answered === 1) {
        res.writeHead(503, { 'Content-Type': 'text/plain' });
        res.end('busy, try again');
      } else {
        res.writeHead(200);
        res.end('ok');
      }
    };
    const id = await connector({});
    await publish('shop.order.created', { orderId: 'o-7' });
    const delivered = await waitUntil('delivered on the second attempt', async () => {
      const d = (await deliveries(id)).items[0];
      return d?.status === 'delivered' ? d : null;
    });
    const res = await t.http.get(`/api/v1/connectors/${id}/deliveries/${delivered.id}`).set(as(tenant, 'admin'));
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const detail = res.body.data;
    expect(detail.attempts.map((a: any) => [a.attempt, a.statusCode])).to.deep.equal([[1, 503], [2, 200]]);
    expect(detail.attempts[0].error).to.equal('HTTP 503: busy, try again');
    expect(Date.parse(detail.attempts[0].at)).to.be.at.most(Date.parse(detail.attempts[1].at));
    const sent = receiver.requests[1];
    expect(detail.request).to.deep.equal({
      method: 'POST', url: `${receiver.url}/hook`,
      headers: { 'Content-Type': 'application/json', 'X-Platform-Event': 'shop.order.created', 'X-Platform-Delivery': delivered.id },
      signatureHeaders: ['X-Platform-Signature', 'webhook-id', 'webhook-timestamp', 'webhook-signature'],
      body: sent.body,
    });

    // A second event that fails for good (410): the log by status and by event name.
    receiver.responder = (_req, r) => { r.writeHead(410); r.end(); };
    await publish('shop.refund.created', { refundId: 'r-1' });
    await waitUntil('the failed delivery', async () => (await deliveries(id)).items.some((d) => d.status === 'failed'));
    const list = async (query: Record<string, string>) =>
      (await t.http.get(`/api/v1/connectors/${id}/deliveries`).query(query).set(as(tenant, 'admin')).expect(200)).body.data.items.map((d: any) => d.event);
    expect(await list({ status: 'failed' })).to.deep.equal(['shop.refund.created']);
    expect(await list({ event: 'shop.order.created' })).to.deep.equal(['shop.order.created']);
    expect(await list({ event: 'shop.order.created', status: 'failed' })).to.deep.equal([]);

    const other = await connector({});
    expect((await t.http.get(`/api/v1/connectors/${other}/deliveries/${delivered.id}`).set(as(tenant, 'admin'))).status).to.equal(404);
    expect((await t.http.get(`/api/v1/connectors/${id}/deliveries/${delivered.id}`).set(as(tenant, 'editor'))).status).to.equal(403);
  });
});
