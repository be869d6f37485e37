import type { Migration } from '../db/migration.js';
import type { PackContext } from './pack-context.js';
import type { PackRouter } from '../http/route.js';
import type { PlatformEvent } from '../events/event.js';
import type { RequestContext } from './request-context.js';
import type { SchemaInput } from '../metadata/schema-definition.js';
import { checkToolDefinition, type McpToolDefinition } from '../mcp/mcp-tool.js';

export type RecordAction = 'create' | 'update' | 'delete';

/** What a filter hook sees: the document about to be written (a copy it may change) and, on update/delete, the stored one. */
export interface HookPayload {
  action: RecordAction;
  namespace: string;
  schema: string;
  /** The record id (on create: the id it will get). */
  id: string;
  /** The new document without server-managed fields (on delete: the stored document). */
  data: Record<string, unknown>;
  /** The stored document before the change (update and delete). */
  previous: Record<string, unknown> | null;
}

/**
 * A filter hook: runs in order, awaited, inside the write transaction (use the rc it is given).
 * Return a changed document (or nothing to keep it); throw an AppError to veto the write.
 */
export type FilterHook = (
  payload: HookPayload,
  rc: RequestContext,
  pack: PackContext,
) => Promise<Record<string, unknown> | void> | Record<string, unknown> | void;

/** An event handler: runs after commit, in process. Errors are caught and logged. */
export type EventHandler = (event: PlatformEvent, pack: PackContext) => Promise<void> | void;

export interface NamespaceDeclaration {
  name: string;
  /** Whether tenants may register their own schemas in this namespace (cms: yes; crm, erp: no). */
  open: boolean;
  /** Platform schemas loaded from schemas/<namespace>/<name>.schema.json at boot. */
  schemas?: string[];
  /** Registration hook: may add to a schema a tenant registers in this namespace (cms adds slug and status). */
  onRegister?: (input: SchemaInput) => SchemaInput;
}

export interface PackDefinition {
  /** Unique pack name, kebab-case. */
  name: string;
  description?: string;
  /** App code gating the pack's routes and namespaces by the tenant's licensed modules (cms, crm, erp). */
  licensed?: string;
  /** Packs that must be loaded before this one. */
  requires?: string[];
  namespaces?: NamespaceDeclaration[];
  migrations?: Migration[];
  /** Filter hooks keyed `ns.schema.create|update|delete`; `ns.*.action` matches every schema of the namespace. */
  hooks?: Record<string, FilterHook>;
  /** After-commit handlers keyed by event name; `prefix.*` matches every event starting with `prefix.`. */
  on?: Record<string, EventHandler>;
  /** The pack's endpoints, declared on its own router. Paths are relative to /api/v1. */
  routes?: (router: PackRouter, pack: PackContext) => void;
  /** MCP tools keyed by name, offered to AI agents at /api/v1/mcp and gated by `licensed` like the routes. */
  tools?: Record<string, McpToolDefinition>;
  /** Runs once the app is built and migrated (e.g. to start a background loop). */
  start?: (pack: PackContext) => Promise<void> | void;
  /** Runs on shutdown. */
  stop?: (pack: PackContext) => Promise<void> | void;
}

const PACK_NAME = /^[a-z][a-z0-9-]{0,39}$/;
const HOOK_KEY = /^[a-z][a-z0-9_]{0,39}\.([a-z][a-z0-9_]{0,39}|\*)\.(create|update|delete)$/;

/** Declares a pack. Checks its shape at once, so a mistake fails at boot, not on the first request. */
export function definePack(definition: PackDefinition): PackDefinition {
  if (!PACK_NAME.test(definition.name)) throw new Error(`definePack: invalid pack name "${definition.name}"`);
  for (const key of Object.keys(definition.hooks ?? {})) {
    if (!HOOK_KEY.test(key)) throw new Error(`definePack(${definition.name}): invalid hook key "${key}" (use ns.schema.create|update|delete)`);
  }
  for (const ns of definition.namespaces ?? []) {
    if (!/^[a-z][a-z0-9_]{0,39}$/.test(ns.name)) throw new Error(`definePack(${definition.name}): invalid namespace "${ns.name}"`);
  }
  for (const [name, tool] of Object.entries(definition.tools ?? {})) checkToolDefinition(`definePack(${definition.name})`, name, tool);
  return Object.freeze({ ...definition });
}
