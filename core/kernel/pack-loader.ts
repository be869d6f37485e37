import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import type { Config } from '../../config/index.js';
import type { PackDefinition } from './define-pack.js';
import type { PackContext } from './pack-context.js';
import type { KernelInternals } from './services.js';
import { systemContext } from './request-context.js';
import type { SchemaInput } from '../metadata/schema-definition.js';

export const SCHEMAS_DIR = fileURLToPath(new URL('../../schemas/', import.meta.url));

export interface LoadedPack {
  definition: PackDefinition;
  context: PackContext;
}

/** Checks `requires` (every required pack is listed before its dependant) and that names are unique. */
export function orderPacks(packs: PackDefinition[]): PackDefinition[] {
  const seen = new Set<string>();
  for (const pack of packs) {
    if (seen.has(pack.name)) throw new Error(`Pack "${pack.name}" is listed twice`);
    for (const required of pack.requires ?? []) {
      if (!seen.has(required)) {
        const listed = packs.some((p) => p.name === required);
        throw new Error(`Pack "${pack.name}" requires "${required}", which is ${listed ? 'listed after it' : 'not listed'} in config/packs.ts`);
      }
    }
    seen.add(pack.name);
  }
  return packs;
}

/** Builds each pack's context and wires its namespaces, hooks and event handlers into the kernel. */
export function wirePacks(packs: PackDefinition[], kernel: KernelInternals, config: Config, logger: Logger): LoadedPack[] {
  return orderPacks(packs).map((definition) => {
    const context = packContext(definition.name, kernel, config, logger);
    for (const ns of definition.namespaces ?? []) kernel.schemas.declareNamespace(definition.name, definition.licensed ?? null, ns);
    for (const [key, hook] of Object.entries(definition.hooks ?? {})) kernel.hooks.register(key, hook, context);
    for (const [pattern, handler] of Object.entries(definition.on ?? {})) {
      kernel.events.on(pattern, (event) => handler(event, context));
    }
    return { definition, context };
  });
}

/** The kernel services as a pack (or the kernel's own tools) sees them, under a name of its own. */
export function packContext(name: string, kernel: KernelInternals, config: Config, logger: Logger): PackContext {
  return {
    name,
    config,
    logger: logger.child({ pack: name }),
    db: kernel.db,
    tenants: kernel.tenants,
    schemas: kernel.schemas,
    records: kernel.records,
    events: kernel.events,
    mail: kernel.mail,
    settings: kernel.settings,
    fetch: kernel.fetch,
    storage: kernel.storage,
    knowledge: kernel.knowledge,
    siteProfile: kernel.siteProfile,
    rateLimits: kernel.rateLimits,
  };
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
