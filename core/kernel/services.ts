import type { Logger } from 'pino';
import type { Database } from '../db/database.js';
import type { RecordsService } from '../data/records.service.js';
import type { BulkWriter } from '../data/bulk.js';
import type { EventsService } from '../events/events.service.js';
import type { HookRegistry } from '../hooks/hook-registry.js';
import type { Authenticator } from '../http/auth.js';
import type { MailService } from '../mail/mail.service.js';
import type { SchemaRegistry } from '../metadata/schema-registry.js';
import type { PlatformSettingsService } from '../settings/platform-settings.service.js';
import type { SchemaEvolution } from '../data/schema-evolution.js';
import type { TenantsService } from '../tenants/tenants.service.js';
import type { FetchService } from '../fetch/fetch.service.js';
import type { StorageService } from '../storage/storage.service.js';
import type { KnowledgeService } from '../knowledge/knowledge.service.js';
import type { BackgroundTasks } from '../base/background.js';
import type { Metrics } from '../metrics/metrics.js';
import type { Seeds } from './seeds.js';
import type { MembershipHolder } from '../tenants/memberships.js';
import type { RateLimitService } from '../ratelimit/rate-limit.service.js';

/** The kernel services, built once per app (core/app.ts) and handed to packs through their PackContext. */
export interface KernelServices {
  readonly db: Database;
  readonly tenants: TenantsService;
  readonly schemas: SchemaRegistry;
  readonly records: RecordsService;
  /** Many records of one schema at once, all or none, as single writes go (CONTRACT.md 12.3). */
  readonly bulk: BulkWriter;
  readonly events: EventsService;
  readonly mail: MailService;
  /** Platform settings (SMTP, URLs): the environment's values overridden by what a superadmin stored. */
  readonly settings: PlatformSettingsService;
  readonly fetch: FetchService;
  readonly storage: StorageService;
  readonly knowledge: KnowledgeService;
  /** Named seeds the packs contribute to (provisioning runs them). */
  readonly seeds: Seeds;
  /** Roles that memberships grant to tokens without a tenant claim (installed by the tenant-admin pack). */
  readonly memberships: MembershipHolder;
  /** Fixed-window rate limits in the database, shared by every process on it. */
  readonly rateLimits: RateLimitService;
}

export interface KernelInternals extends KernelServices {
  readonly hooks: HookRegistry;
  readonly authenticator: Authenticator;
  readonly background: BackgroundTasks;
  readonly logger: Logger;
  /** Prometheus metrics: counters to increment and `registerGauge` for gauges read at scrape time. */
  readonly metrics: Metrics;
  /** Schema changes and deletions (CONTRACT.md 12.1). */
  readonly evolution: SchemaEvolution;
  /** API tokens of the tenants' integrations (CONTRACT.md 16.2). */
  readonly apiTokens: ApiTokensService;
  /** Custom roles with their policies (CONTRACT.md 16.1). */
  readonly roles: RolesService;
}
import type { ApiTokensService } from '../access/api-tokens.service.js';
import type { RolesService } from '../access/roles.service.js';
