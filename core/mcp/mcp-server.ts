import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { AppContext } from '../http/app-state.js';
import type { McpToolbox, RegisteredTool } from './mcp-toolbox.js';

export const SERVER_INFO = { name: 'headless-platform', version: '0.1.0' };
/** The SDK's validator (for elicitation, which this server does not use), made once: by default each Server builds its own ajv. */
const jsonSchemaValidator = new AjvJsonSchemaValidator();

/**
 * Answers one MCP request (Streamable HTTP, stateless: a server and a transport per request, no
 * session) with the official SDK's low-level Server. Its own tools/call handler is used rather than
 * McpServer's, because McpServer answers an unknown tool with an isError result, where the contract
 * asks for a JSON-RPC error (-32602) — the same error a tool the caller may not see gets.
 * Koa keeps the response: the transport answers a web Request, and its Response is copied onto ctx.
 */
export async function answerMcp(ctx: AppContext, toolbox: McpToolbox, tools: Map<string, RegisteredTool>, instructions: string): Promise<void> {
  const rc = ctx.state.rc;
  const server = new Server(SERVER_INFO, { capabilities: { tools: {} }, instructions, jsonSchemaValidator });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [...tools.values()].map((t) => toolbox.describe(t)) }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const tool = tools.get(request.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name.slice(0, 64)}`);
    return toolbox.call(tool, request.params.arguments, rc);
  });

  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await server.connect(transport);
  try {
    const response = await transport.handleRequest(webRequest(ctx), { parsedBody: ctx.state.body });
    ctx.status = response.status;
    response.headers.forEach((value, name) => {
      if (name !== 'content-length') ctx.set(name, value);
    });
    ctx.body = await response.text();
  } finally {
    await server.close();
  }
}

/** The request's method and headers as a web Request (its body was read and parsed already; the URL plays no part). */
function webRequest(ctx: AppContext): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(ctx.req.headers)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
  }
  // The transport wants both of its media types named; a client that accepts anything (no Accept, */*) accepts them.
  const accept = headers.get('accept');
  if (!accept || /^\s*\*\/\*\s*(;[^,]*)?$/.test(accept)) headers.set('accept', 'application/json, text/event-stream');
  return new Request('http://localhost/mcp', { method: ctx.method, headers });
}
