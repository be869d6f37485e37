import type { PoolClient } from './dialects/pool-client.js';

/** Transactions per group, at most. */
const GROUP_LIMIT = 64;
/** A group this old takes no new member: the next waits for the connection behind the pool's other users. */
const GROUP_MS = 20;
/** Each member runs in this savepoint of the group's transaction. */
const SAVEPOINT = 'hp_tx';
/** Transaction groups of this process by database file (see TransactionGroups' constructor). */
const OPEN = new Map<string, number>();

/** What a group needs of its engine: statements without results, run at once on the connection, and whether a transaction is open. */
export interface GroupDriver {
  exec(connection: object, sql: string): void;
  inTransaction(connection: object): boolean;
}

/** A transaction's place in a group: its connection, and how it leaves (once). */
export interface GroupMember {
  readonly connection: object;
  /**
   * Keeps what the member wrote (RELEASE of its savepoint) and hands the connection on; resolves once the
   * group has committed, rejects when the group could not (then nothing of the member is written).
   */
  commit(): Promise<void>;
  /** Undoes what the member wrote (ROLLBACK TO its savepoint) and hands the connection on. */
  rollback(): void;
}

interface Group {
  connection: object;
  started: number;
  members: number;
  /** The COMMIT waits for the next turn of the event loop (more transactions may come). */
  idle: NodeJS.Immediate | null;
  /** Members that kept their writes and wait for the COMMIT. */
  kept: Array<{ resolve(): void; reject(err: unknown): void }>;
}

interface Waiter {
  resolve(member: GroupMember): void;
  reject(err: unknown): void;
}

/**
 * Write transactions that share one BEGIN IMMEDIATE ... COMMIT on the engine's one connection (SQLite). A
 * commit costs SQLite far more than an order's few statements (the WAL frames of every page touched, and
 * its share of the checkpoints), and transactions that follow each other on the connection touch the same
 * pages: a group writes them once. Members run one after the other, each in a savepoint: one that fails
 * is rolled back alone (ROLLBACK TO) and the others still commit; each member learns it committed only
 * once the group has. Isolation is as before: the group holds the write lock from its BEGIN IMMEDIATE on,
 * members never overlap, and the connection goes back to the pool (reads outside transactions, other work)
 * only after the COMMIT, so nothing outside a member ever sees another's uncommitted writes.
 *
 * A member that is done hands the connection to the next transaction waiting for one, while the group is
 * younger than GROUP_MS and smaller than GROUP_LIMIT; else the group commits, the connection goes back
 * to the pool, and the transactions still waiting open the next group from there.
 */
export class TransactionGroups {
  private readonly waiting: Waiter[] = [];
  private group: Group | null = null;
  /** A connection is being taken from the pool (for the next group). */
  private acquiring = false;

  /**
   * `file`: the database's, so that groups wait for more members only while they are the only ones on it in
   * this process. Another pool on the same file (tests run two services in one process) would wait for the
   * write lock synchronously, in the busy handler, blocking the very thread whose turn of the event loop was
   * to end the group: it would fail after the busy timeout. Null: no other pool can reach the database.
   */
  constructor(private readonly pool: PoolClient, private readonly driver: GroupDriver, private readonly file: string | null = null) {
    if (file !== null) OPEN.set(file, (OPEN.get(file) ?? 0) + 1);
  }

  /** The database is closed: other pools on its file may group their transactions again. */
  close(): void {
    if (this.file === null) return;
    const left = (OPEN.get(this.file) ?? 1) - 1;
    if (left > 0) OPEN.set(this.file, left);
    else OPEN.delete(this.file);
  }

  /** Whether the COMMIT may wait for the next turn of the event loop: no other pool of this process writes to the file. */
  private get mayGather(): boolean {
    return this.file === null || OPEN.get(this.file) === 1;
  }

  /** Waits for this transaction's turn on the connection, inside a group; the caller then runs its statements and leaves through the member. */
  enter(): Promise<GroupMember> {
    return new Promise<GroupMember>((resolve, reject) => {
      this.waiting.push({ resolve, reject });
      const group = this.group;
      if (group?.idle) {
        clearImmediate(group.idle);
        group.idle = null;
        this.next(group);
      } else if (!group && !this.acquiring) void this.open();
    });
  }

  private async open(): Promise<void> {
    this.acquiring = true;
    let connection: object | null = null;
    try {
      connection = await this.pool.acquireConnection();
      this.driver.exec(connection, 'BEGIN IMMEDIATE');
    } catch (err) {
      this.acquiring = false;
      if (connection) await this.pool.releaseConnection(connection);
      // The one that asked first learns why; the others try again.
      this.waiting.shift()?.reject(err);
      if (this.waiting.length) void this.open();
      return;
    }
    this.acquiring = false;
    this.group = { connection, started: Date.now(), members: 0, idle: null, kept: [] };
    this.next(this.group);
  }

  /** The connection is free within the group: the next waiting transaction's turn, or the COMMIT. */
  private next(group: Group, mayWait = true): void {
    const open = group.members < GROUP_LIMIT && Date.now() - group.started < GROUP_MS;
    if (!this.waiting.length && open && mayWait && group.members > 0 && this.mayGather) {
      group.idle = setImmediate(() => {
        group.idle = null;
        this.next(group, false);
      });
      return;
    }
    if (this.waiting.length && open) {
      const waiter = this.waiting.shift()!;
      try {
        this.driver.exec(group.connection, `SAVEPOINT ${SAVEPOINT}`);
      } catch (err) {
        waiter.reject(err);
        this.finish(group, err);
        return;
      }
      group.members += 1;
      waiter.resolve(this.member(group));
      return;
    }
    this.finish(group, null);
  }

  private member(group: Group): GroupMember {
    let left = false;
    const leave = () => {
      if (left) throw new Error('A transaction left its group twice');
      left = true;
    };
    return {
      connection: group.connection,
      commit: () => {
        leave();
        try {
          this.driver.exec(group.connection, `RELEASE ${SAVEPOINT}`);
        } catch (err) {
          // Its writes cannot be kept: undo them, as rollback would.
          this.undo(group, err);
          return Promise.reject(err);
        }
        const committed = new Promise<void>((resolve, reject) => group.kept.push({ resolve, reject }));
        this.next(group);
        return committed;
      },
      rollback: () => {
        leave();
        this.undo(group, null);
      },
    };
  }

  /** ROLLBACK TO the member's savepoint, then the next; a group whose transaction is gone fails whole. */
  private undo(group: Group, cause: unknown): void {
    try {
      this.driver.exec(group.connection, `ROLLBACK TO ${SAVEPOINT}`);
      this.driver.exec(group.connection, `RELEASE ${SAVEPOINT}`);
    } catch (err) {
      // Some errors (disk full, I/O) roll back the whole transaction: then the members before fail too.
      this.finish(group, cause ?? err);
      return;
    }
    this.next(group);
  }

  /** COMMIT (or, after `failure`, ROLLBACK), tell the members that kept their writes, and give the connection back. */
  private finish(group: Group, failure: unknown): void {
    this.group = null;
    let error = failure;
    const { connection } = group;
    if (error === null) {
      try {
        this.driver.exec(connection, 'COMMIT');
      } catch (err) {
        error = err;
      }
    }
    if (error !== null && this.driver.inTransaction(connection)) {
      try {
        this.driver.exec(connection, 'ROLLBACK');
      } catch {
        // Nothing more to undo.
      }
    }
    for (const m of group.kept) {
      if (error === null) m.resolve();
      else m.reject(error);
    }
    void this.pool.releaseConnection(connection).finally(() => {
      if (this.waiting.length && !this.group && !this.acquiring) void this.open();
    });
  }
}
