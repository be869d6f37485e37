import { randomBytes } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { Config } from '../../config/index.js';
import { nowIso } from '../base/ids.js';
import { uncounted } from '../db/query-count.js';
import { isMissingTable } from '../db/translate-error.js';
import { FetchError } from '../fetch/fetch-error.js';
import type { FetchService } from '../fetch/fetch.service.js';
import { AppError } from '../base/errors.js';
import type { BackgroundTask } from '../base/background.js';
import { systemContext } from '../base/request-context.js';
import type { MailService } from '../mail/mail.service.js';
import type { ConnectorRow } from './connector.js';
import type { ConnectorsService } from './connectors.service.js';
import { deliveryKey } from './deliveries.repository.js';
import { KEPT_RESPONSE_BYTES, type AttemptOutcome, type Delivery } from './delivery.js';
import type { PlatformEvent } from './event.js';
import type { BusHandler } from './event-bus.js';
import type { EventsRepository } from './events.repository.js';
import type { MailSeal } from './mail-seal.js';
import { nextAttemptTime, parseRetryAfter } from './retry-schedule.js';
import { deliveryHeaders, signDelivery, webhookBody } from './webhook-signature.js';
import type { Metrics } from '../metrics/metrics.js';

/** Response bodies of receivers are read up to this size (they are only logged). */
const RESPONSE_BODY_LIMIT = 64 * 1024;
/** Longest time shutdown waits for attempts under way before aborting them. */
const SHUTDOWN_GRACE_MS = 20_000;

export interface DispatcherDeps {
  config: Config;
  connectors: ConnectorsService;
  events: EventsRepository;
  fetch: FetchService;
  mail: MailService;
  mailSeal: MailSeal;
  logger: Logger;
  metrics: Metrics;
  /** A pack's event handler by subscription key (deliveries of kind `handler`). */
  handlers: (key: string) => BusHandler | undefined;
}

interface Attempt {
  outcome: Omit<AttemptOutcome, 'status' | 'nextAttemptAt'>;
  /** Delivered (2xx or mail accepted), gone (410: disable the connector), or retry. */
  result: 'delivered' | 'gone' | 'retry';
  retryAfterMs: number | null;
}

/**
 * The outbox dispatcher: every tick (and right after a commit that queued work) it claims due deliveries,
 * sends each without waiting for the others (webhooks through core/fetch, mail through the mailer), and
 * records the attempt. A claim lasts longer than any attempt; a process that dies leaves claims that expire
 * and are taken again.
 *
 * Fairness: mail has slots of its own (an eighth of the concurrency, at least one), so webhooks never hold
 * mail up nor the reverse. Of the webhook slots a tenant takes at most a quarter, and a connector at most
 * that too, so one tenant whose receivers never answer leaves the other tenants most of the slots, and
 * their deliveries leave at once.
 */
export class Dispatcher implements BackgroundTask {
  readonly name = 'outbox-dispatcher';
  private readonly claimer = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly perKeyCount = new Map<string, number>();
  private readonly perTenantCount = new Map<string, number>();
  private mailInFlight = 0;
  private readonly mailSlots: number;
  private readonly webhookSlots: number;
  private readonly perTenant: number;
  private readonly perKey: number;
  private readonly claimTtlMs: number;
  private readonly abort = new AbortController();
  private timer: NodeJS.Timeout | null = null;
  private running = false;
  private ticking = false;
  private again = false;
  private waitingForMigrations = false;

  constructor(private readonly deps: DispatcherDeps) {
    const { concurrency, timeoutMs, claimTtlMs } = deps.config.dispatcher;
    this.mailSlots = Math.max(1, Math.floor(concurrency / 8));
    this.webhookSlots = Math.max(1, concurrency - this.mailSlots);
    this.perTenant = Math.max(1, Math.ceil(this.webhookSlots / 4));
    this.perKey = this.perTenant;
    // Longer than an attempt, so a live claim never expires under way (60 s by default, which also covers
    // the mailer's SMTP timeouts).
    this.claimTtlMs = Math.max(claimTtlMs, timeoutMs + 5_000);
    // Every attempt under way listens to the shutdown signal.
    setMaxListeners(0, this.abort.signal);
  }

  start(): void {
    if (!this.deps.config.dispatcher.enabled || this.running) return;
    this.running = true;
    this.schedule(0);
  }

  /**
   * Claims due work now (after a commit queued deliveries). The work is the dispatcher's, not the waking
   * request's: its statements are not counted in the request's X-Query-Count.
   */
  poke(): void {
    if (this.running) uncounted(() => void this.tick());
  }

  /** Stops claiming, waits for attempts under way (aborting them after 20 s), and returns. */
  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const grace = setTimeout(() => this.abort.abort(), SHUTDOWN_GRACE_MS);
    try {
      while (this.ticking || this.inFlight.size) {
        await Promise.allSettled([...this.inFlight.values()]);
        if (this.ticking) await new Promise((r) => setTimeout(r, 10));
      }
    } finally {
      clearTimeout(grace);
    }
  }

  private schedule(delay: number): void {
    if (!this.running) return;
    this.timer = setTimeout(async () => {
      await this.tick();
      this.schedule(this.deps.config.dispatcher.intervalMs);
    }, delay);
  }

  private async tick(): Promise<void> {
    if (this.ticking) {
      this.again = true;
      return;
    }
    this.ticking = true;
    try {
      do {
        this.again = false;
        await this.claimAndLaunch();
      } while (this.again && this.running);
      this.waitingForMigrations = false;
    } catch (err) {
      if (isMissingTable(err)) {
        // Before `npm run migrate`: say so once, without a stack trace, and keep polling quietly.
        if (!this.waitingForMigrations) this.deps.logger.warn('outbox dispatcher: the outbox tables do not exist yet (run npm run migrate); waiting');
        this.waitingForMigrations = true;
      } else {
        this.deps.logger.error({ err }, 'outbox dispatcher tick failed');
      }
    } finally {
      this.ticking = false;
    }
  }

  private async claimAndLaunch(): Promise<void> {
    if (!this.running) return;
    const webhooksLeft = await this.claimSlots(false);
    const mailLeft = await this.claimSlots(true);
    if (webhooksLeft || mailLeft) this.again = true;
  }

  /** Fills the free slots of mail, or of everything else; true when a full claim suggests more is due. */
  private async claimSlots(mail: boolean): Promise<boolean> {
    const room = mail ? this.mailSlots - this.mailInFlight : this.webhookSlots - (this.inFlight.size - this.mailInFlight);
    if (room <= 0) return false;
    const full = (counts: Map<string, number>, cap: number) => [...counts].filter(([, n]) => n >= cap).map(([key]) => key);
    const now = Date.now();
    const repo = this.deps.connectors.deliveries;
    // A claim takes at most one tenant's share: a backlog of one tenant then costs no claims given back
    // (with the whole room claimed, a tenant one short of its share took the room and gave all but one back).
    const limit = mail ? room : Math.min(room, this.perTenant);
    const claimed = await repo.claimDue(new Date(now).toISOString(), new Date(now + this.claimTtlMs).toISOString(), this.claimer, limit, {
      mail, excludeKeys: mail ? [] : full(this.perKeyCount, this.perKey), excludeTenants: mail ? [] : full(this.perTenantCount, this.perTenant),
    });
    if (!claimed.length) return false;

    const launch = claimed.filter((delivery) => this.occupy(delivery, true));
    await repo.release(claimed.filter((delivery) => !launch.includes(delivery)), this.claimer);
    const context = await this.loadContext(launch);
    for (const delivery of launch) this.track(delivery, this.process(delivery, context));
    return claimed.length === limit && launch.length > 0;
  }

  /** Counts a delivery into its slots; with `withinShare`, refuses one whose connector or tenant has its share. */
  private occupy(delivery: Delivery, withinShare: boolean): boolean {
    const key = deliveryKey(delivery);
    if (delivery.kind === 'mail') {
      this.mailInFlight++;
      return true;
    }
    const byKey = this.perKeyCount.get(key) ?? 0;
    const byTenant = this.perTenantCount.get(delivery.tenantId) ?? 0;
    if (withinShare && (byKey >= this.perKey || byTenant >= this.perTenant)) return false;
    this.perKeyCount.set(key, byKey + 1);
    this.perTenantCount.set(delivery.tenantId, byTenant + 1);
    return true;
  }

  private vacate(delivery: Delivery): void {
    if (delivery.kind === 'mail') {
      this.mailInFlight--;
      return;
    }
    const drop = (counts: Map<string, number>, key: string) => {
      const left = (counts.get(key) ?? 1) - 1;
      if (left > 0) counts.set(key, left);
      else counts.delete(key);
    };
    drop(this.perKeyCount, deliveryKey(delivery));
    drop(this.perTenantCount, delivery.tenantId);
  }

  /** A claim for work this process writes and sends itself right after commit (mail), or null when not running. */
  claimForNow(): { claimer: string; until: string } | null {
    return this.running ? { claimer: this.claimer, until: new Date(Date.now() + this.claimTtlMs).toISOString() } : null;
  }

  /** Sends a delivery this process claimed when writing it (see claimForNow); resolves after the attempt. */
  async sendClaimed(delivery: Delivery): Promise<void> {
    this.occupy(delivery, false);
    await this.track(delivery, this.process(delivery, await this.loadContext([delivery])));
  }

  /** Counts an attempt under way until it ends (for concurrency and shutdown). */
  private track(delivery: Delivery, attempt: Promise<void>): Promise<void> {
    const work = attempt.finally(() => {
      this.inFlight.delete(delivery.id);
      this.vacate(delivery);
      // A slot is free: more may be due (a backlog larger than one claim).
      this.poke();
    });
    this.inFlight.set(delivery.id, work);
    return work;
  }

  /** Events and connectors of the claimed webhook deliveries, loaded per tenant in two queries each. */
  private async loadContext(deliveries: Delivery[]) {
    const events = new Map<string, PlatformEvent>();
    const connectors = new Map<string, ConnectorRow>();
    const byTenant = new Map<string, Delivery[]>();
    for (const d of deliveries) {
      if (d.kind === 'mail') continue;
      byTenant.set(d.tenantId, [...(byTenant.get(d.tenantId) ?? []), d]);
    }
    for (const [tenantId, list] of byTenant) {
      const rc = systemContext(tenantId);
      for (const e of await this.deps.events.getMany(rc, [...new Set(list.map((d) => d.eventId!))])) events.set(`${tenantId}/${e.id}`, e);
      const connectorIds = [...new Set(list.filter((d) => d.connectorId).map((d) => d.connectorId!))];
      for (const c of await this.deps.connectors.connectors.getMany(rc, connectorIds)) connectors.set(`${tenantId}/${c.id}`, c);
    }
    return { events, connectors };
  }

  private async process(delivery: Delivery, context: Awaited<ReturnType<Dispatcher['loadContext']>>): Promise<void> {
    const repo = this.deps.connectors.deliveries;
    try {
      let attempt: Attempt;
      let connector: ConnectorRow | undefined;
      if (delivery.kind === 'mail') {
        attempt = await this.sendMail(delivery);
      } else if (delivery.kind === 'handler') {
        const handler = this.deps.handlers(delivery.handler!);
        const event = context.events.get(`${delivery.tenantId}/${delivery.eventId}`);
        if (!handler || !event) {
          await repo.cancelClaimed(delivery, this.claimer, !event ? 'event missing' : 'handler not loaded in this service', nowIso());
          return;
        }
        attempt = await this.runHandler(delivery, handler, event);
      } else {
        connector = context.connectors.get(`${delivery.tenantId}/${delivery.connectorId}`);
        const event = context.events.get(`${delivery.tenantId}/${delivery.eventId}`);
        if (!connector || !connector.active || !event) {
          await repo.cancelClaimed(delivery, this.claimer, !event ? 'event missing' : 'connector inactive or deleted', nowIso());
          return;
        }
        attempt = await this.sendWebhook(delivery, connector, event);
      }
      const { mails, handlers, deliveries } = this.deps.metrics;
      const counters = delivery.kind === 'mail' ? mails : delivery.kind === 'handler' ? handlers : deliveries;
      counters.attempted.inc();
      if (attempt.result !== 'delivered') counters.failed.inc();
      const outcome = this.decide(delivery, attempt);
      const rc = systemContext(delivery.tenantId);
      const recorded = await repo.recordAttempt(rc, delivery, this.claimer, outcome);
      if (!recorded) {
        this.deps.logger.warn({ deliveryId: delivery.id }, 'delivery claim was lost before the attempt was recorded');
        return;
      }
      if (attempt.result === 'gone' && connector) await this.disableConnector(delivery.tenantId, connector.id);
      if (outcome.status === 'failed') this.deps.logger.warn({ deliveryId: delivery.id, kind: delivery.kind, error: outcome.error, statusCode: outcome.statusCode }, 'delivery failed for good');
    } catch (err) {
      // The claim expires and the delivery is taken again.
      this.deps.logger.error({ err, deliveryId: delivery.id }, 'delivery attempt could not be recorded');
    }
  }

  private decide(delivery: Delivery, attempt: Attempt): AttemptOutcome {
    const { retryBaseMs, retryWindowMs } = this.deps.config.dispatcher;
    if (attempt.result === 'delivered') return { ...attempt.outcome, status: 'delivered', nextAttemptAt: attempt.outcome.at };
    if (attempt.result === 'gone') return { ...attempt.outcome, status: 'failed', nextAttemptAt: attempt.outcome.at };
    const next = nextAttemptTime({
      failedAttempts: delivery.attemptCount + 1,
      createdAt: Date.parse(delivery.createdAt),
      now: Date.now(),
      baseMs: retryBaseMs,
      windowMs: retryWindowMs,
      retryAfterMs: attempt.retryAfterMs,
    });
    if (next === null) return { ...attempt.outcome, status: 'failed', nextAttemptAt: attempt.outcome.at };
    return { ...attempt.outcome, status: 'pending', nextAttemptAt: new Date(next).toISOString() };
  }

  private async sendWebhook(delivery: Delivery, connector: ConnectorRow, event: PlatformEvent): Promise<Attempt> {
    const body = webhookBody(event);
    const signature = signDelivery(this.deps.connectors.signingSecret(connector), delivery.id, body, Math.floor(Date.now() / 1000));
    const started = Date.now();
    try {
      const res = await this.deps.fetch.fetch(connector.url, {
        method: 'POST',
        headers: { ...deliveryHeaders(event.name, delivery.id), ...signature },
        body,
        timeoutMs: this.deps.config.dispatcher.timeoutMs,
        maxBytes: RESPONSE_BODY_LIMIT,
        maxRedirects: 0,
        signal: this.abort.signal,
      });
      const ok = res.status >= 200 && res.status < 300;
      return {
        outcome: {
          statusCode: res.status, durationMs: res.durationMs, error: ok ? null : `HTTP ${res.status}${snippet(res.body)}`, at: nowIso(),
          response: { headers: res.headers, body: res.body.subarray(0, KEPT_RESPONSE_BYTES).toString('utf8') },
        },
        result: ok ? 'delivered' : res.status === 410 ? 'gone' : 'retry',
        retryAfterMs: ok ? null : parseRetryAfter(res.headers['retry-after'], Date.now()),
      };
    } catch (err) {
      const message = err instanceof FetchError || err instanceof AppError ? err.message : String((err as Error)?.message ?? err);
      return { outcome: { statusCode: null, durationMs: Date.now() - started, error: message, at: nowIso() }, result: 'retry', retryAfterMs: null };
    }
  }

  /** Runs a pack's event handler: it succeeds unless it throws (then it is retried with back-off). */
  private async runHandler(delivery: Delivery, handler: BusHandler, event: PlatformEvent): Promise<Attempt> {
    const started = Date.now();
    try {
      await handler(event);
      return { outcome: { statusCode: null, durationMs: Date.now() - started, error: null, at: nowIso() }, result: 'delivered', retryAfterMs: null };
    } catch (err) {
      this.deps.logger.warn({ err, deliveryId: delivery.id, handler: delivery.handler, event: event.name }, 'event handler failed; retried with back-off');
      return { outcome: { statusCode: null, durationMs: Date.now() - started, error: String((err as Error)?.message ?? err).slice(0, 500), at: nowIso() }, result: 'retry', retryAfterMs: null };
    }
  }

  private async sendMail(delivery: Delivery): Promise<Attempt> {
    const started = Date.now();
    try {
      await this.deps.mail.send(this.deps.mailSeal.open(delivery.message!));
      return { outcome: { statusCode: null, durationMs: Date.now() - started, error: null, at: nowIso() }, result: 'delivered', retryAfterMs: null };
    } catch (err) {
      return { outcome: { statusCode: null, durationMs: Date.now() - started, error: String((err as Error)?.message ?? err).slice(0, 500), at: nowIso() }, result: 'retry', retryAfterMs: null };
    }
  }

  /** A 410 answer: the receiver is gone for good; turn the connector off and cancel its queue. */
  private async disableConnector(tenantId: string, connectorId: string): Promise<void> {
    const rc = systemContext(tenantId);
    const at = nowIso();
    await this.deps.connectors.connectors.update(rc, connectorId, { active: false, disabled_reason: 'gone' }, at);
    await this.deps.connectors.deliveries.cancelPending(rc, connectorId, 'connector disabled: the receiver answered 410', at);
    this.deps.logger.warn({ tenantId, connectorId }, 'connector disabled: the receiver answered 410 Gone');
  }
}

function snippet(body: Buffer): string {
  const text = body.subarray(0, 200).toString('utf8').replace(/\s+/g, ' ').trim();
  return text ? `: ${text}` : '';
}
