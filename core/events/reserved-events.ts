import { AppError } from '../http/errors.js';
import type { RequestContext } from '../kernel/request-context.js';
import type { SchemaRegistry } from '../metadata/schema-registry.js';

const RESERVED_PREFIXES = ['tenant.', 'platform.'];
const RESERVED_NAMES = new Set(['cms.form.submitted', 'erp.inventory.updated']);
const RECORD_EVENT = /^([a-z][a-z0-9_]*)\.([a-z][a-z0-9_]*)\.(created|updated|deleted)$/;

/**
 * Whether the platform itself raises events of this name, so an integrator may not publish it: `tenant.*`,
 * `platform.*`, `cms.form.submitted`, `erp.inventory.updated`, and the record events
 * `<ns>.<schema>.created|updated|deleted` of a schema the tenant sees (`erp.order.created` among them).
 * Other names (`erp.shipment.created`: there is no erp.shipment schema) stay open.
 */
export async function isReservedEvent(rc: RequestContext, schemas: SchemaRegistry, name: string): Promise<boolean> {
  if (RESERVED_NAMES.has(name) || RESERVED_PREFIXES.some((prefix) => name.startsWith(prefix))) return true;
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
