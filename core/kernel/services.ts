import type { Config } from '../../config/index.js';
import type { Logger } from 'pino';
import type { Database } from '../db/database.js';
import { isMissingTable } from '../db/translate-error.js';
import { systemContext } from './request-context.js';
import { RecordsService } from '../data/records.service.js';
import { schemaReadAccess } from '../data/read-access.js';
import { BulkWriter } from '../data/bulk.js';
import { EventsService } from '../events/events.service.js';
import { HookRegistry } from '../hooks/hook-registry.js';
import { Authenticator } from '../http/auth.js';
import { MailService } from '../mail/mail.service.js';
import { SchemaRegistry } from '../metadata/schema-registry.js';
import { PlatformSettingsService } from '../settings/platform-settings.service.js';
import { SchemaEvolution } from '../metadata/schema-evolution.js';
import { TenantsService } from '../tenants/tenants.service.js';
import { FetchService } from '../fetch/fetch.service.js';
import { StorageService } from '../storage/storage.service.js';
import { KnowledgeService } from '../knowledge/knowledge.service.js';
import { BackgroundTasks } from './background.js';
import { Metrics } from '../metrics/metrics.js';
import { Seeds } from './seeds.js';
import { MembershipHolder } from '../tenants/memberships.js';
import { RateLimitService } from '../ratelimit/rate-limit.service.js';
import { ApiTokensService } from '../access/api-tokens.service.js';
import { builtInRoles } from '../access/roles.js';

/** The kernel services, built once per app and handed to packs through their PackContext. */
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
}

export function createKernelServices(config: Config, db: Database, logger: Logger): KernelInternals {
  const metrics = new Metrics(db);
  const tenants = new TenantsService(db);
  const schemas = new SchemaRegistry(db, undefined, config.schemaWriteWaitMs);
  const hooks = new HookRegistry();
  const events = new EventsService(db, logger);
  const records = new RecordsService(db, schemas, hooks, events, schemaReadAccess(schemas, tenants));
  schemas.guard(records.relations);
  const bulk = new BulkWriter(db, records, schemas);
  const evolution = new SchemaEvolution(db, schemas, events, records.repository.totals, config.schemaMigrateBatch);
  const settings = new PlatformSettingsService(db, config, events, logger);
  const mail = new MailService(settings);
  // Custom roles (CONTRACT.md 16.1) will come in as another role catalogue.
  const apiTokens = new ApiTokensService(db, builtInRoles, logger);
  const authenticator = new Authenticator(config, apiTokens);
  const fetch = new FetchService(config, logger);
  const storage = new StorageService(config, db, logger, tenants);
  const knowledge = new KnowledgeService(config, db, logger);
  const background = new BackgroundTasks(logger);
  background.register({ name: 'storage', start() {}, stop: () => storage.close() });
  // A schema migration whose process died is rolled back before this one serves (CONTRACT.md 12.1).
  background.register({
    name: 'schema-migrations',
    async start() {
      try {
        await evolution.migrations.recover(systemContext(null, logger));
      } catch (err) {
        // Before `npm run migrate` there is nothing to roll back; the dispatcher says the tables are missing.
        if (!isMissingTable(err)) throw err;
      }
    },
    stop() {},
  });
  const seeds = new Seeds();
  const memberships = new MembershipHolder();
  const rateLimits = new RateLimitService(db, logger);
  return { db, tenants, schemas, hooks, events, records, bulk, evolution, settings, mail, authenticator, fetch, storage, knowledge, background, logger, metrics, seeds, rateLimits, memberships, apiTokens };
}
