import type { JsonSchema } from '../http/route.js';
import type { PackContext } from './pack-context.js';
import type { RequestContext, TenantRole } from '../base/request-context.js';

/** What a tool's handler gets besides its (validated) arguments. */
export interface ToolCall {
  /** The caller's tenant and principal (the principal is null on the public endpoint). */
  rc: RequestContext;
  /** The declaring pack's context (kernel tools get the kernel services in the same shape). */
  pack: PackContext;
}

/**
 * An MCP tool (CONTRACT.md section 14), declared by a pack in `definePack({ tools: { name: tool } })` or
 * by the kernel. Its input is validated against `input` before the handler runs; what the handler
 * returns is the tool's `structuredContent` (the REST answer's `data`) and, as JSON, its text. A thrown
 * AppError becomes a result with `isError: true` carrying the error's code and message.
 */
export interface McpToolDefinition<Args = any> {
  description: string;
  title?: string;
  /** JSON Schema (2020-12) of the arguments: `type: "object"`, with `additionalProperties: false`. */
  input: JsonSchema;
  /** JSON Schema of the structured result (`type: "object"`). */
  output: JsonSchema;
  /** The weakest tenant role that sees and may call the tool (default `viewer`); superadmins always may. */
  role?: TenantRole;
  /** Offered on the public, per-tenant endpoint too (read-only tools only: role `viewer`). */
  public?: boolean;
  handler: (args: Args, call: ToolCall) => Promise<unknown> | unknown;
}

export const TOOL_NAME = /^[a-z][a-z0-9_]{0,63}$/;

/** Checks a tool's declaration when its pack is declared, so a mistake fails at boot. */
export function checkToolDefinition(owner: string, name: string, tool: McpToolDefinition): void {
  const where = `${owner}: tool "${name}"`;
  if (!TOOL_NAME.test(name)) throw new Error(`${where}: the name must match ${TOOL_NAME}`);
  if (!tool.description) throw new Error(`${where} needs a description`);
  for (const [label, schema] of [['input', tool.input], ['output', tool.output]] as const) {
    if (!schema || schema.type !== 'object') throw new Error(`${where}: its ${label} schema must have "type": "object"`);
  }
  if (tool.public && (tool.role ?? 'viewer') !== 'viewer') throw new Error(`${where}: a public tool must be read-only (role viewer)`);
  if (typeof tool.handler !== 'function') throw new Error(`${where} needs a handler`);
}
