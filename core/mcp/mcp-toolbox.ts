import type { ValidateFunction } from 'ajv';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import { bffError } from '../http/envelope.js';
import { toAppError } from '../http/error-handler.js';
import { ValidationFailed } from '../base/errors.js';
import type { PackContext } from '../kernel/pack-context.js';
import { ROLE_RANK, type RequestContext } from '../base/request-context.js';
import type { TenantsService } from '../tenants/tenants.service.js';
import { createAjv, toIssues } from '../base/ajv.js';
import { checkToolDefinition, type McpToolDefinition } from '../kernel/mcp-tool.js';

/** One tool as the toolbox keeps it: its declaration, the module gating it and its compiled input schema. */
export interface RegisteredTool {
  name: string;
  definition: McpToolDefinition;
  /** The licensed module of the declaring pack (null: the kernel's, never gated). */
  module: string | null;
  context: PackContext;
  validate: ValidateFunction;
}

export interface ToolSource {
  tools: Record<string, McpToolDefinition>;
  module: string | null;
  context: PackContext;
}

/** Who asks: a signed-in caller of /api/v1/mcp, or anyone on a tenant's public endpoint. */
export type Audience = 'tenant' | 'public';

const argumentsAjv = createAjv({ useDefaults: true });

/**
 * Every MCP tool of the app, the kernel's and the packs', compiled once at boot. `available` tells
 * which of them one caller sees (role, licensed modules, public or not); `call` runs one.
 */
/** The kernel's record tools a custom role may be offered, with the policy action each needs (CONTRACT.md 16.1). */
const POLICY_TOOLS: Record<string, 'read' | 'create' | 'update' | 'delete'> = {
  list_schemas: 'read', query_records: 'read', get_record: 'read', create_record: 'create', update_record: 'update', delete_record: 'delete',
};

export class McpToolbox {
  private readonly tools: RegisteredTool[] = [];

  constructor(
    sources: ToolSource[], private readonly tenants: TenantsService, private readonly logger: Logger,
    /** The actions a caller's custom roles allow (CONTRACT.md 16.1; null: none narrow it). */
    private readonly policyActions: (rc: RequestContext) => Promise<ReadonlySet<string> | null> = async () => null,
  ) {
    const names = new Map<string, string>();
    for (const { tools, module, context } of sources) {
      for (const [name, definition] of Object.entries(tools)) {
        checkToolDefinition(context.name, name, definition);
        const owner = names.get(name);
        if (owner) throw new Error(`MCP tool "${name}" is declared by both ${owner} and ${context.name}`);
        names.set(name, context.name);
        let validate: ValidateFunction;
        try {
          validate = argumentsAjv.compile(definition.input);
        } catch (err) {
          throw new Error(`${context.name}: tool "${name}": invalid input schema: ${(err as Error).message}`, { cause: err });
        }
        this.tools.push({ name, definition, module, context, validate });
      }
    }
  }

  /**
   * The tools this caller may see and call, by name: on the public endpoint the public ones, else those
   * its role reaches; a tool of a licensed pack only while the tenant's module is enabled.
   */
  async available(rc: RequestContext, audience: Audience): Promise<Map<string, RegisteredTool>> {
    const principal = rc.principal;
    const actions = audience === 'public' ? null : await this.policyActions(rc);
    const allowed = this.tools.filter((tool) => {
      if (audience === 'public') return tool.definition.public === true;
      if (!principal) return false;
      // A caller under role policies: the record tools its policies allow, never search_knowledge or pack tools (16.1).
      if (actions) {
        const byRole = !principal.onlyCustomRoles && ROLE_RANK[principal.role] >= ROLE_RANK[tool.definition.role ?? 'viewer'];
        const action = POLICY_TOOLS[tool.name];
        return byRole || (tool.module === null && tool.context.name === 'kernel' && action !== undefined && (action === 'read' ? actions.size > 0 : actions.has(action)));
      }
      return principal.isSuperadmin || ROLE_RANK[principal.role] >= ROLE_RANK[tool.definition.role ?? 'viewer'];
    });
    const modules = [...new Set(allowed.map((t) => t.module).filter((m): m is string => m !== null))];
    const enabled = new Set<string>();
    for (const module of modules) {
      const found = await this.tenants.lookup(null, rc.tenantId ?? '', module);
      if (found?.moduleEnabled) enabled.add(module);
    }
    return new Map(allowed.filter((t) => t.module === null || enabled.has(t.module)).map((t) => [t.name, t]));
  }

  /** The tool as tools/list shows it. */
  describe(tool: RegisteredTool): Tool {
    const { definition } = tool;
    const readOnly = (definition.role ?? 'viewer') === 'viewer';
    return {
      name: tool.name,
      title: definition.title,
      description: definition.description,
      inputSchema: definition.input as Tool['inputSchema'],
      outputSchema: definition.output as Tool['outputSchema'],
      annotations: { title: definition.title, readOnlyHint: readOnly, destructiveHint: false, openWorldHint: false },
    };
  }

  /**
   * Runs a tool: arguments validated first; the handler's answer is the structured content and, as JSON,
   * the text. A failure is a result with isError and the error envelope (code, message, details) as text.
   */
  async call(tool: RegisteredTool, args: unknown, rc: RequestContext): Promise<CallToolResult> {
    try {
      const input = structuredClone(args ?? {});
      if (!tool.validate(input)) throw ValidationFailed(`The arguments of ${tool.name} failed validation`, toIssues(tool.validate.errors));
      const data = (await tool.definition.handler(input, { rc, pack: tool.context })) ?? {};
      return { content: [{ type: 'text', text: JSON.stringify(data) }], structuredContent: data as Record<string, unknown> };
    } catch (thrown) {
      const error = toAppError(thrown);
      if (error.status >= 500) this.logger.error({ err: thrown, tool: tool.name, requestId: rc.requestId }, 'MCP tool failed');
      return { isError: true, content: [{ type: 'text', text: JSON.stringify(bffError(error.code, error.message, error.details)) }] };
    }
  }
}
