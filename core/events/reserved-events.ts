import { AppError } from '../base/errors.js';
import type { RequestContext } from '../base/request-context.js';
import type { SchemaRegistry } from '../metadata/schema-registry.js';

const RESERVED_PREFIXES = ['tenant.', 'platform.', 'metadata.'];
const RECORD_EVENT = /^([a-z][a-z0-9_]*)\.([a-z][a-z0-9_]*)\.(created|updated|deleted)$/;

/**
 * Whether the platform itself raises events of this name, so an integrator may not publish it: `tenant.*`, `metadata.*`,
 * `platform.*`, the events packs declare (`events` in definePack), and the record events `<ns>.<schema>.created|updated|deleted` of a
 * schema the tenant sees. Other names (`erp.order.created`: there is no erp.order schema) stay open.
 */
export async function isReservedEvent(rc: RequestContext, schemas: SchemaRegistry, declared: ReadonlySet<string>, name: string): Promise<boolean> {
  if (declared.has(name) || RESERVED_PREFIXES.some((prefix) => name.startsWith(prefix))) return true;
  const record = RECORD_EVENT.exec(name);
  if (!record) return false;
  try {
    await schemas.resolve(rc, record[1], record[2]);
    return true;
  } catch (err) {
    if (err instanceof AppError && (err.code === 'schema_not_found' || err.code === 'invalid_identifier')) return false;
    throw err;
  }
}
