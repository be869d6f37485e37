import { createServer, ServerResponse, type IncomingMessage, type Server } from 'node:http';
import { Server as NetServer } from 'node:net';
import Koa from 'koa';
import type { Logger } from 'pino';
import type { Config } from '../config/index.js';
import { packs as defaultPacks } from '../config/packs.js';
import { connectDatabase } from './db/connect.js';
import { Database } from './db/database.js';
import { migrateLatest, pendingMigrations } from './db/migrate.js';
import type { Migration } from './db/migration.js';
import type { AppContext, AppState } from './http/app-state.js';
import { healthRoutes } from './http/health.routes.js';
import { requestPipeline } from './http/request-pipeline.js';
import { countQuery, queryCountHeader } from './db/query-count.js';
import { answerClientErrors } from './http/client-error.js';
import { PackRouter, type RouteEntry } from './http/route.js';
import { routeDispatch } from './http/route-dispatch.js';
import type { PackDefinition } from './kernel/define-pack.js';
import type { PackContext } from './kernel/pack-context.js';
import { checkPackKeys, kernelContext, orderPacks, packModulesOf, registerPackSchemas, wirePacks, type LoadedPack } from './kernel/pack-loader.js';
import type { KernelInternals } from './kernel/services.js';
import { createLogger } from './base/logger.js';
import { publicRateLimit } from './ratelimit/public-rate-limit.js';
import { publicCors } from './http/public-cors.js';
import { kernelTools } from './mcp/kernel-tools.js';
import { McpToolbox } from './mcp/mcp-toolbox.js';
import { mcpRoutes } from './mcp/mcp.routes.js';
import { IdempotencyKeys } from './http/idempotency.js';
import { isMissingTable } from './db/translate-error.js';
import { systemContext } from './base/request-context.js';
import { BackgroundTasks } from './base/background.js';
import { RevisionRetention } from './data/revision-retention.js';
import { SWEEP_TIMING, type TenantClaim } from './base/periodic-run.js';
import { AuditLog } from './audit/audit-log.repository.js';
import { AuditRetention } from './audit/audit-retention.js';
import { auditLogRoutes } from './audit/audit-log.routes.js';
import { auditLogMigration } from './db/migrations/0015-audit-log.js';
import { contentLocalesMigration } from './db/migrations/0018-content-locales.js';
import { kernelMigration } from './db/migrations/0001-kernel.js';
import { rateLimitsMigration } from './db/migrations/0002-rate-limits.js';
import { idFunctionMigration } from './db/migrations/0003-id-function.js';
import { idempotencyMigration } from './db/migrations/0004-idempotency.js';
import { recordCountsMigration } from './db/migrations/0010-record-counts.js';
import { schemaVersionsMigration } from './db/migrations/0011-schema-versions.js';
import { schemaMigrationRunsMigration } from './db/migrations/0012-schema-migration-runs.js';
import { apiTokensMigration } from './db/migrations/0013-api-tokens.js';
import { recordRevisionsMigration } from './db/migrations/0014-record-revisions.js';
import { contentWorkflowMigration } from './db/migrations/0017-content-workflow.js';
import { releasesMigration } from './db/migrations/0019-releases.js';
import { eventsMigration } from './db/migrations/0100-events.js';
import { outboxRetentionMigration } from './db/migrations/0101-outbox-retention.js';
import { outboxEventsByIdMigration } from './db/migrations/0102-outbox-events-by-id.js';
import { outboxPositionsMigration } from './db/migrations/0103-outbox-positions.js';
import { outboxHandlersMigration } from './db/migrations/0104-outbox-handlers.js';
import { attemptResponsesMigration } from './db/migrations/0105-attempt-responses.js';
import { platformSettingsMigration } from './db/migrations/0200-platform-settings.js';
import { knowledgeMigration } from './db/migrations/0300-knowledge.js';
import { storageMigration } from './db/migrations/0400-storage.js';
import { RecordsService } from './data/records.service.js';
import { schemaReadAccess } from './data/read-access.js';
import { BulkWriter } from './data/bulk.js';
import { SchemaEvolution } from './data/schema-evolution.js';
import { metadataRoutes } from './data/metadata.routes.js';
import { dataRoutes } from './data/data.routes.js';
import { bulkRoutes } from './data/bulk.routes.js';
import { changesRoutes } from './data/changes.routes.js';
import { DraftsService } from './workflow/drafts.service.js';
import { draftRoutes } from './workflow/drafts.routes.js';
import { ScheduledPublish } from './workflow/scheduled-publish.js';
import { ReleasesService } from './workflow/releases.service.js';
import { releasesRoutes } from './workflow/releases.routes.js';
import { PreviewsService } from './workflow/previews.service.js';
import { previewsRoutes } from './workflow/previews.routes.js';
import { EventsService } from './events/events.service.js';
import { ChangeStreams } from './events/change-stream.js';
import { installOutbox } from './events/outbox.module.js';
import { HookRegistry } from './hooks/hook-registry.js';
import { Authenticator } from './http/auth.js';
import { authConfigRoutes } from './http/auth-config.routes.js';
import { metricsRoutes } from './http/metrics.routes.js';
import type { RouteDeps } from './http/route.js';
import { MailService } from './mail/mail.service.js';
import { SchemaRegistry } from './metadata/schema-registry.js';
import { PlatformSettingsService } from './settings/platform-settings.service.js';
import { TenantsService } from './tenants/tenants.service.js';
import { MembershipHolder } from './tenants/memberships.js';
import { FetchService } from './fetch/fetch.service.js';
import { StorageService } from './storage/storage.service.js';
import { mountStorageRoutes } from './storage/storage.routes.js';
import { apiTokensRoutes } from './access/api-tokens.routes.js';
import { ApiTokensService } from './access/api-tokens.service.js';
import { RolesService } from './access/roles.service.js';
import { rolesRoutes } from './access/roles.routes.js';
import { RecordPolicies } from './data/record-policies.js';
import { rolesMigration } from './db/migrations/0016-roles.js';
import { KnowledgeService } from './knowledge/knowledge.service.js';
import { Metrics } from './metrics/metrics.js';
import { Seeds } from './kernel/seeds.js';
import { RateLimitService } from './ratelimit/rate-limit.service.js';
import { OpenApiService } from './openapi/openapi.service.js';
import { openapiRoutes } from './openapi/openapi.routes.js';
import { docsRoutes } from './docs/docs.routes.js';
import { consoleRoutes } from './admin-console/console.routes.js';

/*
 * The composition root: the one module that builds the service from its parts. In order: the kernel's
 * migrations (packs bring theirs in their definitions), the kernel services, the kernel's routes, the
 * operations endpoints, then the packs (ordered, wired and mounted through the pack loader). Every module
 * below takes what it needs as arguments; none builds another module's service or mounts its routes.
 */

export interface App {
  koa: Koa<AppState, AppContext>;
  kernel: KernelInternals;
  packs: LoadedPack[];
  config: Config;
  logger: Logger;
  /** Every declared route, for the OpenAPI document. */
  routes: RouteEntry[];
  /** Starts listening on config.port/host (or the given port); resolves with the server. */
  listen(port?: number, host?: string): Promise<Server>;
  /**
   * Stops accepting connections, lets requests in flight finish (their responses carry Connection: close)
   * for up to SHUTDOWN_TIMEOUT_MS before cutting what is left, drains the dispatcher and background work,
   * and closes the database pool.
   */
  close(): Promise<void>;
}

export interface CreateAppOptions {
  packs?: PackDefinition[];
  logger?: Logger;
  /** HTTP request metrics (default on; the observability benchmark turns them off to measure their cost). */
  httpMetrics?: boolean;
}

/** The kernel's migrations, in the order they run (their names'). Packs add theirs through definePack({ migrations }). */
const kernelMigrations: Migration[] = [
  kernelMigration, rateLimitsMigration, idFunctionMigration, idempotencyMigration, recordCountsMigration, schemaVersionsMigration,
  schemaMigrationRunsMigration, apiTokensMigration, recordRevisionsMigration, auditLogMigration, rolesMigration, contentWorkflowMigration,
  contentLocalesMigration, releasesMigration,
  eventsMigration, outboxRetentionMigration, outboxEventsByIdMigration, outboxPositionsMigration,
  outboxHandlersMigration, attemptResponsesMigration, platformSettingsMigration, knowledgeMigration, storageMigration,
];

export function allMigrations(packs: PackDefinition[]): Migration[] {
  return [...kernelMigrations, ...packs.flatMap((p) => p.migrations ?? [])];
}

/** The claims of the platform's own share of a sweep (its rows have no tenant): a name no tenant can have. */
const PLATFORM_CLAIM = '_platform';

/** The kernel services, built once per app. */
function createKernelServices(config: Config, db: Database, logger: Logger): KernelInternals {
  const metrics = new Metrics(db);
  const tenants = new TenantsService(db);
  const schemas = new SchemaRegistry(db, undefined, config.schemaWriteWaitMs);
  const hooks = new HookRegistry();
  const events = new EventsService(db, logger);
  const audit = new AuditLog(db);
  const roles = new RolesService(db, audit);
  const readAccess = schemaReadAccess(schemas, tenants);
  // An expansion shows a referenced record the caller's policies let it read, with its readable fields; else null (16.1).
  const records: RecordsService = new RecordsService(db, schemas, hooks, events, audit, async (rc, schema) => (await readAccess(rc, schema))
    && policies.expansionAccess(rc, schema.namespace, schema.name));
  const policies: RecordPolicies = new RecordPolicies(roles, schemas, (schema) => records.relations.manyFields(schema));
  roles.usePolicyCheck(policies);
  records.usePolicies(policies);
  schemas.guard(records.relations);
  const bulk = new BulkWriter(db, records, schemas);
  const evolution = new SchemaEvolution(db, schemas, events, records.repository.totals, config.schemaMigrateBatch, audit);
  const settings = new PlatformSettingsService(db, config, events, logger);
  const mail = new MailService(settings);
  const apiTokens = new ApiTokensService(db, roles, audit, logger);
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
  // Memberships and invitations hold built-in or custom roles (CONTRACT.md 16.1); a role they hold is not deleted.
  memberships.useRoleNames({ exists: (rc, tenantId, role) => roles.exists(rc, tenantId, role), describe: (rc, tenantId) => roles.describe(rc, tenantId) });
  roles.useHolders(memberships);
  const rateLimits = new RateLimitService(db, logger);
  // A sweep's run is claimed per tenant (one counter row per window, allowed once), so one process of many does it.
  const claimSweep = (sweep: string): TenantClaim => async (tenantId) => (await rateLimits.hit(tenantId || PLATFORM_CLAIM, sweep, { limit: 1, windowMs: SWEEP_TIMING.everyMs })).allowed;
  background.register(new RevisionRetention(records.revisions, config.revisionRetentionDays, logger, claimSweep('revision-retention')));
  background.register(new AuditRetention(audit, config.auditRetentionDays, logger, claimSweep('audit-retention')));
  return {
    db, tenants, schemas, hooks, events, records, bulk, evolution, settings, mail, authenticator, fetch, storage, knowledge, background, logger, metrics,
    seeds, rateLimits, memberships, apiTokens, roles,
  };
}

/** The content workflow (CONTRACT.md 17, core/workflow/): drafts, releases, previews and their scheduled publishing. */
interface ContentWorkflow {
  drafts: DraftsService;
  releases: ReleasesService;
  previews: PreviewsService;
}

function contentWorkflow(kernel: KernelInternals): ContentWorkflow {
  const drafts = new DraftsService(kernel.db, kernel.schemas, kernel.records, kernel.events, kernel.logger);
  const releases = new ReleasesService(kernel.db, drafts, kernel.records, kernel.events, kernel.logger);
  kernel.background.register(new ScheduledPublish([(now) => drafts.publishDue(now), (now) => releases.publishDue(now)], kernel.logger));
  return { drafts, releases, previews: new PreviewsService(kernel.db, drafts, releases, kernel.records) };
}

/** Endpoints of kernel services (not of a pack), mounted on the kernel's router in this order. */
const kernelRoutes: Array<(router: PackRouter, kernel: KernelInternals, config: Config, workflow: ContentWorkflow) => void> = [
  (router, kernel) => metadataRoutes(router, kernel.schemas, kernel.evolution, kernel.records.relations, kernel.records.policies!),
  // Before the record routes: /data/{ns}/{schema}/export is not a record id.
  (router, kernel, config) => bulkRoutes(router, kernel.schemas, kernel.records, kernel.bulk, kernel.db, config),
  (router, kernel, config) => {
    const streams = new ChangeStreams(kernel.db, kernel.events.bus, config.changes, kernel.logger);
    kernel.background.register(streams);
    changesRoutes(router, kernel.schemas, kernel.tenants, streams, kernel.records);
  },
  (router, kernel, _config, workflow) => {
    // Drafts, scheduled publishing, releases and previews (CONTRACT.md 17), beside the record routes they extend.
    draftRoutes(router, kernel.schemas, workflow.drafts);
    releasesRoutes(router, workflow.releases);
    previewsRoutes(router, workflow.previews);
    dataRoutes(router, kernel.schemas, kernel.records, workflow.drafts);
  },
  (router, kernel) => auditLogRoutes(router, kernel.records.audit),
  (router, kernel, config) => installOutbox(router, kernel, config),
  (router, kernel) => mountStorageRoutes(router, kernel.storage),
  (router, kernel) => apiTokensRoutes(router, kernel.apiTokens),
  (router, kernel) => rolesRoutes(router, kernel.roles),
];

/**
 * Self-description and operations: GET /api/v1/openapi.json on the kernel router, and a router at the
 * root for GET /docs (the API reference), GET /admin (the admin console) and GET /metrics (Prometheus);
 * GET /api/v1/auth/config and /auth/me tell clients how to sign in and who they are.
 */
function operationsRoutes(deps: RouteDeps, kernelRouter: PackRouter, kernel: KernelInternals, config: Config, packs: LoadedPack[]): PackRouter {
  const openapi = new OpenApiService({
    routes: deps.routeTable, config, schemas: kernel.schemas, tenants: kernel.tenants, packModules: packModulesOf(packs),
    locales: kernel.records.locales,
  });
  openapiRoutes(kernelRouter, openapi, kernel.authenticator, kernel.tenants);
  authConfigRoutes(kernelRouter, config);
  const root = new PackRouter(deps, 'kernel', null, '');
  docsRoutes(root);
  consoleRoutes(root, config);
  metricsRoutes(root, kernel.metrics, {
    token: config.metricsToken,
    hidden: config.isProduction && !config.metricsToken && !config.metricsPublic,
  });
  return root;
}

/** The kernel's own tools run on the kernel services alone: they require no pack's service. */
const kernelUsesNoPack = ((service: string) => {
  throw new Error(`The kernel uses no pack service ("${service}")`);
}) as PackContext['use'];

/** Builds the app: database, migrations, kernel services, packs and their routers. */
/**
 * How long the drain waits after the last request began before it closes idle keep-alive connections: a
 * client that is still sending sends again within milliseconds, and is answered with Connection: close.
 */
const DRAIN_QUIET_MS = 250;

/** The connections the servers still hold (requests in flight and idle keep-alive ones). */
async function openConnections(servers: Server[]): Promise<number> {
  const counts = await Promise.all(servers.map((s) => new Promise<number>((resolve) => s.getConnections((err, n) => resolve(err ? 0 : n)))));
  return counts.reduce((a, b) => a + b, 0);
}

export async function createApp(config: Config, options: CreateAppOptions = {}): Promise<App> {
  // Requirements, cycles and hook/event keys are checked before anything touches the database.
  const packDefinitions = orderPacks(options.packs ?? defaultPacks);
  checkPackKeys(packDefinitions);
  const logger = options.logger ?? createLogger(config);
  if (config.isProduction && !config.metricsToken) {
    logger.warn(config.metricsPublic ? 'METRICS_PUBLIC=true: /metrics is public' : 'METRICS_TOKEN is unset: /metrics answers 404 (set METRICS_TOKEN, or METRICS_PUBLIC=true)');
  }
  const { knex, dialect, ping } = connectDatabase(config.databaseUrl, config.databasePoolMax, {
    warn: (m) => logger.warn({ db: m }, 'database warning'),
    error: (m) => logger.error({ db: m }, 'database error'),
  });
  const db = new Database(knex, dialect, { url: config.databaseUrl, log: logger });
  const migrations = allMigrations(packDefinitions);

  let migrated = false;
  try {
    if (config.migrateOnStart) {
      const applied = await migrateLatest(knex, dialect, migrations);
      if (applied.length) logger.info({ applied }, 'migrations applied');
    }
    migrated = (await pendingMigrations(knex, dialect, migrations)).length === 0;
  } catch (err) {
    await db.close();
    throw err;
  }

  const kernel = createKernelServices(config, db, logger);
  const loaded = wirePacks(packDefinitions, kernel, config, logger);
  if (migrated) await registerPackSchemas(loaded, kernel);

  const routes: RouteEntry[] = [];
  const workflow = contentWorkflow(kernel);
  const deps = {
    authenticator: kernel.authenticator, tenants: kernel.tenants, memberships: kernel.memberships, customRoles: kernel.roles, logger, routeTable: routes,
    idempotency: new IdempotencyKeys(kernel.db),
    previews: (tenantId: string, token: string) => workflow.previews.resolve(tenantId, token),
  };
  const koa = new Koa<AppState, AppContext>({ proxy: config.trustProxy, maxIpsCount: 1 });
  koa.silent = true;
  if (config.nodeEnv === 'test') kernel.db.knex.on('query', countQuery);

  const kernelRouter = new PackRouter(deps, 'kernel', null);
  healthRoutes(kernelRouter, async () => {
    try {
      await ping();
      if (!migrated) migrated = (await pendingMigrations(knex, dialect, migrations)).length === 0;
      return migrated;
    } catch {
      return false;
    }
  });
  for (const mount of kernelRoutes) mount(kernelRouter, kernel, config, workflow);
  const toolbox = new McpToolbox([
    { tools: kernelTools(deps.idempotency, kernel.records.policies!), module: null, context: { ...kernelContext('kernel', kernel, config, logger, null), use: kernelUsesNoPack } },
    ...loaded.map(({ definition, context }) => ({ tools: definition.tools ?? {}, module: definition.licensed ?? null, context })),
  ], kernel.tenants, logger, (rc) => kernel.records.policies!.actionsOf(rc));
  mcpRoutes(kernelRouter, toolbox);
  const routers = [kernelRouter, operationsRoutes(deps, kernelRouter, kernel, config, loaded)];
  for (const { definition, context } of loaded) {
    if (!definition.routes) continue;
    const router = new PackRouter(deps, definition.name, definition.licensed ?? null);
    definition.routes(router, context);
    routers.push(router);
  }
  const dispatch = routeDispatch(routers.map((r) => r.router));
  const counted = config.nodeEnv === 'test' ? queryCountHeader() : null;
  // The one Koa middleware: the pipeline runs the routes itself (no compose layer between them).
  koa.use(requestPipeline({
    logger,
    metrics: options.httpMetrics !== false ? kernel.metrics : null,
    guards: [publicCors(), publicRateLimit(config.rateLimits.publicPerMinute, dispatch.refuses)],
    routes: counted ? (ctx, next) => counted(ctx, () => dispatch(ctx, next)) : dispatch,
  }));

  for (const { definition, context } of loaded) await definition.start?.(context);
  await kernel.background.startAll();

  const servers: Server[] = [];
  let closed = false;
  let draining = false;
  /** When the last request began, counted once shutdown began (see close). */
  let lastRequestAt = 0;
  /** Once shutdown began, every response (also of a request already under way) closes its connection. */
  class DrainingResponse extends ServerResponse {
    constructor(req: IncomingMessage) {
      super(req);
      if (draining) lastRequestAt = Date.now();
    }

    // writeHead(status, headers?) or writeHead(status, reason, headers?), passed on as they came (no rest
    // array per response: Node reads an undefined third argument as absent).
    override writeHead(statusCode: number, reasonOrHeaders?: any, headers?: any): this {
      if (draining && !this.headersSent) this.setHeader('Connection', 'close');
      return super.writeHead(statusCode, reasonOrHeaders, headers);
    }
  }
  const handle = koa.callback();
  return {
    koa, kernel, packs: loaded, config, logger, routes,
    async listen(port = config.port, host = config.host) {
      const server = createServer({ ServerResponse: DrainingResponse }, (req, res) => void handle(req, res));
      server.keepAliveTimeout = 65_000;
      answerClientErrors(server, logger);
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => resolve());
      });
      servers.push(server);
      return server;
    },
    async close() {
      if (closed) return;
      closed = true;
      draining = true;
      lastRequestAt = Date.now();
      const deadline = Date.now() + config.shutdownTimeoutMs;
      // Stop accepting, but keep open connections: http's close() would close the idle keep-alive ones at
      // once, and a request a client sent on one at that moment would be reset. Instead a request arriving
      // on any of them during the drain is answered, with Connection: close (DrainingResponse), and once no
      // request has begun for DRAIN_QUIET_MS the connections still idle are closed.
      const stopped = servers.map((s) => new Promise<void>((resolve) => { NetServer.prototype.close.call(s, () => resolve()); }));
      while (Date.now() < deadline && (await openConnections(servers)) > 0 && Date.now() - lastRequestAt < DRAIN_QUIET_MS) {
        await new Promise((r) => setTimeout(r, 25));
      }
      for (const s of servers) {
        s.closeIdleConnections();
        // Requests still running get SHUTDOWN_TIMEOUT_MS (from SIGTERM) to finish; then their connections are cut.
        const cut = setTimeout(() => s.closeAllConnections(), Math.max(0, deadline - Date.now()));
        cut.unref();
        s.once('close', () => clearTimeout(cut));
      }
      await Promise.all(stopped);
      await kernel.background.stopAll();
      for (const { definition, context } of [...loaded].reverse()) {
        try {
          await definition.stop?.(context);
        } catch (err) {
          logger.error({ err, pack: definition.name }, 'pack stop failed');
        }
      }
      await db.close();
    },
  };
}
