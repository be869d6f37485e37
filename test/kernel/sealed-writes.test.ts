import { expect } from 'chai';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { mcpClient, toolError } from '../helpers/mcp-client.js';
import { createTenant, sharedTestApp, type TestApp } from '../helpers/test-app.js';
import { as } from '../helpers/tokens.js';
import { Shop } from '../packs/erp/shop.js';
import type { PlatformEvent } from '../../core/events/event.js';

type Json = Record<string, any>;

const TICKET_BODY = { type: 'complaint', subject: 'Late', description: 'It came late.', customerRef: 'cust-1' };

/**
 * Sealed schemas (`erp.order`, `crm.ticket`) are written only by their pack: every other way in (the data API,
 * bulk, import, the MCP tools) is refused with 403 forbidden by the records service, and nothing is written.
 */
describe('sealed schemas: erp.order and crm.ticket are written only by their pack', () => {
  let t: TestApp;
  let tenant: string;
  let client: Client;
  /** One record of each sealed schema, written by its pack, and a body another caller might try. */
  let sealed: Array<{ ns: string; schema: string; record: Json; body: Json; patch: Json }>;

  before(async () => {
    t = await sharedTestApp();
  });

  beforeEach(async () => {
    tenant = await createTenant(t, 'sealed');
    const shop = new Shop(t, tenant);
    const product = await shop.product();
    const placed = await shop.order([{ productId: product.number, quantity: 1, unitPrice: product.priceCents }]);
    expect(placed.status, JSON.stringify(placed.body)).to.equal(201);
    const opened = await t.http.post('/api/v1/crm/support-tickets').set(as(tenant, 'editor')).send(TICKET_BODY);
    expect(opened.status, JSON.stringify(opened.body)).to.equal(201);
    const bodyOf = ({ id: _i, createdAt: _c, updatedAt: _u, version: _v, ...rest }: Json) => ({ ...rest, number: rest.number + 1000 });
    const order = placed.body.data;
    const ticket = opened.body.data;
    sealed = [
      { ns: 'erp', schema: 'order', record: order, body: bodyOf(order), patch: { status: 'cancelled' } },
      { ns: 'crm', schema: 'ticket', record: ticket, body: { ...bodyOf(ticket), number: 'PQRS-2020-000001' }, patch: { status: 'closed' } },
    ];
    client = await mcpClient(t, '/api/v1/mcp', as(tenant, 'admin'));
  });

  afterEach(() => client?.close());

  /** The records of the schema (as the data API reads them) and the one written by the pack, unchanged. */
  const expectUnchanged = async ({ ns, schema, record }: (typeof sealed)[number]) => {
    const list = await t.http.get(`/api/v1/data/${ns}/${schema}`).set(as(tenant, 'viewer'));
    expect(list.status).to.equal(200);
    expect(list.body.data.items).to.have.length(1);
    expect(list.body.data.items[0]).to.deep.equal(record);
  };

  it('answers 403 forbidden to POST, PATCH and DELETE on /data, and writes nothing', async () => {
    for (const target of sealed) {
      const path = `/api/v1/data/${target.ns}/${target.schema}`;
      const answers = [
        await t.http.post(path).set(as(tenant, 'admin')).send(target.body),
        await t.http.patch(`${path}/${target.record.id}`).set(as(tenant, 'admin')).send(target.patch),
        await t.http.delete(`${path}/${target.record.id}`).set(as(tenant, 'admin')),
      ];
      for (const res of answers) {
        expect(res.status, `${target.ns}.${target.schema}: ${JSON.stringify(res.body)}`).to.equal(403);
        expect(res.body.data.code).to.equal('forbidden');
      }
      await expectUnchanged(target);
    }
  });

  it('answers 403 forbidden to bulk writes and upserts, and writes nothing', async () => {
    for (const target of sealed) {
      const path = `/api/v1/data/${target.ns}/${target.schema}/bulk`;
      const answers = [
        await t.http.post(path).set(as(tenant, 'admin')).send({ items: [target.body] }),
        await t.http.post(`${path}?upsert=number`).set(as(tenant, 'admin')).send({ items: [{ ...target.body, number: target.record.number }] }),
      ];
      for (const res of answers) {
        expect(res.status, `${target.ns}.${target.schema}: ${JSON.stringify(res.body)}`).to.equal(403);
        expect(res.body.data.code).to.equal('forbidden');
      }
      await expectUnchanged(target);
    }
  });

  it('answers 403 forbidden to an import, plain or atomic, and writes nothing', async () => {
    for (const target of sealed) {
      for (const query of ['', '?atomic=true']) {
        const res = await t.http.post(`/api/v1/data/${target.ns}/${target.schema}/import${query}`).set(as(tenant, 'admin'))
          .set('Content-Type', 'application/x-ndjson').send(`${JSON.stringify(target.body)}\n`);
        expect(res.status, `${target.ns}.${target.schema}${query}: ${JSON.stringify(res.body)}`).to.equal(403);
        expect(res.body.data.code).to.equal('forbidden');
      }
      await expectUnchanged(target);
    }
  });

  it('gives the MCP tools create_record and update_record an isError result with code forbidden, and writes nothing', async () => {
    for (const target of sealed) {
      const calls = [
        await client.callTool({ name: 'create_record', arguments: { namespace: target.ns, schema: target.schema, data: target.body } }),
        await client.callTool({ name: 'create_record', arguments: { namespace: target.ns, schema: target.schema, data: target.body, idempotencyKey: `k-${target.schema}` } }),
        await client.callTool({ name: 'update_record', arguments: { namespace: target.ns, schema: target.schema, id: target.record.id, patch: target.patch } }),
      ] as CallToolResult[];
      for (const result of calls) {
        expect(result.isError, JSON.stringify(result)).to.equal(true);
        expect(toolError(result).code).to.equal('forbidden');
      }
      await expectUnchanged(target);
    }
  });
});

describe('record events of sealed schemas are the kernel\'s: once each, with previous', () => {
  let t: TestApp;
  let tenant: string;
  const seen: PlatformEvent[] = [];

  before(async () => {
    t = await sharedTestApp();
    t.app.kernel.events.on('erp.order.*', (event) => { seen.push(event); });
    t.app.kernel.events.on('crm.ticket.*', (event) => { seen.push(event); });
  });

  beforeEach(async () => {
    tenant = await createTenant(t, 'sealed-events');
  });

  const eventsOf = (id: string) => seen.filter((e) => e.tenantId === tenant && (e.payload as Json).id === id);

  it('publishes erp.order.created (previous null) and erp.order.updated (previous: the placed order) once each', async () => {
    const shop = new Shop(t, tenant);
    const product = await shop.product();
    const placed = await shop.order([{ productId: product.number, quantity: 1, unitPrice: product.priceCents }]);
    expect(placed.status, JSON.stringify(placed.body)).to.equal(201);
    const order = placed.body.data;
    const paid = await t.http.patch(`/api/v1/erp/orders/${order.id}`).set(as(tenant, 'editor')).send({ status: 'paid' });
    expect(paid.status, JSON.stringify(paid.body)).to.equal(200);
    await waitFor(() => eventsOf(order.id).length >= 2);
    const events = eventsOf(order.id);
    expect(events.map((e) => e.name)).to.deep.equal(['erp.order.created', 'erp.order.updated']);
    expect(events[0].payload).to.deep.include({ namespace: 'erp', schema: 'order', id: order.id, record: order, previous: null });
    expect(events[1].payload).to.deep.include({ record: paid.body.data, previous: order });
  });

  it('publishes crm.ticket.created (previous null) and crm.ticket.updated (previous: the ticket before) once each', async () => {
    const opened = await t.http.post('/api/v1/crm/support-tickets').set(as(tenant, 'editor')).send(TICKET_BODY);
    expect(opened.status, JSON.stringify(opened.body)).to.equal(201);
    const ticket = opened.body.data;
    const moved = await t.http.patch(`/api/v1/crm/support-tickets/${ticket.id}`).set(as(tenant, 'editor')).send({ status: 'open' });
    expect(moved.status, JSON.stringify(moved.body)).to.equal(200);
    await waitFor(() => eventsOf(ticket.id).length >= 2);
    const events = eventsOf(ticket.id);
    expect(events.map((e) => e.name)).to.deep.equal(['crm.ticket.created', 'crm.ticket.updated']);
    expect(events[0].payload).to.deep.include({ record: ticket, previous: null });
    expect(events[1].payload).to.deep.include({ record: moved.body.data, previous: ticket });
  });
});

async function waitFor(check: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
  // Any event published twice would come with the first.
  await new Promise((r) => setTimeout(r, 50));
}
