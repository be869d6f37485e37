import type { Database } from '../db/database.js';
import { Unavailable } from '../base/errors.js';
import type { RequestContext } from '../base/request-context.js';
import type { RegisteredSchema } from './schema-definition.js';
import {
  SchemaMigrationRepository, type Edit, type LateRecord, type MigrationRun, type RecordKey, type RestoreTarget,
} from './schema-migration.repository.js';

/** Records rewritten per batch: each batch is its own short transaction (SCHEMA_MIGRATE_BATCH). */
export const MIGRATE_BATCH = 5000;

/**
 * Lets the requests waiting for the database go first between two batches: a loop of statements would
 * otherwise keep SQLite's one pooled connection to itself (knex hands a released connection straight to
 * the next query of the same loop), holding every other request of the process for the whole migration.
 */
export function giveWay(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** A migration of one schema's records, started by `start` and ended by `finish` or `rollBack`. */
export interface Migration {
  schema: RegisteredSchema;
  undoTable: string;
  edit: Edit;
}

/**
 * The `migrate` step of a schema change (CONTRACT.md 12.1), applied in batches before the switch: each batch
 * rewrites a key range of the record table in its own transaction and keeps the previous state of those
 * records in the run's side table. If the change fails, `rollBack` restores them; if the process dies, the
 * next one to start (or the next change of the schema) rolls the run back, or drops its side table when the
 * version was stored. A run is alive while its process holds the schema (`hold`).
 */
export class SchemaMigrations {
  private readonly repo: SchemaMigrationRepository;

  constructor(private readonly db: Database, private readonly batchSize = MIGRATE_BATCH) {
    this.repo = new SchemaMigrationRepository(db);
  }

  /**
   * Marks the schema as changing here until the returned release, and settles a migration of it left by a
   * process that died. 503 when another change of it is running (here or in another process).
   */
  async hold(rc: RequestContext, s: RegisteredSchema): Promise<() => Promise<void>> {
    const release = await this.repo.hold(s.id);
    if (!release) throw Unavailable('Another change of this schema is running; retry shortly', [], { 'Retry-After': '5' });
    try {
      for (const run of await this.repo.runs(rc, s.id)) await this.settle(rc, run);
    } catch (err) {
      await release();
      throw err;
    }
    return release;
  }

  /** Registers the run, then migrates every record of the schema, one batch per transaction. */
  async start(rc: RequestContext, s: RegisteredSchema, toVersion: number, edit: Edit): Promise<Migration> {
    const undoTable = await this.db.transaction(rc, (rc) => this.repo.begin(rc, s, toVersion, edit.now));
    let after: RecordKey = ['', ''];
    for (;;) {
      const upTo = await this.db.transaction(rc, async (rc) => {
        const upTo = await this.repo.boundary(rc, s, after, this.batchSize);
        await this.repo.migrateRange(rc, s, undoTable, after, upTo, edit);
        return upTo;
      });
      if (!upTo) break;
      after = upTo;
      await giveWay();
    }
    return { schema: s, undoTable, edit };
  }

  /**
   * Records written since `since` that the batches did not see as they are now, after `check` (which throws
   * to refuse the change) accepted them migrated; those not yet migrated are migrated. Runs in rc's
   * transaction (the switch) or its own.
   */
  async catchUp(rc: RequestContext, m: Migration, since: string, check: (docs: LateRecord[]) => void): Promise<void> {
    await this.db.transaction(rc, async (rc) => {
      const late = await this.repo.late(rc, m.schema, m.undoTable, since);
      check(late);
      const byTenant = new Map<string, string[]>();
      for (const r of late.filter((r) => !r.migrated)) byTenant.set(r.tenantId, [...(byTenant.get(r.tenantId) ?? []), r.id]);
      for (const [tenantId, ids] of byTenant) await this.repo.migrateIds(rc, m.schema, m.undoTable, tenantId, ids, m.edit);
    });
  }

  /** After the switch: the side table is dropped. */
  async finish(rc: RequestContext, m: Migration): Promise<void> {
    await this.db.transaction(rc, (rc) => this.repo.finish(rc, { tenantId: m.schema.tenantId, schemaId: m.schema.id, undoTable: m.undoTable }));
  }

  /** The change failed: every migrated record gets its previous state back, then the side table is dropped. */
  async rollBack(rc: RequestContext, m: Migration): Promise<void> {
    await this.restore(rc, { tableName: m.schema.tableName, namespace: m.schema.namespace, name: m.schema.name }, m.undoTable);
    await this.finish(rc, m);
  }

  /** At startup: every run whose process died is rolled back (or its side table dropped when its version was stored). */
  async recover(rc: RequestContext): Promise<number> {
    let settled = 0;
    for (const run of await this.repo.runs(rc)) {
      const release = await this.repo.hold(run.schemaId);
      if (!release) continue;
      try {
        await this.settle(rc, run);
        settled++;
      } finally {
        await release();
      }
    }
    return settled;
  }

  private async settle(rc: RequestContext, run: MigrationRun): Promise<void> {
    if (run.tableName && run.version !== null && run.version < run.toVersion) {
      rc.logger?.warn({ schemaId: run.schemaId, toVersion: run.toVersion }, 'rolling back an unfinished schema migration');
      await this.restore(rc, { tableName: run.tableName, namespace: run.namespace, name: run.name }, run.undoTable);
    }
    await this.db.transaction(rc, (rc) => this.repo.finish(rc, run));
  }

  private async restore(rc: RequestContext, target: RestoreTarget, undoTable: string): Promise<void> {
    let after: RecordKey | null = ['', ''];
    while (after) {
      const from: RecordKey = after;
      after = await this.db.transaction(rc, (rc) => this.repo.restoreBatch(rc, target, undoTable, from, this.batchSize));
      await giveWay();
    }
  }
}
