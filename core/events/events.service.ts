import type { Database } from '../db/database.js';
import { newId, nowIso } from '../db/ids.js';
import type { RequestContext } from '../kernel/request-context.js';
import { EventBus, type BusHandler } from './event-bus.js';
import type { PlatformEvent } from './event.js';
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

/**
 * Raising events: `publish` writes the event to the outbox in the caller's transaction (or its own),
 * lets the fan-outs queue deliveries in it, and hands the event to in-process subscribers after commit
 * (platform events only: events published through the API reach connectors alone).
 */
export class EventsService {
  readonly bus: EventBus;
  private readonly repository: EventsRepository;
  private readonly fanouts: Array<{ one: OutboxFanout; many?: OutboxBatchFanout }> = [];
  private readonly reserved = new Set<string>();

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
      if (input.source !== 'api') rc.afterCommit!(() => this.bus.emit(event));
    });
    return { event, deliveries: written === this.fanouts.length ? deliveries : null };
  }

  /**
   * `publish` for many events of one transaction (bulk writes): the same fan-outs and in-process
   * delivery, with the events written to the outbox as multi-row statements.
   */
  async publishMany(rc: RequestContext, inputs: PublishInput[]): Promise<void> {
    const events = inputs.map((input) => this.eventOf(rc, input));
    await this.db.transaction(rc, async (rc) => {
      await this.repository.insertMany(rc, events);
      for (const { one, many } of this.fanouts) {
        if (many) await many(rc, events);
        else for (const event of events) await one(rc, event, () => {});
      }
      const local = events.filter((_, i) => inputs[i].source !== 'api');
      if (local.length) rc.afterCommit!(() => { for (const event of local) this.bus.emit(event); });
    });
  }

  private eventOf(rc: RequestContext, input: PublishInput): PlatformEvent {
    return {
      id: newId(),
      name: input.name,
      tenantId: rc.tenantId,
      product: input.product ?? null,
      occurredAt: nowIso(),
      payload: input.payload,
    };
  }
}
