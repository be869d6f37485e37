import { EventEmitter } from 'eventemitter3';
import type pg from 'pg';
import type { RequestContext } from '../base/request-context.js';

/** Called with the key that changed, or null when anything may have changed (the feed was interrupted). */
export type ChangeListener = (key: string | null) => void;

/**
 * Tells every process of the service that shared state changed (a tenant's status, its licensed modules),
 * so that what a process keeps in memory about it stays right. `notify` goes inside the writing
 * transaction; listeners hear it at once in this process (and again after commit), and in the other
 * processes once it commits: through PostgreSQL LISTEN/NOTIFY, or, on SQLite, through the file's
 * change counter (see TenantsService.lookup). While `live` is false the cross-process channel is down,
 * and nothing may be served from memory.
 */
export interface ChangeFeed {
  readonly live: boolean;
  notify(rc: RequestContext, topic: string, key: string): Promise<void>;
  subscribe(topic: string, listener: ChangeListener): void;
  close(): Promise<void>;
}

const CHANNEL = 'hp_changes';
/** The LISTEN connection's application_name (visible in pg_stat_activity). */
export const FEED_APPLICATION = 'hp-change-feed';

class LocalFeed implements ChangeFeed {
  protected readonly emitter = new EventEmitter();
  live = true;

  async notify(rc: RequestContext, topic: string, key: string): Promise<void> {
    this.emit(topic, key);
    rc.afterCommit?.(() => this.emit(topic, key));
  }

  subscribe(topic: string, listener: ChangeListener): void {
    this.emitter.on(topic, listener);
  }

  /** Tells every listener that anything may have changed. */
  protected emitAll(): void {
    for (const topic of this.emitter.eventNames()) this.emit(String(topic), null);
  }

  protected emit(topic: string, key: string | null): void {
    this.emitter.emit(topic, key);
  }

  async close(): Promise<void> {}
}

/** In-process only: SQLite, whose other processes (rare: one process serves a file) show in data_version. */
export function localChangeFeed(): ChangeFeed {
  return new LocalFeed();
}

interface FeedLog {
  warn(obj: object, message: string): void;
}

/**
 * PostgreSQL: NOTIFY in the writing transaction (delivered when it commits), and one LISTEN connection per
 * process. Until that connection listens, and from the moment it fails until it listens again, the feed
 * is not live; each time it goes down, listeners hear that anything may have changed.
 */
class PostgresFeed extends LocalFeed {
  private client: pg.Client | null = null;
  private closed = false;
  private retry: NodeJS.Timeout | null = null;

  constructor(private readonly connectionString: string, private readonly run: (rc: RequestContext, sql: string, bindings: unknown[]) => Promise<unknown>, private readonly log?: FeedLog) {
    super();
    this.live = false;
    void this.connect();
  }

  override async notify(rc: RequestContext, topic: string, key: string): Promise<void> {
    await super.notify(rc, topic, key);
    await this.run(rc, 'SELECT pg_notify(?, ?)', [CHANNEL, `${topic}:${key}`]);
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    // pg loads here, so that a service on SQLite never loads it.
    const { default: driver } = await import('pg');
    if (this.closed) return;
    const client = new driver.Client({ connectionString: this.connectionString, application_name: FEED_APPLICATION, keepAlive: true });
    this.client = client;
    const down = (err?: unknown) => {
      if (this.client !== client) return;
      this.client = null;
      this.live = false;
      this.emitAll();
      client.removeAllListeners();
      client.on('error', () => {});
      void client.end().catch(() => {});
      if (this.closed) return;
      this.log?.warn({ err }, 'change feed connection lost; retrying in 1 s (caches are off meanwhile)');
      this.retry = setTimeout(() => void this.connect(), 1000);
      this.retry.unref();
    };
    client.on('error', down);
    client.on('end', () => down());
    client.on('notification', (message) => {
      const payload = message.payload ?? '';
      const at = payload.indexOf(':');
      if (at > 0) this.emit(payload.slice(0, at), payload.slice(at + 1));
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANNEL}`);
      if (this.client !== client) return;
      // Whatever changed while nobody listened.
      this.emitAll();
      this.live = true;
    } catch (err) {
      down(err);
    }
  }

  override async close(): Promise<void> {
    this.closed = true;
    this.live = false;
    if (this.retry) clearTimeout(this.retry);
    const client = this.client;
    this.client = null;
    if (client) await client.end().catch(() => {});
  }
}

export function postgresChangeFeed(connectionString: string, run: (rc: RequestContext, sql: string, bindings: unknown[]) => Promise<unknown>, log?: FeedLog): ChangeFeed {
  return new PostgresFeed(connectionString, run, log);
}
