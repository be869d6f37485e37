import type { Database } from '../db/database.js';
import { newId, nowIso } from '../base/ids.js';
import type { RequestContext } from '../base/request-context.js';
import { EventBus, type BusHandler } from './event-bus.js';
import { eventMatches, type PlatformEvent } from './event.js';
import { EventsRepository } from './events.repository.js';

export interface PublishInput {
  name: string;
  payload: Record<string, unknown>;
  product?: string | null;
  /**
   * `api` for events an integrator published through POST /events/publish: they reach connectors only,
   * never in-process handlers (a pack must not act on a forged `crm.deal.updated`). Default `platform`.
   */
  source?: 'api' | 'platform';
}

/**
 * Fan-out step of the outbox: given an event written in the transaction, queue its deliveries
 * (connectors) in that same transaction; `queued` learns how many once they are written (at commit).
 */
export type OutboxFanout = (rc: RequestContext, event: PlatformEvent, queued: (count: number) => void) => Promise<void>;

/** A fan-out's form for many events of one transaction (EventsService.publishMany). */
export type OutboxBatchFanout = (rc: RequestContext, events: PlatformEvent[]) => Promise<void>;

/** Queues runs of pack handlers for an event in rc's transaction. */
export type HandlerQueue = (rc: RequestContext, event: PlatformEvent, handlers: string[]) => Promise<void>;

/**
 * Raising events: `publish` writes the event to the outbox in the caller's transaction (or its own),
 * lets the fan-outs queue deliveries in it, queues one run per subscribed pack handler in it, and hands the
 * event to in-process observers after commit (platform events only: events published through the API reach
 * connectors alone).
 */
export class EventsService {
  readonly bus: EventBus;
  private readonly repository: EventsRepository;
  private readonly fanouts: Array<{ one: OutboxFanout; many?: OutboxBatchFanout }> = [];
  private readonly reserved = new Set<string>();
  private readonly subscriptions: Array<{ key: string; pattern: string; run: BusHandler }> = [];
  /** Subscription keys by event name (the patterns never change after boot). */
  private readonly subscribed = new Map<string, string[]>();
  private handlerQueue: HandlerQueue | null = null;

  constructor(private readonly db: Database, logger: import('pino').Logger) {
    this.bus = new EventBus(logger);
    this.repository = new EventsRepository(db);
  }

  /** Registers a fan-out that queues work for each event inside the publishing transaction. */
  addFanout(fanout: OutboxFanout, many?: OutboxBatchFanout): void {
    this.fanouts.push({ one: fanout, many });
  }

  /** Reserves event names a pack raises (its `events`): POST /events/publish refuses them. */
  declare(names: Iterable<string>): void {
    for (const name of names) this.reserved.add(name);
  }

  /** The event names packs declared. */
  get declared(): ReadonlySet<string> {
    return this.reserved;
  }

  /**
   * Subscribes a pack's event handler under `key` (`<pack>:<pattern>`): every matching platform event queues
   * one run of it in the outbox, in the publishing transaction, and the dispatcher runs it at least once.
   */
  subscribe(key: string, pattern: string, run: BusHandler): void {
    if (this.subscriptions.some((s) => s.key === key)) throw new Error(`Event handler "${key}" is subscribed twice`);
    this.subscriptions.push({ key, pattern, run });
    this.subscribed.clear();
  }

  /** A subscribed handler by key (the dispatcher runs it). */
  handler(key: string): BusHandler | undefined {
    return this.subscriptions.find((s) => s.key === key)?.run;
  }

  /** Where handler runs are queued (installed with the outbox). */
  useHandlerQueue(queue: HandlerQueue): void {
    this.handlerQueue = queue;
  }

  /** Queues one run per pack handler subscribed to the event, in rc's transaction. */
  private async queueHandlerRuns(rc: RequestContext, event: PlatformEvent): Promise<void> {
    const handlers = this.subscribersOf(event.name);
    if (!handlers.length) return;
    if (!this.handlerQueue) throw new Error(`No handler queue for ${handlers.join(', ')}`);
    await this.handlerQueue(rc, event, handlers);
  }

  private subscribersOf(name: string): string[] {
    let keys = this.subscribed.get(name);
    if (!keys) {
      keys = this.subscriptions.filter((s) => eventMatches(s.pattern, name)).map((s) => s.key);
      this.subscribed.set(name, keys);
    }
    return keys;
  }

  /** In-process observers after commit (at most once, not durable: pack handlers use `subscribe`). */
  on(pattern: string, handler: BusHandler): void {
    this.bus.on(pattern, handler);
  }

  /**
   * `deliveries` is how many deliveries the event queued, known once the publishing transaction has
   * committed: when publish runs inside a caller's transaction it is null.
   */
  async publish(rc: RequestContext, input: PublishInput): Promise<{ event: PlatformEvent; deliveries: number | null }> {
    const event = this.eventOf(rc, input);
    let deliveries = 0;
    let written = 0;
    await this.db.transaction(rc, async (rc) => {
      await this.repository.insert(rc, event);
      for (const { one } of this.fanouts) {
        await one(rc, event, (count) => {
          deliveries += count;
          written += 1;
        });
      }
      if (input.source !== 'api') {
        await this.queueHandlerRuns(rc, event);
        rc.afterCommit!(() => this.bus.emit(event));
      }
    });
    return { event, deliveries: written === this.fanouts.length ? deliveries : null };
  }

  /**
   * `publish` for many events of one transaction (bulk writes): the same fan-outs and in-process
   * delivery, with the events written to the outbox as multi-row statements.
   */
  async publishMany(rc: RequestContext, inputs: PublishInput[]): Promise<void> {
    // One transaction, one moment: the events share their occurredAt.
    const at = nowIso();
    const events = inputs.map((input) => this.eventOf(rc, input, at));
    await this.db.transaction(rc, async (rc) => {
      await this.repository.insertMany(rc, events);
      for (const { one, many } of this.fanouts) {
        if (many) await many(rc, events);
        else for (const event of events) await one(rc, event, () => {});
      }
      const local = events.filter((_, i) => inputs[i].source !== 'api');
      for (const event of local) await this.queueHandlerRuns(rc, event);
      if (local.length) rc.afterCommit!(() => { for (const event of local) this.bus.emit(event); });
    });
  }

  private eventOf(rc: RequestContext, input: PublishInput, occurredAt = nowIso()): PlatformEvent {
    return {
      id: newId(),
      name: input.name,
      tenantId: rc.tenantId,
      product: input.product ?? null,
      occurredAt,
      payload: input.payload,
    };
  }
}
