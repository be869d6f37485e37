import type { JsonSchema, PackRouter } from '../http/route.js';
import type { McpToolbox } from './mcp-toolbox.js';

/** The MCP SDK (with zod) is loaded by the first MCP request: about 25 MiB a service without agents never needs. */
const answerMcp: typeof import('./mcp-server.js').answerMcp = async (...args) => (await import('./mcp-server.js')).answerMcp(...args);

const tags = ['ai'];
const description = 'Model Context Protocol, Streamable HTTP transport, stateless (no Mcp-Session-Id; GET answers 405). '
  + 'The body is a JSON-RPC message (initialize, tools/list, tools/call, ...); send Accept: application/json, text/event-stream. '
  + 'See docs/ai-agents.md for the tools and what each returns.';
/** A request's id: a string, or an integer JavaScript holds exactly (the MCP SDK refuses others as a parse error). */
const JSON_RPC_ID: JsonSchema = { anyOf: [{ type: 'integer', minimum: -Number.MAX_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER }, { type: 'string' }] };
/** A JSON-RPC 2.0 request or notification, as the transport takes it from a client. */
const jsonRpcRequest: JsonSchema = {
  type: 'object',
  required: ['jsonrpc', 'method'],
  additionalProperties: false,
  properties: {
    jsonrpc: { const: '2.0' }, id: JSON_RPC_ID, method: { type: 'string', minLength: 1 }, params: { type: 'object' },
  },
};
const jsonRpcMessage: JsonSchema = {
  anyOf: [jsonRpcRequest, { type: 'array', minItems: 1, items: jsonRpcRequest }],
  description: 'A JSON-RPC 2.0 request or notification (or a batch), e.g. {"jsonrpc":"2.0","id":1,"method":"tools/list"}',
};
const jsonRpcAnswer: JsonSchema = {
  type: 'object',
  properties: { jsonrpc: { type: 'string' }, id: { type: ['integer', 'string', 'null'] }, result: { type: 'object' }, error: { type: 'object' } },
};
const jsonRpcResponse: JsonSchema = {
  anyOf: [jsonRpcAnswer, { type: 'array', items: jsonRpcAnswer }],
  description: 'A JSON-RPC 2.0 response (result or error), or one per request of a batch, as the body itself, not inside the envelope',
};

const TENANT_INSTRUCTIONS = 'Tools over one tenant of a headless commerce and content backend: its knowledge, schemas and records, '
  + 'and the tools of its licensed modules. Record tools take a namespace and a schema (list_schemas names them).';
const PUBLIC_INSTRUCTIONS = 'Read-only tools over the published content of one website or shop: search its knowledge, read a page or post by slug.';

/** The MCP endpoints of CONTRACT.md section 14: the tenant's (signed in) and the public, read-only one per tenant. */
export function mcpRoutes(router: PackRouter, toolbox: McpToolbox): void {
  router.post('/mcp', {
    summary: 'MCP server for AI agents: the tenant\'s knowledge, schemas, records and pack tools',
    description: `${description} Same bearer tokens and tenant context (X-Tenant-Id for superadmins) as the HTTP API; tools are listed by role and licensed module.`,
    tags, auth: 'tenant', policies: true, module: null, body: jsonRpcMessage, response: jsonRpcResponse, produces: 'application/json',
    answers: { 202: 'A JSON-RPC notification or response was accepted (no body)', 406: 'Accept names neither application/json nor text/event-stream (none, or */*, accepts both)' },
    errors: ['unauthenticated', 'invalid_token', 'forbidden', 'tenant_required', 'tenant_not_found', 'invalid_json', 'validation_failed', 'unsupported_media_type'],
  }, async (ctx) => {
    const tools = await toolbox.available(ctx.state.rc, 'tenant');
    await answerMcp(ctx, toolbox, tools, TENANT_INSTRUCTIONS);
  });

  router.post('/public/tenant/:tenantId/mcp', {
    summary: 'Public, read-only MCP server of one tenant, for website and shop assistants (no authentication)',
    description: `${description} Tools: search_knowledge, get_content (published only) and the public tools of the tenant's licensed modules; rate-limited per client address like the whole public runtime.`,
    tags: [...tags, 'public'], auth: 'public', tenantParam: 'tenantId', module: null, previews: true, body: jsonRpcMessage, response: jsonRpcResponse, produces: 'application/json',
    answers: { 202: 'A JSON-RPC notification or response was accepted (no body)', 406: 'Accept names neither application/json nor text/event-stream (none, or */*, accepts both)' },
    errors: ['tenant_not_found', 'rate_limited', 'invalid_json', 'validation_failed', 'unsupported_media_type'],
  }, async (ctx) => {
    const tools = await toolbox.available(ctx.state.rc, 'public');
    await answerMcp(ctx, toolbox, tools, PUBLIC_INSTRUCTIONS);
  });
}
