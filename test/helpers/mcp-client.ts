import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { TestApp } from './test-app.js';

/**
 * The MCP SDK's own client, connected over HTTP to the app under test (initialize done). `path` is the
 * endpoint (`/api/v1/mcp` or `/api/v1/public/tenant/<id>/mcp`), `headers` go with every request.
 */
export async function mcpClient(t: TestApp, path: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'platform-tests', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${t.baseUrl}${path}`), { requestInit: { headers } });
  await client.connect(transport);
  return client;
}

/** A tool result's error envelope (the text of an `isError` result). */
export function toolError(result: CallToolResult): { code: string; message: string; details: Array<{ path: string; message: string }> } {
  if (!result.isError) throw new Error(`expected an error result, got ${JSON.stringify(result).slice(0, 300)}`);
  const first = result.content[0];
  const envelope = JSON.parse(first?.type === 'text' ? first.text : '{}');
  return { code: envelope.error.code, message: envelope.message, details: envelope.error.details };
}
