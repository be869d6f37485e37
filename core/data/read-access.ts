import { ROLE_RANK, type RequestContext, type TenantRole } from '../base/request-context.js';
import type { RegisteredSchema } from '../metadata/schema-definition.js';
import type { SchemaRegistry } from '../metadata/schema-registry.js';
import type { TenantsService } from '../tenants/tenants.service.js';
import type { ReadAccess } from './relations.js';

/** The role the data API's read routes ask for (`GET /data/{ns}/{schema}`: the route's default). */
const READ_ROLE: TenantRole = 'viewer';

/**
 * The read check of `GET /data/{ns}/{schema}` as a function, for records a request reaches through
 * another schema (CONTRACT.md 12.2: "a referenced record the caller could not read is null"): the
 * caller's tenant role reaches the read role, and the licensed module of the schema's namespace is
 * enabled for the tenant (the same lookup the route makes, kept in memory by TenantsService). Work the
 * system does on its own (no principal) reads everything.
 */
export function schemaReadAccess(schemas: SchemaRegistry, tenants: TenantsService): ReadAccess {
  return async (rc: RequestContext, schema: RegisteredSchema) => {
    const p = rc.principal;
    if (p && !p.isSuperadmin && ROLE_RANK[p.role] < ROLE_RANK[READ_ROLE]) return false;
    const module = schemas.moduleOf(schema.namespace);
    if (!module || !rc.tenantId) return true;
    return (await tenants.lookup(rc, rc.tenantId, module))?.moduleEnabled ?? false;
  };
}
