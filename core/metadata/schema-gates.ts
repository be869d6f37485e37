import type { ChangeFeed } from '../db/change-feed.js';
import { systemContext } from '../base/request-context.js';
import { Unavailable } from '../base/errors.js';

const TOPIC = 'schema-gate';
/** A write waits this long for a migration of its schema, then answers 503 unavailable (SCHEMA_WRITE_WAIT_MS). */
export const WRITE_WAIT_MS = 30_000;
/** A gate whose end was never heard (its process died) opens by itself after this long. */
const GATE_EXPIRES_MS = 5 * 60_000;

interface Gate {
  opened: Promise<void>;
  open(): void;
  timer: NodeJS.Timeout;
}

/**
 * Writes to a schema wait while it migrates (CONTRACT.md 12.1), in every process: the migrating process
 * closes the schema's gate through the change feed (PostgreSQL NOTIFY; in-process on SQLite, where one
 * process serves a file) and opens it when the new version is current or the change failed. A write passes
 * the gate before it validates (`enter`), and the migration waits for the writes of this process that
 * passed before the gate closed (`drain`), so that none commits after the switch having validated
 * against the old version.
 */
export class SchemaGates {
  private readonly gates = new Map<string, Gate>();
  private readonly inFlight = new Map<string, number>();

  /** `waitMs`: how long a write waits at a closed gate (and a migration for the writes in flight). */
  constructor(private readonly feed: ChangeFeed, private readonly waitMs = WRITE_WAIT_MS) {
    feed.subscribe(TOPIC, (message) => {
      if (message === null) return;
      const at = message.indexOf(':');
      const [action, key] = [message.slice(0, at), message.slice(at + 1)];
      if (action === 'close') this.closeLocal(key);
      else this.openLocal(key);
    });
  }

  /** Closes the schema's gate in every process. */
  async close(key: string): Promise<void> {
    await this.feed.notify(systemContext(null), TOPIC, `close:${key}`);
  }

  async open(key: string): Promise<void> {
    await this.feed.notify(systemContext(null), TOPIC, `open:${key}`);
  }

  /**
   * Waits for the schema's gate (at most waitMs, then 503 unavailable), then counts the caller as
   * writing until `leave`. Returns whether it waited (the schema may have changed meanwhile).
   */
  async enter(key: string): Promise<boolean> {
    let waited = false;
    const deadline = Date.now() + this.waitMs;
    for (let gate = this.gates.get(key); gate; gate = this.gates.get(key)) {
      waited = true;
      const left = deadline - Date.now();
      let timer: NodeJS.Timeout | undefined;
      const timedOut = await Promise.race([
        gate.opened.then(() => false),
        new Promise<boolean>((resolve) => { timer = setTimeout(() => resolve(true), Math.max(0, left)); }),
      ]);
      clearTimeout(timer);
      if (timedOut) throw Unavailable('The schema is being migrated; retry the write shortly', [], { 'Retry-After': '5' });
    }
    this.inFlight.set(key, (this.inFlight.get(key) ?? 0) + 1);
    return waited;
  }

  leave(key: string): void {
    const n = (this.inFlight.get(key) ?? 1) - 1;
    if (n <= 0) this.inFlight.delete(key);
    else this.inFlight.set(key, n);
  }

  /** Whether this process holds writes to the schema at its gate now. */
  closed(key: string): boolean {
    return this.gates.has(key);
  }

  /** Resolves once no write of this process that passed the gate is still running (at most waitMs). */
  async drain(key: string): Promise<void> {
    const deadline = Date.now() + this.waitMs;
    while ((this.inFlight.get(key) ?? 0) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 2));
  }

  private closeLocal(key: string): void {
    const closed = this.gates.get(key);
    if (closed) {
      // Closed again by a migration that takes long: it is alive, the gate's time starts again.
      closed.timer.refresh();
      return;
    }
    let open!: () => void;
    const opened = new Promise<void>((resolve) => { open = resolve; });
    const timer = setTimeout(() => this.openLocal(key), GATE_EXPIRES_MS);
    timer.unref();
    this.gates.set(key, { opened, open, timer });
  }

  private openLocal(key: string): void {
    const gate = this.gates.get(key);
    if (!gate) return;
    this.gates.delete(key);
    clearTimeout(gate.timer);
    gate.open();
  }
}
