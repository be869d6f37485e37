import { expect } from 'chai';
import { LATEST_PROTOCOL_VERSION, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { mcpClient, toolError } from '../helpers/mcp-client.js';
import { startReceiver, type HttpReceiver } from '../helpers/http-receiver.js';
import { createTenant, sharedTestApp, startTestApp, type TestApp } from '../helpers/test-app.js';
import { as, superadmin } from '../helpers/tokens.js';

const MCP = '/api/v1/mcp';
const noteSchema = {
  namespace: 'shop', name: 'note',
  schema: { type: 'object', additionalProperties: false, required: ['title'], properties: { title: { type: 'string', minLength: 1 }, stars: { type: 'integer', minimum: 0 } } },
};

/** Calls a tool; a JSON-RPC error comes back as the thrown McpError. */
async function call(client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

async function rpcError(promise: Promise<unknown>): Promise<McpError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof McpError) return err;
    throw err;
  }
  throw new Error('expected a JSON-RPC error');
}

describe('MCP server /api/v1/mcp (CONTRACT.md section 14)', () => {
  let t: TestApp;
  let tenant: string;
  const clients: Client[] = [];
  const connect = async (path: string, headers: Record<string, string> = {}) => {
    const client = await mcpClient(t, path, headers);
    clients.push(client);
    return client;
  };

  before(async () => {
    t = await sharedTestApp();
  });

  beforeEach(async () => {
    tenant = await createTenant(t, 'mcp');
  });

  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
  });

  describe('transport and authentication', () => {
    it('initializes with the SDK client: tools capability, the current protocol version, no session', async () => {
      const client = await connect(MCP, as(tenant, 'viewer'));
      expect(client.getServerVersion()).to.include({ name: 'headless-platform' });
      expect(client.getServerCapabilities()?.tools).to.be.an('object');
      const raw = await fetch(`${t.baseUrl}${MCP}`, {
        method: 'POST',
        headers: { ...as(tenant, 'viewer'), 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'curl', version: '1' } } }),
      });
      expect(raw.status).to.equal(200);
      expect(raw.headers.get('mcp-session-id')).to.equal(null);
      expect(raw.headers.get('x-request-id')).to.be.a('string');
      const body = (await raw.json()) as { result: { protocolVersion: string } };
      expect(body.result.protocolVersion).to.equal(LATEST_PROTOCOL_VERSION);
    });

    it('answers 401 unauthenticated with WWW-Authenticate: Bearer without a token, in the envelope', async () => {
      const res = await t.http.post(MCP).set('Accept', 'application/json, text/event-stream').send({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
      expect(res.status).to.equal(401);
      expect(res.headers['www-authenticate']).to.equal('Bearer');
      expect(res.body).to.deep.include({ status: 'error', data: null });
      expect(res.body.error.code).to.equal('unauthenticated');
      const bad = await t.http.post(MCP).set('Authorization', 'Bearer nope.nope.nope').send({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
      expect(bad.status).to.equal(401);
      expect(bad.body.error.code).to.equal('invalid_token');
    });

    it('answers GET with 405 method_not_allowed (stateless: no SSE stream)', async () => {
      const res = await t.http.get(MCP).set(as(tenant, 'viewer'));
      expect(res.status).to.equal(405);
      expect(res.headers.allow).to.contain('POST');
      expect(res.body.error.code).to.equal('method_not_allowed');
    });

    it('refuses X-Tenant-Id naming another tenant than the token (403)', async () => {
      const other = await createTenant(t, 'mcp');
      const res = await t.http.post(MCP).set({ ...as(tenant, 'admin'), 'X-Tenant-Id': other, Accept: 'application/json, text/event-stream' })
        .send({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
      expect(res.status).to.equal(403);
      expect(res.body.error.code).to.equal('forbidden');
    });
  });

  it('lists both endpoints in the OpenAPI document', async () => {
    const doc = (await t.http.get('/api/v1/openapi.json')).body;
    expect(doc.paths['/api/v1/mcp'].post.summary).to.contain('MCP');
    expect(doc.paths['/api/v1/public/tenant/{tenantId}/mcp'].post.security).to.deep.equal([]);
  });

  describe('tools/list', () => {
    it('shows a viewer no write tools, an editor all, each with input and output schemas', async () => {
      const viewer = (await (await connect(MCP, as(tenant, 'viewer'))).listTools()).tools;
      expect(viewer.map((x) => x.name)).to.include.members(['search_knowledge', 'list_schemas', 'query_records', 'get_record', 'get_content']);
      expect(viewer.map((x) => x.name)).not.to.include.members(['create_record']);
      expect(viewer.map((x) => x.name)).not.to.include('update_record');
      const editor = (await (await connect(MCP, as(tenant, 'editor'))).listTools()).tools;
      expect(editor.map((x) => x.name)).to.include.members(['search_knowledge', 'list_schemas', 'query_records', 'get_record', 'create_record', 'update_record', 'get_content']);
      for (const tool of editor) {
        expect(tool.inputSchema.type, tool.name).to.equal('object');
        expect(tool.outputSchema?.type, tool.name).to.equal('object');
        expect(tool.description, tool.name).to.be.a('string').and.not.equal('');
      }
      expect(editor.find((x) => x.name === 'create_record')?.annotations?.readOnlyHint).to.equal(false);
      expect(editor.find((x) => x.name === 'query_records')?.annotations?.readOnlyHint).to.equal(true);
    });

    it('hides a pack\'s tools while its licensed module is disabled, and refuses its namespace', async () => {
      const editor = as(tenant, 'editor');
      expect((await (await connect(MCP, editor)).listTools()).tools.map((x) => x.name)).to.include('get_content');
      const off = await t.http.patch(`/api/v1/tenants/${tenant}/licensed-modules`).set(superadmin()).send({ appCode: 'cms', isEnabled: false });
      expect(off.status, JSON.stringify(off.body)).to.equal(200);
      const client = await connect(MCP, editor);
      const names = (await client.listTools()).tools.map((x) => x.name);
      expect(names).not.to.include('get_content');
      expect(names).to.include('query_records');
      expect((await rpcError(call(client, 'get_content', { contentType: 'page', slug: 'home' }))).code).to.equal(-32602);
      expect(toolError(await call(client, 'query_records', { namespace: 'cms', schema: 'page' })).code).to.equal('module_disabled');
      const pub = (await (await connect(`/api/v1/public/tenant/${tenant}/mcp`)).listTools()).tools.map((x) => x.name);
      expect(pub.sort()).to.deep.equal(['product_availability', 'search_knowledge']);
    });
  });

  describe('record tools', () => {
    let receiver: HttpReceiver;

    beforeEach(async () => {
      const res = await t.http.post('/api/v1/metadata/schemas').set(as(tenant, 'admin')).send(noteSchema);
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      receiver = await startReceiver();
    });

    afterEach(async () => {
      await receiver.stop();
    });

    it('create_record writes through the data API: visible at /data, its event delivered to a connector', async () => {
      const connector = await t.http.post('/api/v1/connectors').set(as(tenant, 'admin')).send({ url: `${receiver.url}/hook`, events: ['shop.*'] });
      expect(connector.status, JSON.stringify(connector.body)).to.equal(201);
      const client = await connect(MCP, as(tenant, 'editor'));
      const result = await call(client, 'create_record', { namespace: 'shop', schema: 'note', data: { title: 'From an agent', stars: 4 } });
      expect(result.isError ?? false, JSON.stringify(result)).to.equal(false);
      const item = (result.structuredContent as { item: Record<string, unknown> }).item;
      expect(item).to.include({ title: 'From an agent', stars: 4, version: 1 });
      expect(JSON.parse((result.content[0] as { text: string }).text)).to.deep.equal(result.structuredContent);

      const read = await t.http.get(`/api/v1/data/shop/note/${item.id}`).set(as(tenant, 'viewer'));
      expect(read.status).to.equal(200);
      expect(read.body.data.item).to.deep.equal(item);

      const [hook] = await receiver.waitFor(1);
      const event = JSON.parse(hook.body);
      expect(event).to.deep.include({ event: 'shop.note.created', tenantId: tenant });
      expect(event.payload.record).to.deep.equal(item);
    });

    it('answers failures as isError results with the envelope\'s code, message and details', async () => {
      const client = await connect(MCP, as(tenant, 'editor'));
      const invalid = toolError(await call(client, 'create_record', { namespace: 'shop', schema: 'note', data: { stars: -1 } }));
      expect(invalid.code).to.equal('validation_failed');
      expect(invalid.details.map((d) => d.path)).to.include.members(['/title', '/stars']);
      const serverField = toolError(await call(client, 'create_record', { namespace: 'shop', schema: 'note', data: { title: 'x', id: 'mine' } }));
      expect(serverField.code).to.equal('validation_failed');
      const badArgs = toolError(await call(client, 'create_record', { namespace: 'Shop!', schema: 'note' }));
      expect(badArgs.code).to.equal('validation_failed');
      expect(badArgs.details.map((d) => d.path)).to.include.members(['/namespace', '/data']);
      expect(toolError(await call(client, 'create_record', { namespace: 'shop', schema: 'nothing', data: { title: 'x' } })).code).to.equal('schema_not_found');
      const page = { namespace: 'cms', schema: 'page', data: { title: 'Twice', slug: 'twice' } };
      expect((await call(client, 'create_record', page)).isError ?? false).to.equal(false);
      expect(toolError(await call(client, 'create_record', page)).code).to.equal('conflict');
      expect((await t.http.get('/api/v1/data/shop/note').set(as(tenant, 'viewer'))).body.data.items).to.deep.equal([]);
    });

    it('update_record applies a merge patch, honours ifMatch (version_mismatch) and emits the update event', async () => {
      const client = await connect(MCP, as(tenant, 'editor'));
      const created = (await call(client, 'create_record', { namespace: 'shop', schema: 'note', data: { title: 'v1' } })).structuredContent as { item: { id: string } };
      const id = created.item.id;
      const stale = toolError(await call(client, 'update_record', { namespace: 'shop', schema: 'note', id, patch: { title: 'v2' }, ifMatch: 7 }));
      expect(stale.code).to.equal('version_mismatch');
      const updated = await call(client, 'update_record', { namespace: 'shop', schema: 'note', id, patch: { title: 'v2', stars: 5 }, ifMatch: '"1"' });
      expect((updated.structuredContent as { item: unknown }).item).to.include({ id, title: 'v2', stars: 5, version: 2 });
      const invalid = toolError(await call(client, 'update_record', { namespace: 'shop', schema: 'note', id, patch: { stars: 'many' } }));
      expect(invalid.code).to.equal('validation_failed');
      expect(toolError(await call(client, 'update_record', { namespace: 'shop', schema: 'note', id: '0190f0f0-0000-7000-8000-000000000000', patch: {} })).code).to.equal('not_found');
      const read = await t.http.get(`/api/v1/data/shop/note/${id}`).set(as(tenant, 'viewer'));
      expect(read.body.data.item).to.include({ title: 'v2', version: 2 });
    });

    it('create_record honours idempotencyKey like Idempotency-Key on POST /data, sharing its keys', async () => {
      const client = await connect(MCP, as(tenant, 'editor'));
      const args = { namespace: 'shop', schema: 'note', data: { title: 'Once', stars: 2 }, idempotencyKey: 'agent-retry-1' };
      const first = (await call(client, 'create_record', args)).structuredContent as { item: { id: string } };
      const again = await call(client, 'create_record', { ...args, data: { stars: 2, title: 'Once' } });
      expect(again.structuredContent).to.deep.equal(first);
      const reused = toolError(await call(client, 'create_record', { ...args, data: { title: 'Twice' } }));
      expect(reused.code).to.equal('idempotency_key_reused');
      const rest = await t.http.post('/api/v1/data/shop/note').set({ ...as(tenant, 'editor'), 'Idempotency-Key': 'agent-retry-1' }).send({ title: 'Once', stars: 2 });
      expect(rest.status).to.equal(201);
      expect(rest.headers['idempotent-replayed']).to.equal('true');
      expect(rest.headers.etag).to.equal('"1"');
      expect(rest.body.data.item.id).to.equal(first.item.id);
      // A failure is kept too: the same invalid body under a new key answers the same error again.
      const bad = { namespace: 'shop', schema: 'note', data: { stars: 1 }, idempotencyKey: 'agent-retry-2' };
      expect(toolError(await call(client, 'create_record', bad)).code).to.equal('validation_failed');
      const badAgain = toolError(await call(client, 'create_record', bad));
      expect(badAgain.code).to.equal('validation_failed');
      expect(badAgain.details.map((d) => d.path)).to.deep.equal(['/title']);
      expect(toolError(await call(client, 'create_record', { ...args, idempotencyKey: 'k'.repeat(256) })).code).to.equal('validation_failed');
      const items = (await t.http.get('/api/v1/data/shop/note').set(as(tenant, 'viewer'))).body.data.items;
      expect(items.map((i: { id: string }) => i.id)).to.deep.equal([first.item.id]);
    });

    it('a viewer cannot call a write tool: JSON-RPC error -32602, nothing written', async () => {
      const client = await connect(MCP, as(tenant, 'viewer'));
      const error = await rpcError(call(client, 'create_record', { namespace: 'shop', schema: 'note', data: { title: 'sneaky' } }));
      expect(error.code).to.equal(-32602);
      expect((await rpcError(call(client, 'update_record', { namespace: 'shop', schema: 'note', id: 'x', patch: {} }))).code).to.equal(-32602);
      expect((await rpcError(call(client, 'drop_everything', {}))).code).to.equal(-32602);
      expect((await t.http.get('/api/v1/data/shop/note').set(as(tenant, 'viewer'))).body.data.items).to.deep.equal([]);
    });

    it('query_records takes the data API\'s query language as an object; get_record reads one', async () => {
      const editor = await connect(MCP, as(tenant, 'editor'));
      for (const [title, stars] of [['a', 1], ['b', 3], ['c', 5], ['d', 5]] as const) {
        await call(editor, 'create_record', { namespace: 'shop', schema: 'note', data: { title, stars } });
      }
      const viewer = await connect(MCP, as(tenant, 'viewer'));
      const page = (await call(viewer, 'query_records', {
        namespace: 'shop', schema: 'note', filter: { stars: { gte: 3 }, title: ['b', 'c', 'x'] }, sort: ['-stars', 'title'], fields: ['title', 'stars'], limit: 1,
      })).structuredContent as { items: Array<Record<string, unknown>>; pagination: { total: number; hasMore: boolean; nextCursor: string } };
      expect(page.items.map(({ title, stars }) => ({ title, stars }))).to.deep.equal([{ title: 'c', stars: 5 }]);
      expect(page.pagination).to.include({ total: 2, hasMore: true });
      const next = (await call(viewer, 'query_records', {
        namespace: 'shop', schema: 'note', filter: { stars: { gte: 3 }, title: ['b', 'c', 'x'] }, sort: '-stars,title', fields: 'title', limit: 1, cursor: page.pagination.nextCursor,
      })).structuredContent as { items: Array<Record<string, unknown>> };
      expect(next.items.map((i) => i.title)).to.deep.equal(['b']);
      expect(next.items[0]).not.to.have.property('stars');
      const exact = (await call(viewer, 'query_records', { namespace: 'shop', schema: 'note', filter: { stars: 5, title: { like: 'd%' } } })).structuredContent as { items: Array<{ id: string; title: string }> };
      expect(exact.items.map((i) => i.title)).to.deep.equal(['d']);

      const one = await call(viewer, 'get_record', { namespace: 'shop', schema: 'note', id: exact.items[0].id });
      expect((one.structuredContent as { item: unknown }).item).to.include({ title: 'd', stars: 5 });

      expect(toolError(await call(viewer, 'query_records', { namespace: 'shop', schema: 'note', filter: { colour: 'red' } })).code).to.equal('invalid_filter');
      expect(toolError(await call(viewer, 'query_records', { namespace: 'shop', schema: 'note', expand: ['title'] })).code).to.equal('invalid_filter');
      expect(toolError(await call(viewer, 'get_record', { namespace: 'shop', schema: 'note', id: exact.items[0].id, expand: 'stars' })).code).to.equal('invalid_filter');
      expect(toolError(await call(viewer, 'query_records', { namespace: 'shop', schema: 'note', filter: { stars: { near: 1 } } })).code).to.equal('validation_failed');
      expect(toolError(await call(viewer, 'get_record', { namespace: 'shop', schema: 'note', id: '0190f0f0-0000-7000-8000-000000000000' })).code).to.equal('not_found');
    });

    it('list_schemas lists the schemas the tenant sees, by namespace', async () => {
      const client = await connect(MCP, as(tenant, 'viewer'));
      const shop = (await call(client, 'list_schemas', { namespace: 'shop' })).structuredContent as { items: Array<{ name: string; scope: string; schema: object }> };
      expect(shop.items.map((s) => `${s.name}:${s.scope}`)).to.deep.equal(['note:tenant']);
      const all = (await call(client, 'list_schemas', {})).structuredContent as { items: Array<{ namespace: string; name: string }> };
      expect(all.items.map((s) => `${s.namespace}.${s.name}`)).to.include.members(['cms.page', 'cms.post', 'crm.deal', 'shop.note']);
      expect(toolError(await call(client, 'list_schemas', { namespace: 'Not A Namespace' })).code).to.equal('validation_failed');
    });

    it('the test key (a superadmin) acts on the tenant named by X-Tenant-Id', async () => {
      const client = await connect(MCP, superadmin(tenant));
      const created = await call(client, 'create_record', { namespace: 'shop', schema: 'note', data: { title: 'by the platform' } });
      expect(created.isError ?? false).to.equal(false);
      expect((await t.http.get('/api/v1/data/shop/note').set(as(tenant, 'viewer'))).body.data.items).to.have.length(1);
    });
  });

  describe('knowledge and content', () => {
    it('search_knowledge finds a page published a moment ago, ranked, with sourceModule and url', async () => {
      const editor = await connect(MCP, as(tenant, 'editor'));
      const before = (await call(editor, 'search_knowledge', { query: 'zeppelin' })).structuredContent as { items: unknown[] };
      expect(before.items).to.deep.equal([]);
      const page = await t.http.post(`/api/v1/tenant/${tenant}/content/page`).set(as(tenant, 'editor'))
        .send({ title: 'Zeppelin rides', slug: 'zeppelin-rides', status: 'published', content: '# Zeppelin rides\n\nBook a zeppelin ride over the lake.' });
      expect(page.status, JSON.stringify(page.body)).to.equal(201);
      const found = (await call(editor, 'search_knowledge', { query: 'zeppelin', limit: 5 })).structuredContent as { items: Array<Record<string, unknown>>; pagination: { total: number } };
      expect(found.items.length).to.be.greaterThan(0);
      expect(found.items[0]).to.include({ sourceModule: 'cms' });
      expect(found.items[0].title).to.contain('Zeppelin');
      expect(found.items[0].snippet).to.contain('<mark>');
      expect(found.items[0].url).to.be.a('string');
      expect(found.items[0].score).to.be.a('number');

      // Published through the MCP tool itself: found on the very next call.
      await call(editor, 'create_record', { namespace: 'cms', schema: 'post', data: { title: 'Blimp news', slug: 'blimp-news', status: 'published', content: 'The blimp season opens.' } });
      const blimp = (await call(editor, 'search_knowledge', { query: 'blimp' })).structuredContent as { items: Array<{ title: string }> };
      expect(blimp.items.map((i) => i.title)).to.include('Blimp news');
      expect(toolError(await call(editor, 'search_knowledge', { query: '' })).code).to.equal('validation_failed');
      expect(toolError(await call(editor, 'search_knowledge', { query: 'x', limit: 500 })).code).to.equal('validation_failed');
    });

    it('get_content answers published content by slug, never drafts', async () => {
      await t.http.post(`/api/v1/tenant/${tenant}/content/page`).set(as(tenant, 'editor')).send({ title: 'About', slug: 'about', status: 'published', content: 'About us' }).expect(201);
      await t.http.post(`/api/v1/tenant/${tenant}/content/page`).set(as(tenant, 'editor')).send({ title: 'Secret', slug: 'secret', content: 'draft' }).expect(201);
      const client = await connect(MCP, as(tenant, 'viewer'));
      const about = await call(client, 'get_content', { contentType: 'page', slug: 'about' });
      expect((about.structuredContent as { item: unknown }).item).to.include({ title: 'About', slug: 'about', status: 'published' });
      expect(toolError(await call(client, 'get_content', { contentType: 'page', slug: 'secret' })).code).to.equal('not_found');
      expect(toolError(await call(client, 'get_content', { contentType: 'form_submission', slug: 'x' })).code).to.equal('schema_not_found');
      expect(toolError(await call(client, 'get_content', { contentType: 'page', slug: 'Not a slug' })).code).to.equal('validation_failed');
    });
  });

  describe('product_availability (ERP)', () => {
    it('answers a product\'s price and stock in real time, on both endpoints, and disappears with the erp module', async () => {
      const product = await t.http.post('/api/v1/erp/products').set(as(tenant, 'editor')).send({ sku: 'MUG-1', name: 'Mug', priceCents: 1999, physicalStock: 3 });
      expect(product.status, JSON.stringify(product.body)).to.equal(201);
      const viewer = await connect(MCP, as(tenant, 'viewer'));
      const seen = (await call(viewer, 'product_availability', { sku: 'MUG-1' })).structuredContent;
      expect(seen).to.include({ sku: 'MUG-1', name: 'Mug', priceCents: 1999, grossPriceCents: 2379, currency: 'EUR', inStock: true, availableStock: 3 });

      const adjusted = await t.http.post(`/api/v1/erp/products/${product.body.data.id}/stock-adjustments`).set(as(tenant, 'admin')).send({ delta: -3, reason: 'damage' });
      expect(adjusted.status, JSON.stringify(adjusted.body)).to.equal(201);
      const pub = await connect(`/api/v1/public/tenant/${tenant}/mcp`);
      expect((await call(pub, 'product_availability', { sku: 'MUG-1' })).structuredContent).to.include({ inStock: false, availableStock: 0 });
      expect(toolError(await call(pub, 'product_availability', { sku: 'NOPE-1' })).code).to.equal('not_found');
      expect(toolError(await call(pub, 'product_availability', { sku: '../etc' })).code).to.equal('validation_failed');

      const other = await createTenant(t, 'mcp');
      expect(toolError(await call(await connect(`/api/v1/public/tenant/${other}/mcp`), 'product_availability', { sku: 'MUG-1' })).code).to.equal('not_found');

      await t.http.patch(`/api/v1/tenants/${tenant}/licensed-modules`).set(superadmin()).send({ appCode: 'erp', isEnabled: false }).expect(200);
      const after = await connect(`/api/v1/public/tenant/${tenant}/mcp`);
      expect((await after.listTools()).tools.map((x) => x.name)).not.to.include('product_availability');
      expect((await rpcError(call(after, 'product_availability', { sku: 'MUG-1' }))).code).to.equal(-32602);
      expect((await rpcError(call(await connect(MCP, as(tenant, 'viewer')), 'product_availability', { sku: 'MUG-1' }))).code).to.equal(-32602);
    });
  });

  describe('open_ticket (CRM)', () => {
    it('opens a numbered ticket for an editor, visible through /crm/support-tickets; a viewer neither sees nor calls it', async () => {
      const editor = await connect(MCP, as(tenant, 'editor'));
      expect((await editor.listTools()).tools.map((x) => x.name)).to.include('open_ticket');
      const opened = await call(editor, 'open_ticket', { type: 'complaint', subject: 'Broken mug', description: 'It arrived in pieces', customerRef: 'cust-7' });
      expect(opened.isError, JSON.stringify(opened.content)).to.not.equal(true);
      const ticket = opened.structuredContent as { id: string; number: string; status: string; history: unknown[] };
      expect(ticket.number).to.match(/^PQRS-\d{4}-\d{6}$/);
      expect(ticket.status).to.equal('new');
      const read = await t.http.get(`/api/v1/crm/support-tickets/${ticket.id}`).set(as(tenant, 'viewer'));
      expect(read.status, JSON.stringify(read.body)).to.equal(200);
      expect(read.body.data).to.include({ number: ticket.number, subject: 'Broken mug', customerRef: 'cust-7' });
      expect(toolError(await call(editor, 'open_ticket', { type: 'rant', subject: 'x', description: 'y', customerRef: 'cust-7' })).code).to.equal('validation_failed');

      const viewer = await connect(MCP, as(tenant, 'viewer'));
      expect((await viewer.listTools()).tools.map((x) => x.name)).not.to.include('open_ticket');
      expect((await rpcError(call(viewer, 'open_ticket', { type: 'claim', subject: 'x', description: 'y', customerRef: 'cust-8' }))).code).to.equal(-32602);
      const list = await t.http.get('/api/v1/crm/support-tickets?customerRef=cust-8').set(as(tenant, 'viewer'));
      expect(list.body.data.items).to.have.length(0);
      const pub = (await (await connect(`/api/v1/public/tenant/${tenant}/mcp`)).listTools()).tools.map((x) => x.name);
      expect(pub).not.to.include('open_ticket');
    });
  });

  describe('tenant isolation', () => {
    it('never reaches another tenant\'s records or knowledge: by token, by X-Tenant-Id, by the public path', async () => {
      const other = await createTenant(t, 'mcp');
      await t.http.post(`/api/v1/tenant/${tenant}/content/page`).set(as(tenant, 'editor'))
        .send({ title: 'Quokka facts', slug: 'quokka', status: 'published', content: 'Quokkas smile.' }).expect(201);
      const mine = await connect(MCP, as(tenant, 'viewer'));
      const page = ((await call(mine, 'get_content', { contentType: 'page', slug: 'quokka' })).structuredContent as { item: { id: string } }).item;

      const theirs = await connect(MCP, as(other, 'admin'));
      expect(((await call(theirs, 'search_knowledge', { query: 'quokka' })).structuredContent as { items: unknown[] }).items).to.deep.equal([]);
      expect(toolError(await call(theirs, 'get_record', { namespace: 'cms', schema: 'page', id: page.id })).code).to.equal('not_found');
      expect(((await call(theirs, 'query_records', { namespace: 'cms', schema: 'page' })).structuredContent as { items: unknown[] }).items).to.deep.equal([]);
      expect(toolError(await call(theirs, 'get_content', { contentType: 'page', slug: 'quokka' })).code).to.equal('not_found');
      expect(toolError(await call(theirs, 'update_record', { namespace: 'cms', schema: 'page', id: page.id, patch: { title: 'Mine now' } })).code).to.equal('not_found');

      let refused: unknown = null;
      try {
        await connect(MCP, { ...as(other, 'admin'), 'X-Tenant-Id': tenant });
      } catch (err) {
        refused = err;
      }
      expect(String(refused)).to.contain('"code":"forbidden"');

      const publicOther = await connect(`/api/v1/public/tenant/${other}/mcp`);
      expect(((await call(publicOther, 'search_knowledge', { query: 'quokka' })).structuredContent as { items: unknown[] }).items).to.deep.equal([]);
      expect(toolError(await call(publicOther, 'get_content', { contentType: 'page', slug: 'quokka' })).code).to.equal('not_found');
      const read = await t.http.get(`/api/v1/data/cms/page/${page.id}`).set(as(tenant, 'viewer'));
      expect(read.body.data.item.title).to.equal('Quokka facts');
    });
  });

  describe('POST /api/v1/public/tenant/:tenantId/mcp', () => {
    it('offers read-only tools without authentication: published content only', async () => {
      await t.http.post(`/api/v1/tenant/${tenant}/content/post`).set(as(tenant, 'editor'))
        .send({ title: 'Opening hours', slug: 'opening-hours', status: 'published', content: 'We open at nine.' }).expect(201);
      await t.http.post(`/api/v1/tenant/${tenant}/content/post`).set(as(tenant, 'editor'))
        .send({ title: 'Unreleased hours', slug: 'unreleased', content: 'We open at nine tomorrow.' }).expect(201);
      const client = await connect(`/api/v1/public/tenant/${tenant}/mcp`);
      const tools = (await client.listTools()).tools;
      expect(tools.map((x) => x.name).sort()).to.deep.equal(['get_content', 'product_availability', 'search_knowledge']);
      expect(tools.every((x) => x.annotations?.readOnlyHint === true)).to.equal(true);
      const hits = (await call(client, 'search_knowledge', { query: 'nine' })).structuredContent as { items: Array<{ title: string; sourceModule: string }> };
      expect(hits.items.map((h) => h.title)).to.deep.equal(['Opening hours']);
      const post = await call(client, 'get_content', { contentType: 'post', slug: 'opening-hours' });
      expect((post.structuredContent as { item: unknown }).item).to.include({ title: 'Opening hours' });
      expect(toolError(await call(client, 'get_content', { contentType: 'post', slug: 'unreleased' })).code).to.equal('not_found');
      for (const name of ['create_record', 'update_record', 'query_records', 'get_record', 'list_schemas']) {
        expect((await rpcError(call(client, name, { namespace: 'cms', schema: 'post', id: 'x', data: {}, patch: {} }))).code, name).to.equal(-32602);
      }
    });

    it('is rate-limited per client address like the public runtime (429 rate_limited with Retry-After)', async () => {
      const limited = await startTestApp({ env: { PUBLIC_RATE_LIMIT_PER_MINUTE: '3' } });
      try {
        const id = await createTenant(limited, 'mcp');
        const rpc = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
        const statuses: number[] = [];
        let last: Awaited<ReturnType<typeof limited.http.post>> | null = null;
        for (let i = 0; i < 4; i += 1) {
          last = await limited.http.post(`/api/v1/public/tenant/${id}/mcp`).set('Accept', 'application/json, text/event-stream').send(rpc);
          statuses.push(last.status);
        }
        expect(statuses).to.deep.equal([200, 200, 200, 429]);
        expect(last!.body.error.code).to.equal('rate_limited');
        expect(Number(last!.headers['retry-after'])).to.be.greaterThan(0);
      } finally {
        await limited.close();
      }
    });

    it('answers 404 tenant_not_found for an unknown or suspended tenant', async () => {
      const rpc = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
      const unknown = await t.http.post('/api/v1/public/tenant/no-such-tenant/mcp').set('Accept', 'application/json, text/event-stream').send(rpc);
      expect(unknown.status).to.equal(404);
      expect(unknown.body.error.code).to.equal('tenant_not_found');
      await t.http.patch(`/api/v1/admin/tenants/${tenant}`).set(superadmin()).send({ status: 'suspended' }).expect(200);
      const suspended = await t.http.post(`/api/v1/public/tenant/${tenant}/mcp`).set('Accept', 'application/json, text/event-stream').send(rpc);
      expect(suspended.status).to.equal(404);
      expect(suspended.body.error.code).to.equal('tenant_not_found');
    });
  });
});
