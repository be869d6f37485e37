import type { Logger } from 'pino';
import type { Config } from '../../config/index.js';
import type { Database } from '../db/database.js';
import type { Dialect } from '../db/dialects/dialect.js';
import type { PackBulk, PackRecords } from '../data/pack-records.js';
import type { EventsService } from '../events/events.service.js';
import type { FetchService } from '../fetch/fetch.service.js';
import type { KnowledgeService } from '../knowledge/knowledge.service.js';
import type { MailService } from '../mail/mail.service.js';
import type { SchemaRegistry } from '../metadata/schema-registry.js';
import type { RateLimitService } from '../ratelimit/rate-limit.service.js';
import type { PlatformSettingsService } from '../settings/platform-settings.service.js';
import type { StorageService } from '../storage/storage.service.js';
import type { MembershipHolder } from '../tenants/memberships.js';
import type { AuditChange, AuditLog } from '../audit/audit-log.repository.js';
import type { RequestContext } from '../base/request-context.js';
import type { LocalesHolder } from '../tenants/tenant-locales.js';
import type { TenantsService } from '../tenants/tenants.service.js';
import type { PackServices } from './pack-services.js';
import type { Seeds } from './seeds.js';

/** A service some pack provides, as `<pack>.<service>`. */
export type ServiceName = keyof PackServices & string;

/** What a pack's repositories use of the engine's dialect: its name and how JSON columns are written and read. */
export type PackDialect = Pick<Dialect, 'name' | 'toJson' | 'fromJson' | 'isUniqueViolation'>;

/**
 * The database as a pack sees it, for its own tables (its migrations): transactions, statements and writes queued
 * until commit. The kernel's record tables are not the pack's: records are read and written through `records`.
 */
/** A pack's own tables, its transactions, and the change feed for caches kept across processes. */
export interface PackDatabase extends Pick<Database, 'transaction' | 'sql' | 'insertAtCommit' | 'writeAtCommit' | 'changes' | 'externalChangeToken'> {
  readonly dialect: PackDialect;
  /** A query builder on one of the pack's own tables. */
  query(table: string): ReturnType<Database['query']>;
}

/** Events a pack publishes: those it declares (`events`); record events are the kernel's. */
export type PackEvents = Pick<EventsService, 'publish' | 'publishMany'>;
export type PackSchemas = Pick<SchemaRegistry, 'registerForTenant' | 'list' | 'moduleOf' | 'sealedBy'>;
export type PackTenants = Pick<TenantsService, 'get' | 'require' | 'create' | 'update' | 'list' | 'listModules' | 'lookup' | 'isModuleEnabled' | 'setModule' | 'appCodes'>;
export type PackStorage = Pick<StorageService, 'findPublic' | 'publicUrl' | 'putObject' | 'getObject' | 'deleteObject' | 'signedUrl'>;
export type PackKnowledge = Pick<KnowledgeService, 'upsertForSource' | 'removeSource' | 'search'>;
export type PackFetch = Pick<FetchService, 'fetch' | 'assertAllowedUrl'>;
export type PackMail = Pick<MailService, 'send' | 'enqueue'>;
export type PackSettings = Pick<PlatformSettingsService, 'effective' | 'masked' | 'update' | 'getSmtp'>;
export type PackRateLimits = Pick<RateLimitService, 'hit' | 'enforce'>;
export type PackSeeds = Pick<Seeds, 'run' | 'names'>;
export interface PackAudit extends Pick<AuditLog, 'add'> {
  /** Runs `write` in a transaction (rc's, when it has one) whose commit carries the entry `change` (or `change(result)`). */
  within<T>(rc: RequestContext, change: AuditChange | ((result: NoInfer<T>) => AuditChange), write: (rc: RequestContext) => Promise<T>): Promise<T>;
}
export type PackMemberships = Pick<MembershipHolder, 'use' | 'roles'>;
/** The tenants' locales (CONTRACT.md 17.2): the tenant-admin pack installs its site config's with `use`. */
export type PackLocales = Pick<LocalesHolder, 'use' | 'localesOf' | 'changed'>;
/**
 * Seals a pack's secrets at rest (AES-256-GCM under SETTINGS_ENCRYPTION_KEY, as platform settings are); `context`
 * (e.g. `<tenant>:stripe.secretKey`) is authenticated with it, so a sealed value cannot be moved to another use.
 */
export interface PackSecrets {
  seal(value: string, context: string): string;
  open(sealed: string, context: string): string;
}

/**
 * What a pack gets from the kernel: interfaces of the kernel services (never their classes, their repositories or
 * their internals), its own config and logger, and the services it declared in `requires` (and its own), read
 * with `use`. Packs reach nothing else: no globals, no app.context, no other pack's files.
 */
export interface PackContext {
  readonly name: string;
  readonly config: Config;
  readonly logger: Logger;
  readonly db: PackDatabase;
  readonly tenants: PackTenants;
  readonly schemas: PackSchemas;
  /** Records, read and written through the one write path with the pack's authority (sealed schemas). */
  readonly records: PackRecords;
  /** Many records of one schema at once, all or none, as single writes go (CONTRACT.md 12.3). */
  readonly bulk: PackBulk;
  readonly events: PackEvents;
  readonly mail: PackMail;
  /** Platform settings (SMTP, URLs): the environment's values overridden by what a superadmin stored. */
  readonly settings: PackSettings;
  readonly fetch: PackFetch;
  readonly storage: PackStorage;
  readonly knowledge: PackKnowledge;
  /** Named seeds the packs contribute to (provisioning runs them). */
  readonly seeds: PackSeeds;
  /** Roles that memberships grant to tokens without a tenant claim (installed by the tenant-admin pack). */
  readonly memberships: PackMemberships;
  /** The tenants' locales (installed by the tenant-admin pack; English alone until then). */
  readonly locales: PackLocales;
  /** Fixed-window rate limits in the database, shared by every process on it. */
  readonly rateLimits: PackRateLimits;
  /** Seals secrets the pack keeps at rest (payment keys). */
  readonly secrets: PackSecrets;
  /**
   * The audit log (CONTRACT.md 16.4): `audit.add(rc, { action: 'module.updated', target: 'module/crm' })` queues an
   * administration entry in rc's transaction, by rc's actor. Never a secret in it.
   */
  readonly audit: PackAudit;
  /** A required service (or one of the pack's own). Throws if the pack did not declare it in `requires`. */
  use<K extends ServiceName>(service: K): PackServices[K];
  /** An optional requirement (declared `'crm.coupons?'`): undefined when no loaded pack provides it. */
  use<K extends ServiceName>(service: `${K}?`): PackServices[K] | undefined;
}
