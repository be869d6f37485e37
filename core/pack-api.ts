/**
 * The pack API: the only module of core a pack imports. Everything a pack author needs is here: definePack
 * and its declaration types, the context a pack gets (kernel services and its requirements), the request
 * context, the error catalogue (and defineError for a pack's own errors), route declaration types and the
 * helpers routes share. A pack never imports another pack's files: it names what it needs in `requires`
 * and reads it with `pack.use(...)`.
 */

// Declaring a pack.
export { definePack } from './kernel/define-pack.js';
/** A file of the package (e.g. a JSON schema under schemas/), from the sources and from the compiled dist/ alike. */
export { fromRoot } from './package-root.js';
export type {
  EventHandler, FilterHook, HookPayload, NamespaceDeclaration, PackDefinition, RecordAction, SeedContribution, ServiceBuilder,
} from './kernel/define-pack.js';
export type { PackContext, ServiceName } from './kernel/pack-context.js';
export type { McpToolDefinition, ToolCall } from './mcp/mcp-tool.js';

export type { PackServices } from './kernel/pack-services.js';
export type { Migration } from './db/migration.js';
export type { Config } from '../config/index.js';

// Request context and roles.
export { ROLE_RANK, systemContext } from './kernel/request-context.js';
export type { Principal, RequestContext, TenantRole } from './kernel/request-context.js';

// The error catalogue; a pack declares its own codes with defineError(code, status, message).
export * from './http/errors.js';

// Routes.
export type { AuthLevel, BodyOf, ErrorCode, HttpMethod, JsonSchema, PackRouter, RouteContext, RouteHandler, RouteSpec } from './http/route.js';
export type { AppContext } from './http/app-state.js';
export { bffSuccess } from './http/envelope.js';
export type { Page, Pagination } from './http/envelope.js';
export { sendCacheable, sendCacheableBody } from './http/cacheable.js';
export { listQueryOf, listQuerySchema, OFFSET_QUERY, pageResponse, recordResponse } from './http/response-schemas.js';
export { matchesEtag } from './http/conditional.js';
export { clientKey } from './http/client-key.js';

// Records, schemas and values.
export type { DataRecord, RecordQuery } from './data/records.service.js';
export { queryFromString } from './data/list-query.js';
export type { FieldChange, RecordsRepository } from './data/records.repository.js';
export type { CompiledSchema } from './metadata/schema-registry.js';
export { applyMergePatch } from './data/merge-patch.js';
export type { SchemaInput } from './metadata/schema-definition.js';
export { assertIdentifier } from './metadata/schema-registry.js';
export { createAjv, toIssues } from './metadata/ajv.js';
export { newId, nowIso, UUID_PATTERN } from './db/ids.js';

// Kernel services (reached through the PackContext) and their types.
export type { Database, Query, Sql } from './db/database.js';
export type { EventsService } from './events/events.service.js';
export type { PlatformEvent } from './events/event.js';
export type { FetchService } from './fetch/fetch.service.js';
export { FetchError } from './fetch/fetch-error.js';
export type { MailMessage, MailService } from './mail/mail.service.js';
export type { RateLimitService } from './ratelimit/rate-limit.service.js';
export type { PlatformSettings, PlatformSettingsService, SettingKey } from './settings/platform-settings.service.js';
export type { TenantsService } from './tenants/tenants.service.js';
export type { TenantPlan, TenantRecord, TenantStatus } from './tenants/tenants.repository.js';
