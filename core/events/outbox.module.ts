import type { AuditLog } from '../audit/audit-log.repository.js';
import type { Logger } from 'pino';
import type { Config } from '../../config/index.js';
import type { BackgroundTasks } from '../base/background.js';
import type { Database } from '../db/database.js';
import type { FetchService } from '../fetch/fetch.service.js';
import type { PackRouter } from '../http/route.js';
import type { MailService } from '../mail/mail.service.js';
import type { SchemaRegistry } from '../metadata/schema-registry.js';
import type { Metrics } from '../metrics/metrics.js';
import type { RateLimitService } from '../ratelimit/rate-limit.service.js';
import type { EventsService } from './events.service.js';
import { connectorsRoutes } from './connectors.routes.js';
import { ConnectorsService } from './connectors.service.js';
import { Dispatcher } from './dispatcher.js';
import { eventsRoutes } from './events.routes.js';
import { EventsRepository } from './events.repository.js';
import { mailQueue } from './mail-queue.js';
import { MailSeal } from './mail-seal.js';
import { OutboxRetention } from './outbox-retention.js';
import { OUTBOX_OLDEST_AGE_GAUGE, OUTBOX_PENDING_GAUGE } from '../metrics/metrics.js';

/** The kernel services the outbox is built on. */
export interface OutboxKernel {
  readonly db: Database;
  readonly events: EventsService;
  readonly fetch: FetchService;
  readonly mail: MailService;
  readonly schemas: SchemaRegistry;
  readonly rateLimits: RateLimitService;
  readonly metrics: Metrics;
  readonly background: BackgroundTasks;
  readonly logger: Logger;
  readonly records: { readonly audit: AuditLog };
}

/**
 * Installs the outbox on the kernel: the connector fan-out (deliveries queued in the publishing
 * transaction), pack handler runs (queued the same way), durable mail, the dispatcher (a background task, poked after each commit that queued
 * work) and the /events and /connectors routes. Mounted once by the composition root (core/app.ts).
 */
export function installOutbox(router: PackRouter, kernel: OutboxKernel, config: Config): void {
  const connectors = new ConnectorsService(config, kernel.db, kernel.fetch, kernel.records.audit);
  const mailSeal = new MailSeal(config.settingsEncryptionKey);
  const dispatcher = new Dispatcher({
    config, connectors, events: new EventsRepository(kernel.db), fetch: kernel.fetch, mail: kernel.mail, mailSeal, logger: kernel.logger,
    metrics: kernel.metrics, handlers: (key) => kernel.events.handler(key),
  });
  kernel.metrics.registerGauge(OUTBOX_PENDING_GAUGE, 'Pending outbox deliveries (webhooks and mail)', async () => (await connectors.deliveries.pendingStats()).count);
  kernel.metrics.registerGauge(OUTBOX_OLDEST_AGE_GAUGE, 'Age in seconds of the oldest pending outbox delivery (0 when none)', async () => {
    const { oldestCreatedAt } = await connectors.deliveries.pendingStats();
    return oldestCreatedAt ? Math.max(0, (Date.now() - Date.parse(oldestCreatedAt)) / 1000) : 0;
  });
  const poke = () => dispatcher.poke();
  kernel.events.addFanout(async (rc, event, queued) => {
    let count = 0;
    await connectors.fanout(rc, event, (n) => {
      count = n;
      queued(n);
    });
    rc.afterCommit?.(() => {
      if (count) poke();
    });
  }, async (rc, events) => {
    await connectors.fanoutMany(rc, events);
    rc.afterCommit?.(poke);
  });
  kernel.events.useHandlerQueue(async (rc, event, handlers) => {
    await connectors.deliveries.queueHandlers(rc, event, handlers);
    rc.afterCommit?.(poke);
  });
  kernel.mail.useQueue(mailQueue(kernel.db, connectors.deliveries, dispatcher, mailSeal));
  kernel.background.register(dispatcher);
  kernel.background.register(new OutboxRetention(kernel.db, config.dispatcher.retentionDays, kernel.logger));
  eventsRoutes(router, kernel.events, kernel.schemas, kernel.rateLimits, config.rateLimits.eventsPublishPerMinute);
  connectorsRoutes(router, connectors, poke);
}
