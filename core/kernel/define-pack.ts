import type { Migration } from '../db/migration.js';
import type { PackContext } from './pack-context.js';
import type { PackRouter } from '../http/route.js';
import type { PlatformEvent } from '../events/event.js';
import type { RequestContext } from '../base/request-context.js';
import type { NamespaceDeclaration } from '../metadata/schema-definition.js';
import type { HookPayload } from '../hooks/hook-registry.js';
import type { TenantRecord } from '../tenants/tenants.repository.js';
import { EVENT_NAME } from '../events/event.js';
import { checkToolDefinition, type McpToolDefinition } from './mcp-tool.js';

export type { HookPayload, RecordAction } from '../hooks/hook-registry.js';
export type { NamespaceDeclaration } from '../metadata/schema-definition.js';

/**
 * A filter hook: runs in order, awaited, inside the write transaction (use the rc it is given).
 * Return a changed document (or nothing to keep it); throw an AppError to veto the write.
 */
export type FilterHook = (
  payload: HookPayload,
  rc: RequestContext,
  pack: PackContext,
) => Promise<Record<string, unknown> | void> | Record<string, unknown> | void;

/** An event handler: runs after commit, at least once (through the outbox), so it must be idempotent. */
export type EventHandler = (event: PlatformEvent, pack: PackContext) => Promise<void> | void;

/** Builds one service of a pack, once per app, from the providing pack's context. */
export type ServiceBuilder = (pack: PackContext) => unknown;

/**
 * A pack's part of a named seed (`healthcare`): writes its content for the new tenant inside the
 * provisioning transaction (use the rc it is given) and returns the count written per kind.
 */
export type SeedContribution = (rc: RequestContext, pack: PackContext, tenant: TenantRecord) => Promise<Record<string, number>>;

export interface PackDefinition {
  /** Unique pack name, kebab-case. */
  name: string;
  description?: string;
  /** App code gating the pack's routes and namespaces by the tenant's licensed modules (cms, crm, erp). */
  licensed?: string;
  /**
   * Named services the pack offers, built once at boot: `{ catalog: (pack) => new Catalog(pack) }` is the
   * service `erp.catalog`. Declare its type in `PackServices` (core/pack-api.ts) by declaration merging.
   */
  provides?: Record<string, ServiceBuilder>;
  /**
   * What the pack needs from others: services (`erp.catalog`) or whole packs (`tenant-admin`); a trailing `?`
   * marks an optional one (`crm.coupons?`). Packs load after what they require; a missing requirement or a
   * cycle stops the boot, naming the pack and what is missing.
   */
  requires?: string[];
  /** The events the pack raises beyond its record events; they are reserved (nobody may publish them). */
  events?: string[];
  /** Contributions to named seeds run at provisioning (`seed: { healthcare: true }`). */
  seeds?: Record<string, SeedContribution>;
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
  /**
   * The pack's console screens: the path, relative to the pack's folder, of its console module (`admin/screens.ts`),
   * whose default export declares them (admin/src/packs/console-screens.ts). The console's build imports it
   * (scripts/build-admin.ts); the service never loads it.
   */
  admin?: string;
  /** Runs once the app is built and migrated (e.g. to start a background loop). */
  start?: (pack: PackContext) => Promise<void> | void;
  /** Runs on shutdown. */
  stop?: (pack: PackContext) => Promise<void> | void;
}

const PACK_NAME = /^[a-z][a-z0-9-]{0,39}$/;
const SERVICE_KEY = /^[a-z][a-zA-Z0-9]{0,39}$/;
const REQUIREMENT = /^[a-z][a-z0-9-]{0,39}(\.[a-z][a-zA-Z0-9]{0,39})?\??$/;
const ADMIN_MODULE = /^admin\/([A-Za-z0-9_-]+\/)*[A-Za-z0-9_-]+\.tsx?$/;
const HOOK_KEY = /^[a-z][a-z0-9_]{0,39}\.([a-z][a-z0-9_]{0,39}|\*)\.(create|update|delete)$/;

/** Declares a pack. Checks its shape at once, so a mistake fails at boot, not on the first request. */
export function definePack(definition: PackDefinition): PackDefinition {
  if (!PACK_NAME.test(definition.name)) throw new Error(`definePack: invalid pack name "${definition.name}"`);
  for (const key of Object.keys(definition.hooks ?? {})) {
    if (!HOOK_KEY.test(key)) throw new Error(`definePack(${definition.name}): invalid hook key "${key}" (use ns.schema.create|update|delete)`);
  }
  for (const key of Object.keys(definition.provides ?? {})) {
    if (!SERVICE_KEY.test(key)) throw new Error(`definePack(${definition.name}): invalid service name "${key}" (camelCase)`);
  }
  for (const requirement of definition.requires ?? []) {
    if (!REQUIREMENT.test(requirement)) throw new Error(`definePack(${definition.name}): invalid requirement "${requirement}" (pack or pack.service, ? for optional)`);
  }
  for (const name of definition.events ?? []) {
    if (!EVENT_NAME.test(name)) throw new Error(`definePack(${definition.name}): invalid event name "${name}"`);
  }
  for (const ns of definition.namespaces ?? []) {
    if (!/^[a-z][a-z0-9_]{0,39}$/.test(ns.name)) throw new Error(`definePack(${definition.name}): invalid namespace "${ns.name}"`);
  }
  if (definition.admin !== undefined && !ADMIN_MODULE.test(definition.admin)) {
    throw new Error(`definePack(${definition.name}): invalid admin module "${definition.admin}" (a .ts or .tsx path under the pack's admin/ folder)`);
  }
  for (const [name, tool] of Object.entries(definition.tools ?? {})) checkToolDefinition(`definePack(${definition.name})`, name, tool);
  return Object.freeze({ ...definition });
}
