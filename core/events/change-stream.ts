import type { Logger } from 'pino';
import type { Database } from '../db/database.js';
import type { BackgroundTask } from '../base/background.js';
import type { EventBus } from './event-bus.js';

/**
 * A place in a tenant's outbox: the writing transaction's id and the event's sequence number. Streams
 * read in (txid, position) order and only below the commit horizon (Dialect.commitHorizon), so no event
 * can commit behind a position a stream has passed. On SQLite txid is 0 and position is commit order.
 */
export interface StreamPosition {
  txid: bigint;
  position: bigint;
}

const POSITION_SCALE = 10n ** 12n;

/** The position as the one decimal number clients see (`id:` of an event, Last-Event-ID). */
export function encodePosition(p: StreamPosition): string {
  return String(p.txid * POSITION_SCALE + p.position);
}

/** A Last-Event-ID back to a position; null when it is not one of ours. */
export function decodePosition(text: string): StreamPosition | null {
  if (!/^\d{1,38}$/.test(text)) return null;
  const n = BigInt(text);
  return { txid: n / POSITION_SCALE, position: n % POSITION_SCALE };
}

/** A bigint as a driver binding: a number while exact, else its decimal text. */
function bindable(n: bigint): number | string {
  return n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : String(n);
}

function after(a: StreamPosition, b: StreamPosition): boolean {
  return a.txid > b.txid || (a.txid === b.txid && a.position > b.position);
}

/** One open stream: which events it wants, where it is, and how to hand it an event. */
export interface Subscriber {
  tenantId: string;
  /** Exact event names (`shop.product.created`, ...). */
  names: ReadonlySet<string>;
  /** The last position handed to it (or skipped as not its own). */
  at: StreamPosition;
  /**
   * Hands over one event as an SSE frame. When the client is not reading fast enough the stream sets
   * `paused`: nothing more is handed to it, and its position stays, until it calls ChangeStreams.resume.
   */
  send(frame: string): void;
  paused: boolean;
  /** A comment line, to keep an idle connection open. */
  heartbeat(): void;
  /** Ends the stream (shutdown). */
  end(): void;
  /**
   * What this subscriber may see of an event's payload (a caller under role policies, CONTRACT.md 16.1): the payload
   * to send, or null to skip the event. Without it every event of `names` is sent as stored.
   */
  shape?(name: string, payload: Record<string, unknown>): Promise<Record<string, unknown> | null>;
}

interface OutboxRow {
  txid: string | number;
  position: string | number;
  id: string;
  name: string;
  product: string | null;
  payload: unknown;
  occurred_at: string;
}

/** Rows per read of a tenant's outbox. */
const READ_LIMIT = 500;
/**
 * After a local commit that a read did not yet show (PostgreSQL: an older transaction of the database still
 * running), look again this soon, then twice as late each time (10, 20, 40, ... ms, at most the poll
 * interval), RETRIES times, rather than leave the event to the next poll.
 */
const RETRY_MS = 10;
const RETRIES = 8;

/** The streams of one tenant, fed by one reader. */
interface Tail {
  tenantId: string;
  subscribers: Set<Subscriber>;
  reading: boolean;
  again: boolean;
  retries: number;
  retry: NodeJS.Timeout | null;
}

/**
 * Live change streams (CONTRACT.md 12.4). One reader per tenant with open streams reads the tenant's
 * outbox from the position of the furthest-behind stream, once for all of them, and hands each stream the
 * events it wants past its own position. A reader wakes when this process commits an event of its tenant
 * (the in-process bus) and every `pollMs` for what other processes committed. A stream whose client reads
 * too slowly is paused, which holds its position, and catches up from the outbox when its client has room
 * again: memory per stream is bounded by its socket buffer, whatever the rate of events.
 */
export class ChangeStreams implements BackgroundTask {
  readonly name = 'change-streams';
  private readonly tails = new Map<string, Tail>();
  private poll: NodeJS.Timeout | null = null;
  private beat: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    private readonly db: Database,
    bus: EventBus,
    private readonly options: { pollMs: number; heartbeatMs: number },
    private readonly logger: Logger,
  ) {
    bus.on('*', (event) => {
      const tail = event.tenantId ? this.tails.get(event.tenantId) : undefined;
      if (tail) {
        tail.retries = RETRIES;
        this.wake(tail);
      }
    });
  }

  start(): void {
    this.stopped = false;
    this.poll = setInterval(() => {
      for (const tail of this.tails.values()) this.wake(tail);
    }, this.options.pollMs);
    this.poll.unref();
    this.beat = setInterval(() => {
      for (const tail of this.tails.values()) for (const s of tail.subscribers) s.heartbeat();
    }, this.options.heartbeatMs);
    this.beat.unref();
  }

  stop(): void {
    this.stopped = true;
    if (this.poll) clearInterval(this.poll);
    if (this.beat) clearInterval(this.beat);
    for (const tail of this.tails.values()) {
      if (tail.retry) clearTimeout(tail.retry);
      for (const s of tail.subscribers) s.end();
    }
    this.tails.clear();
  }

  /** Open streams, for metrics and tests. */
  get size(): number {
    let n = 0;
    for (const tail of this.tails.values()) n += tail.subscribers.size;
    return n;
  }

  /** The tenant's latest position that every stream may start after (a stream without Last-Event-ID). */
  async head(tenantId: string): Promise<StreamPosition> {
    const rows = await this.db.sql(null).rows<{ txid: string | number; position: string | number }>(
      `SELECT txid, position FROM outbox_events WHERE tenant_id = ? AND txid < ${this.db.dialect.commitHorizon} ORDER BY txid DESC, position DESC LIMIT 1`,
      [tenantId]);
    return rows[0] ? { txid: BigInt(rows[0].txid), position: BigInt(rows[0].position) } : { txid: 0n, position: 0n };
  }

  subscribe(subscriber: Subscriber): void {
    if (this.stopped) {
      subscriber.end();
      return;
    }
    let tail = this.tails.get(subscriber.tenantId);
    if (!tail) {
      tail = { tenantId: subscriber.tenantId, subscribers: new Set(), reading: false, again: false, retries: 0, retry: null };
      this.tails.set(subscriber.tenantId, tail);
    }
    tail.subscribers.add(subscriber);
    this.wake(tail);
  }

  unsubscribe(subscriber: Subscriber): void {
    const tail = this.tails.get(subscriber.tenantId);
    if (!tail) return;
    tail.subscribers.delete(subscriber);
    if (!tail.subscribers.size) {
      if (tail.retry) clearTimeout(tail.retry);
      this.tails.delete(subscriber.tenantId);
    }
  }

  /**
   * A paused stream whose client has room again: it catches up from its own position. Resumes that come
   * close together share one read.
   */
  resume(subscriber: Subscriber): void {
    subscriber.paused = false;
    const tail = this.tails.get(subscriber.tenantId);
    if (tail && !tail.retry) {
      tail.retry = setTimeout(() => {
        tail.retry = null;
        this.wake(tail);
      }, RETRY_MS);
    }
  }

  private wake(tail: Tail): void {
    if (tail.reading) {
      tail.again = true;
      return;
    }
    tail.reading = true;
    void this.read(tail)
      .catch((err) => this.logger.warn({ err, tenantId: tail.tenantId }, 'change stream read failed; the next poll retries'))
      .finally(() => {
        tail.reading = false;
      });
  }

  private async read(tail: Tail): Promise<void> {
    let delivered = 0;
    do {
      tail.again = false;
      const active = [...tail.subscribers].filter((s) => !s.paused);
      if (!active.length) return;
      const from = active.reduce((min, s) => (after(min, s.at) ? s.at : min), active[0].at);
      const rows = await this.db.sql(null).rows<OutboxRow>(
        `SELECT txid, position, id, name, product, ${this.db.dialect.jsonText('payload')} AS payload, occurred_at FROM outbox_events `
        + `WHERE tenant_id = ? AND (txid > ? OR (txid = ? AND position > ?)) AND txid < ${this.db.dialect.commitHorizon} `
        + 'ORDER BY txid, position LIMIT ?',
        [tail.tenantId, bindable(from.txid), bindable(from.txid), bindable(from.position), READ_LIMIT]);
      for (const row of rows) {
        const at: StreamPosition = { txid: BigInt(row.txid), position: BigInt(row.position) };
        let frame: string | null = null;
        for (const s of active) {
          if (s.paused || !after(at, s.at)) continue;
          if (s.names.has(row.name)) {
            if (s.shape) {
              const shaped = await s.shape(row.name, typeof row.payload === 'string' ? JSON.parse(row.payload) : row.payload as Record<string, unknown>);
              if (shaped && !s.paused) {
                delivered += 1;
                s.send(sseFrame(tail.tenantId, { ...row, payload: JSON.stringify(shaped) }, at));
              }
              s.at = at;
              continue;
            }
            frame ??= sseFrame(tail.tenantId, row, at);
            delivered += 1;
            s.send(frame);
          }
          s.at = at;
        }
      }
      if (rows.length === READ_LIMIT) tail.again = true;
    } while (tail.again && !this.stopped);
    // Woken by a commit of this process but shown nothing: an older transaction may still hold the
    // horizon back (PostgreSQL); look again shortly rather than at the next poll.
    if (!delivered && tail.retries > 0 && !this.stopped) {
      const delay = Math.min(RETRY_MS * 2 ** (RETRIES - tail.retries), this.options.pollMs);
      tail.retries -= 1;
      tail.retry ??= setTimeout(() => {
        tail.retry = null;
        this.wake(tail);
      }, delay);
    } else if (delivered) {
      tail.retries = 0;
    }
  }
}

/** An event as an SSE frame: its name, its position and the delivery body of CONTRACT.md section 5. */
function sseFrame(tenantId: string, row: OutboxRow, at: StreamPosition): string {
  const payload = typeof row.payload === 'string' ? row.payload : JSON.stringify(row.payload);
  const body = `{"id":${JSON.stringify(row.id)},"event":${JSON.stringify(row.name)},"tenantId":${JSON.stringify(tenantId)},`
    + `"product":${JSON.stringify(row.product ?? null)},"occurredAt":${JSON.stringify(row.occurred_at)},"payload":${payload}}`;
  return `event: ${row.name}\nid: ${encodePosition(at)}\ndata: ${body}\n\n`;
}
