import { readFile } from 'node:fs/promises';
import type { Logger } from 'pino';
import type { Config } from '../../config/index.js';
import type { PackDefinition } from './define-pack.js';
import type { PackAudit, PackContext, PackDatabase, PackDialect, PackEvents, PackSecrets } from './pack-context.js';
import { SecretBox } from '../base/secret-box.js';
import type { Database } from '../db/database.js';
import type { EventsService } from '../events/events.service.js';
import type { KernelInternals } from './services.js';
import { systemContext } from '../base/request-context.js';
import { fromRoot } from '../base/package-root.js';
import type { SchemaInput } from '../metadata/schema-definition.js';

export const SCHEMAS_DIR = `${fromRoot('schemas')}/`;

/** Event name prefixes the kernel raises itself (tenants, platform settings). */
const KERNEL_EVENT_PREFIXES = ['tenant.', 'platform.'];

export interface LoadedPack {
  definition: PackDefinition;
  context: PackContext;
}

interface Requirement {
  /** `erp.catalog` (a service) or `tenant-admin` (a whole pack). */
  target: string;
  optional: boolean;
}

function requirementsOf(pack: PackDefinition): Requirement[] {
  return (pack.requires ?? []).map((r) => (r.endsWith('?') ? { target: r.slice(0, -1), optional: true } : { target: r, optional: false }));
}

/** The pack that provides a service (`erp.catalog` → `erp`), if it is loaded and provides it. */
function providerOf(service: string, byName: Map<string, PackDefinition>): PackDefinition | undefined {
  const dot = service.indexOf('.');
  const pack = byName.get(service.slice(0, dot));
  return pack && Object.hasOwn(pack.provides ?? {}, service.slice(dot + 1)) ? pack : undefined;
}

/**
 * Orders packs so that each loads after the packs its required services (or required packs) come from,
 * keeping list order otherwise. Refuses, naming the pack and what is missing, when a required service or
 * pack is absent, and names the cycle when packs require each other. Optional requirements do not order:
 * they are resolved when first used.
 */
export function orderPacks(packs: PackDefinition[]): PackDefinition[] {
  const byName = new Map<string, PackDefinition>();
  for (const pack of packs) {
    if (byName.has(pack.name)) throw new Error(`Pack "${pack.name}" is listed twice`);
    byName.set(pack.name, pack);
  }
  const dependencies = (pack: PackDefinition): PackDefinition[] => requirementsOf(pack).flatMap(({ target, optional }) => {
    if (optional) return [];
    const isService = target.includes('.');
    const provider = isService ? providerOf(target, byName) : byName.get(target);
    if (!provider) {
      const what = isService ? `the service "${target}", which no loaded pack provides` : `the pack "${target}", which is not loaded`;
      throw new Error(`Pack "${pack.name}" requires ${what} (loaded: ${[...byName.keys()].join(', ')})`);
    }
    return provider === pack ? [] : [provider];
  });
  const ordered: PackDefinition[] = [];
  const done = new Set<string>();
  const path: string[] = [];
  const visit = (pack: PackDefinition): void => {
    if (done.has(pack.name)) return;
    const at = path.indexOf(pack.name);
    if (at >= 0) throw new Error(`Packs require each other in a cycle: ${[...path.slice(at), pack.name].join(' → ')}`);
    path.push(pack.name);
    for (const dependency of dependencies(pack)) visit(dependency);
    path.pop();
    done.add(pack.name);
    ordered.push(pack);
  };
  for (const pack of packs) visit(pack);
  return ordered;
}

/**
 * Checks hook and `on` keys against what the packs declare, so that a typo fails at boot: a hook's namespace
 * must be declared and its schema one of the namespace's (any name in an open namespace); an event name
 * must be a record event of such a schema, an event some pack declares, or a kernel event.
 */
export function checkPackKeys(packs: PackDefinition[]): void {
  const namespaces = new Map(packs.flatMap((p) => (p.namespaces ?? []).map((ns) => [ns.name, ns] as const)));
  const declaredEvents = new Set(packs.flatMap((p) => p.events ?? []));
  const schemaKnown = (ns: string, schema: string): boolean => {
    const declaration = namespaces.get(ns);
    return !!declaration && (schema === '*' || declaration.open || (declaration.schemas ?? []).includes(schema));
  };
  const eventKnown = (name: string): boolean => {
    if (KERNEL_EVENT_PREFIXES.some((prefix) => name.startsWith(prefix)) || declaredEvents.has(name)) return true;
    if (name.endsWith('.*')) {
      const prefix = name.slice(0, -1);
      if ([...declaredEvents].some((e) => e.startsWith(prefix))) return true;
      // `ns.*` needs the namespace; `ns.schema.*` a schema of it (a typo such as erp.orders.* matches nothing).
      const parts = name.split('.');
      return parts.length === 2 ? namespaces.has(parts[0]) : parts.length === 3 && schemaKnown(parts[0], parts[1]);
    }
    const record = /^([a-z][a-z0-9_]*)\.([a-z][a-z0-9_]*)\.(created|updated|deleted)$/.exec(name);
    return !!record && schemaKnown(record[1], record[2]);
  };
  for (const pack of packs) {
    for (const key of Object.keys(pack.hooks ?? {})) {
      const [ns, schema] = key.split('.');
      if (!schemaKnown(ns, schema)) throw new Error(`Pack "${pack.name}" hooks "${key}", but no loaded pack declares the schema ${ns}.${schema}`);
    }
    for (const name of Object.keys(pack.on ?? {})) {
      if (!eventKnown(name)) throw new Error(`Pack "${pack.name}" handles "${name}", which no loaded pack declares (record events of its schemas or its events)`);
    }
  }
}

/**
 * Builds each pack's context, its provided services (once each) and wires its namespaces, events, app code,
 * seeds, hooks and event handlers into the kernel, in dependency order.
 */
export function wirePacks(packs: PackDefinition[], kernel: KernelInternals, config: Config, logger: Logger): LoadedPack[] {
  const ordered = orderPacks(packs);
  checkPackKeys(ordered);
  const byName = new Map(ordered.map((p) => [p.name, p]));
  const contexts = new Map<string, PackContext>();
  const built = new Map<string, unknown>();
  const building: string[] = [];

  const build = (service: string): unknown => {
    if (built.has(service)) return built.get(service);
    if (building.includes(service)) throw new Error(`Services need each other to be built: ${[...building, service].join(' → ')}`);
    const provider = providerOf(service, byName)!;
    building.push(service);
    const value = provider.provides![service.slice(provider.name.length + 1)](contexts.get(provider.name)!);
    building.pop();
    built.set(service, value);
    return value;
  };

  const contextFor = (definition: PackDefinition): PackContext => {
    const declared = new Map(requirementsOf(definition).map((r) => [r.target, r.optional]));
    const use = (name: string): unknown => {
      const optional = name.endsWith('?');
      const service = optional ? name.slice(0, -1) : name;
      const own = service.startsWith(`${definition.name}.`);
      if (!own && !declared.has(service)) throw new Error(`Pack "${definition.name}" uses "${service}" without declaring it in requires`);
      if (!own && declared.get(service) !== optional) {
        throw new Error(`Pack "${definition.name}" uses "${name}" but requires "${service}${declared.get(service) ? '?' : ''}"`);
      }
      if (!providerOf(service, byName)) {
        if (optional) return undefined;
        throw new Error(`Pack "${definition.name}" uses "${service}", which no loaded pack provides`);
      }
      return build(service);
    };
    return { ...kernelContext(definition.name, kernel, config, logger, definition.name, definition.events ?? []), use: use as PackContext['use'] };
  };

  for (const definition of ordered) contexts.set(definition.name, contextFor(definition));
  return ordered.map((definition) => {
    const context = contexts.get(definition.name)!;
    for (const key of Object.keys(definition.provides ?? {})) build(`${definition.name}.${key}`);
    for (const ns of definition.namespaces ?? []) kernel.schemas.declareNamespace(definition.name, definition.licensed ?? null, ns);
    if (definition.licensed) kernel.tenants.declareAppCode(definition.licensed);
    kernel.events.declare(definition.events ?? []);
    for (const [name, seed] of Object.entries(definition.seeds ?? {})) kernel.seeds.add(name, (rc, tenant) => seed(rc, context, tenant));
    for (const [key, hook] of Object.entries(definition.hooks ?? {})) kernel.hooks.register(key, (payload, rc) => hook(payload, rc, context));
    for (const [pattern, handler] of Object.entries(definition.on ?? {})) {
      kernel.events.subscribe(`${definition.name}:${pattern}`, pattern, (event) => handler(event, context));
    }
    return { definition, context };
  });
}

/** A record event (`ns.schema.created|updated|deleted`): the kernel's alone, raised by the records service. */
const RECORD_EVENT = /^[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*\.(created|updated|deleted)$/;

/** Events a pack may publish: any but record events (those it declares and kernel events such as `tenant.modules.updated` aside). */
function packEvents(pack: string, events: EventsService, declared: readonly string[]): PackEvents {
  const check = (name: string) => {
    if (RECORD_EVENT.test(name) && !declared.includes(name) && !KERNEL_EVENT_PREFIXES.some((prefix) => name.startsWith(prefix))) {
      throw new Error(`Pack "${pack}" publishes "${name}": record events are raised by the records service, once per write`);
    }
  };
  return Object.freeze<PackEvents>({
    publish: (rc, input) => {
      check(input.name);
      return events.publish(rc, input);
    },
    publishMany: (rc, inputs) => {
      for (const input of inputs) check(input.name);
      return events.publishMany(rc, inputs);
    },
  });
}

/** The database as a pack sees it: its own tables, no knex, no record tables. */
function packDatabase(db: Database): PackDatabase {
  const { dialect } = db;
  return Object.freeze<PackDatabase>({
    dialect: Object.freeze({
      name: dialect.name, toJson: (v: unknown) => dialect.toJson(v), fromJson: <T>(v: unknown) => dialect.fromJson<T>(v),
      isUniqueViolation: (err: unknown) => dialect.isUniqueViolation(err),
    }) as PackDialect,
    transaction: (rc, fn) => db.transaction(rc, fn),
    sql: (rc) => db.sql(rc),
    insertAtCommit: (rc, table, row, done) => db.insertAtCommit(rc, table, row, done),
    writeAtCommit: (rc, write) => db.writeAtCommit(rc, write),
    query: (table) => db.query(table),
    changes: db.changes,
    externalChangeToken: (rc) => db.externalChangeToken(rc),
  });
}

/**
 * The kernel services as a pack sees them, under its name, without its requirements (`use`): interfaces, and the
 * records service and bulk writer with the pack's authority (`writer` null: the kernel's own callers, its MCP tools).
 */
export function kernelContext(
  name: string, kernel: KernelInternals, config: Config, logger: Logger, writer: string | null = name, declaredEvents: readonly string[] = [],
): Omit<PackContext, 'use'> {
  return {
    name,
    config,
    logger: logger.child({ pack: name }),
    db: packDatabase(kernel.db),
    tenants: kernel.tenants,
    schemas: kernel.schemas,
    records: kernel.records.forPack(writer),
    bulk: kernel.bulk.forPack(writer),
    events: packEvents(name, kernel.events, declaredEvents),
    mail: kernel.mail,
    settings: kernel.settings,
    fetch: kernel.fetch,
    storage: kernel.storage,
    knowledge: kernel.knowledge,
    seeds: kernel.seeds,
    rateLimits: kernel.rateLimits,
    memberships: kernel.memberships,
    locales: kernel.records.locales,
    secrets: packSecrets(config),
    audit: packAudit(kernel),
  };
}

/** The audit log as a pack writes to it: entries in the transaction of their change. */
function packAudit(kernel: KernelInternals): PackAudit {
  const log = kernel.records.audit;
  return Object.freeze<PackAudit>({
    add: (rc, change, at) => log.add(rc, change, at),
    within: (rc, change, write) => kernel.db.transaction(rc, async (rc) => {
      const result = await write(rc);
      await log.add(rc, typeof change === 'function' ? change(result) : change);
      return result;
    }),
  });
}

/** Sealing of a pack's secrets at rest, as the kernel seals platform settings (SecretBox behind an interface). */
function packSecrets(config: Config): PackSecrets {
  const box = new SecretBox(config.settingsEncryptionKey);
  return Object.freeze<PackSecrets>({ seal: (value, context) => box.seal(value, context), open: (sealed, context) => box.open(sealed, context) });
}

/** Registers (or updates) the platform schemas each pack ships under schemas/<namespace>/<name>.schema.json. */
export async function registerPackSchemas(loaded: LoadedPack[], kernel: KernelInternals): Promise<void> {
  const rc = systemContext(null);
  for (const { definition } of loaded) {
    for (const ns of definition.namespaces ?? []) {
      for (const name of ns.schemas ?? []) {
        const file = `${SCHEMAS_DIR}${ns.name}/${name}.schema.json`;
        const input = JSON.parse(await readFile(file, 'utf8')) as SchemaInput;
        if (input.namespace !== ns.name || input.name !== name) {
          throw new Error(`${file} declares ${input.namespace}.${input.name}, expected ${ns.name}.${name}`);
        }
        await kernel.schemas.registerPlatform(rc, input);
      }
    }
  }
}

/** Licensed module of each pack by name, for the OpenAPI document. */
export function packModulesOf(packs: LoadedPack[]): Record<string, string | null> {
  return Object.fromEntries(packs.map(({ definition }) => [definition.name, definition.licensed ?? null]));
}
