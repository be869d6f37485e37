/**
 * The pack API: the only module of core a pack imports. Everything a pack author needs is here: definePack
 * and its declaration types, the context a pack gets (interfaces of the kernel services and its requirements),
 * the request context, the errors packs raise (and defineError for a pack's own), route declaration types and
 * the helpers routes share. No kernel class, repository or internal: records are read and written through
 * `pack.records` (one write path), a pack's own tables through `pack.db`. A pack never imports another pack's
 * files: it names what it needs in `requires` and reads it with `pack.use(...)`.
 */

// Declaring a pack.
export { definePack } from './kernel/define-pack.js';
/** A file of the package (e.g. a JSON schema under schemas/), from the sources and from the compiled dist/ alike. */
export { fromRoot } from './base/package-root.js';
export type { EventHandler, FilterHook, HookPayload, PackDefinition, SeedContribution, ServiceBuilder } from './kernel/define-pack.js';
/** What a pack gets; its services are read as `PackContext['records']`, `PackContext['db']`, … */
export type { PackContext } from './kernel/pack-context.js';
export type { McpToolDefinition } from './kernel/mcp-tool.js';
export type { PackServices } from './kernel/pack-services.js';
export type { Migration } from './db/migration.js';
export type { Config } from '../config/index.js';

// Request context and roles.
export { ROLE_RANK, systemContext } from './base/request-context.js';
export type { RequestContext, TenantRole } from './base/request-context.js';

// Errors: the ones packs raise; a pack declares its own codes with defineError(code, status, message).
export {
  AppError, Conflict, CouponInvalid, defineError, Forbidden, InvalidTransition, NotFound, RateLimited, SchemaNotFound, TenantNotFound, UpstreamFailed,
  ValidationFailed, VersionMismatch,
} from './base/errors.js';
export type { ErrorDetail } from './base/errors.js';

// Routes.
export type { ErrorCode, JsonSchema, PackRouter } from './http/route.js';
export type { AppContext } from './http/app-state.js';
export { bffSuccess } from './http/envelope.js';
export type { Page } from './http/envelope.js';
export { sendCacheable, sendCacheableBody } from './http/cacheable.js';
export { HTTP_URL, LOCALE_QUERY_PROPERTIES, OFFSET_QUERY, pageResponse, recordResponse, WRITE_LOCALE_QUERY } from './http/response-schemas.js';
export { listQueryOf } from './data/list-query-schema.js';
export { clientKey } from './http/client-key.js';

// Records, schemas and values.
export type { DataRecord, RecordQuery } from './data/records.service.js';
export type { ReadOptions, RecordOf, RecordTypes } from './data/pack-records.js';
export type { LocaleChoice } from './data/locales.js';
export { queryFromString, splitLocale } from './data/list-query.js';
export { applyMergePatch, mergePatchSchema } from './data/merge-patch.js';
export type { SchemaInput } from './metadata/schema-definition.js';
export { assertIdentifier } from './metadata/schema-registry.js';
export { createAjv, toIssues } from './base/ajv.js';
export { newId, nowIso, UUID_PATTERN } from './base/ids.js';
export { FetchError } from './fetch/fetch-error.js';
export type { TenantRecord } from './tenants/tenants.repository.js';
