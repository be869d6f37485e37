import { expect } from 'chai';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { mcpClient, toolError } from '../helpers/mcp-client.js';
import { SseClient } from '../helpers/sse-client.js';
import { createTenant, startTestApp, type TestApp } from '../helpers/test-app.js';
import { as, bearer, signToken } from '../helpers/tokens.js';

type Json = Record<string, any>;

const postSchema = {
  namespace: 'rs', name: 'post',
  schema: { type: 'object', required: ['title', 'authorId'], properties: { title: { type: 'string' }, authorId: { type: 'string' }, notes: { type: 'string' } } },
};
const ownPosts = { resource: 'rs.post', actions: ['read', 'create'], filter: { authorId: '$user.sub' }, fields: { read: ['title', 'authorId'], write: ['title'] } };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Role policies on live changes and MCP (CONTRACT.md 16.1), and a role change seen by open streams. */
describe('custom roles on live changes and MCP', () => {
  let t: TestApp;
  let tenant: string;
  const streams: SseClient[] = [];
  const clients: Client[] = [];
  const admin = () => as(tenant, 'admin');
  const author = (sub: string) => bearer(signToken({ tenantId: tenant, roles: ['role:author'], sub }));

  before(async () => {
    t = await startTestApp({ env: { CHANGES_HEARTBEAT_MS: '300', CHANGES_POLL_MS: '100' } });
  });
  after(() => t?.close());
  beforeEach(async () => {
    tenant = await createTenant(t, 'rs');
    await t.http.post('/api/v1/metadata/schemas').set(admin()).send(postSchema).expect(201);
    await t.http.post(`/api/v1/tenants/${tenant}/roles`).set(admin()).send({ name: 'author', policies: [ownPosts] }).expect(201);
  });
  afterEach(async () => {
    for (const s of streams.splice(0)) s.close();
    await Promise.all(clients.splice(0).map((c) => c.close()));
  });

  it('live changes carry only readable records and fields; a role change reaches an open stream within 1 s', async () => {
    const stream = await SseClient.open(`${t.baseUrl}/api/v1/data/rs/post/changes`, author('ann'));
    streams.push(stream);
    expect(stream.status).to.equal(200);
    const editor = as(tenant, 'editor');
    await t.http.post('/api/v1/data/rs/post').set(editor).send({ title: 'theirs', authorId: 'bob', notes: 'n' }).expect(201);
    const mine = (await t.http.post('/api/v1/data/rs/post').set(editor).send({ title: 'mine', authorId: 'ann', notes: 'secret notes' }).expect(201)).body.data.item;
    await stream.waitForEvents(1);
    await sleep(300);
    expect(stream.events).to.have.length(1);
    const payload = JSON.parse(stream.events[0].data).payload;
    expect(payload.record).to.include({ id: mine.id, title: 'mine', authorId: 'ann' });
    expect(payload.record).to.not.have.property('notes');
    expect(JSON.stringify(stream.events)).to.not.include('secret notes');

    // The role now reads every post: the open stream shows bob's next change within 1 s.
    await t.http.put(`/api/v1/tenants/${tenant}/roles/author`).set(admin()).send({ policies: [{ resource: 'rs.post', actions: ['read'] }] }).expect(200);
    await sleep(1000);
    await t.http.post('/api/v1/data/rs/post').set(editor).send({ title: 'bob again', authorId: 'bob', notes: 'visible now' }).expect(201);
    await stream.waitForEvents(2);
    expect(JSON.parse(stream.events[1].data).payload.record).to.include({ title: 'bob again', notes: 'visible now' });
  });

  it('MCP offers list_schemas, query_records, get_record and the write tools the policies allow; a refused write is isError forbidden', async () => {
    const client = await mcpClient(t, '/api/v1/mcp', author('ann'));
    clients.push(client);
    const names = (await client.listTools()).tools.map((tool) => tool.name).sort();
    expect(names).to.deep.equal(['create_record', 'get_record', 'list_schemas', 'query_records']);
    await t.http.post('/api/v1/data/rs/post').set(as(tenant, 'editor')).send({ title: 'theirs', authorId: 'bob' }).expect(201);
    const created = (await client.callTool({ name: 'create_record', arguments: { namespace: 'rs', schema: 'post', data: { title: 'via mcp' } } })) as CallToolResult;
    expect(created.isError, JSON.stringify(created)).to.not.equal(true);
    expect((created.structuredContent as Json).item).to.include({ authorId: 'ann' });
    const listed = (await client.callTool({ name: 'query_records', arguments: { namespace: 'rs', schema: 'post' } })) as CallToolResult;
    expect((listed.structuredContent as Json).items.map((p: Json) => p.title)).to.deep.equal(['via mcp']);
    const refused = (await client.callTool({ name: 'create_record', arguments: { namespace: 'rs', schema: 'post', data: { title: 'x', notes: 'not mine to set' } } })) as CallToolResult;
    expect(toolError(refused).code).to.equal('forbidden');
    expect(toolError(refused).details[0].path).to.equal('/notes');
    const schemas = (await client.callTool({ name: 'list_schemas', arguments: {} })) as CallToolResult;
    const items = (schemas.structuredContent as Json).items as Json[];
    expect(items.map((s) => `${s.namespace}.${s.name}`)).to.deep.equal(['rs.post']);
    expect(Object.keys(items[0].schema.properties)).to.deep.equal(['title', 'authorId']);
  });
});
