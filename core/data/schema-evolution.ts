import type { AuditLog } from '../audit/audit-log.repository.js';
import type { ValidateFunction } from 'ajv';
import type { Database } from '../db/database.js';
import { nowIso } from '../base/ids.js';
import type { EventsService } from '../events/events.service.js';
import {
  PreconditionRequired, SchemaIncompatible, SuperadminRequired, ValidationFailed, VersionMismatch, type ErrorDetail,
} from '../base/errors.js';
import { checkIfMatch } from '../base/if-match.js';
import type { RequestContext } from '../base/request-context.js';
import type { TotalsRepository } from './totals.repository.js';
import { toIssues } from '../base/ajv.js';
import { isWidening } from '../metadata/schema-compatibility.js';
import { SERVER_FIELDS, type RegisteredSchema, type SchemaInput } from '../metadata/schema-definition.js';
import { SchemaEvolutionRepository, type StoredDocument } from './schema-evolution.repository.js';
import { giveWay, SchemaMigrations, type Migration } from '../metadata/schema-migration.js';
import { assertIdentifier, type SchemaRegistry } from '../metadata/schema-registry.js';
import { SAFE_FIELD } from '../db/dialects/dialect.js';

/** The body of PUT /metadata/schemas/{ns}/{name}: a registration, and how to bring stored records along. */
export interface SchemaChangeInput extends SchemaInput {
  migrate?: { set?: Record<string, unknown>; unset?: string[] };
}

/** Records checked per batch while a change is verified against the stored records. */
const CHECK_BATCH = 1000;
/** At most this many offending records are named. */
const MAX_DETAILS = 20;
/**
 * Records written this long before the check began are checked again while writes are held: a write of
 * another process may have taken its time before the check began and committed after.
 */
const RECHECK_MARGIN_MS = 5_000;
/**
 * How long the other processes get to hear that the schema's gate closed (a PostgreSQL notification takes
 * a few milliseconds) before its table is locked for the switch: a write of theirs that has not heard by
 * then could commit after the switch having validated against the old version.
 */
const GATE_SETTLE_MS = 50;
/**
 * While a change runs its schema's gate is closed again this often, so that it does not open by itself
 * (SchemaGates: a gate whose end is never heard, as when its process died, opens after 5 minutes).
 */
const GATE_RENEW_MS = 60_000;

type Migrate = { set: Record<string, unknown>; unset: string[] };

export type { SchemaChangeGuard } from '../metadata/schema-definition.js';

/**
 * Schema evolution (CONTRACT.md 12.1): versioned changes under If-Match, checked against every stored
 * record unless the change only widens what is allowed, optional `migrate` of the stored records, index
 * and unique changes (PostgreSQL: built concurrently before the switch, dropped if the change fails), and
 * deletion of a schema with its records. Writes to the schema wait while it switches (SchemaGates).
 */
export class SchemaEvolution {
  private readonly records: SchemaEvolutionRepository;
  /** The batched `migrate` step and its way back. */
  readonly migrations: SchemaMigrations;

  constructor(
    private readonly db: Database,
    private readonly registry: SchemaRegistry,
    private readonly events: EventsService,
    private readonly totals: TotalsRepository,
    migrateBatch?: number,
    /** The audit log: a schema's change (schema.changed) and deletion (schema.deleted), in the switching transaction. */
    private readonly audit?: AuditLog,
  ) {
    this.records = new SchemaEvolutionRepository(db);
    this.migrations = new SchemaMigrations(db, migrateBatch);
  }

  /** PUT /metadata/schemas/{ns}/{name}: registers the next version. */
  async change(rc: RequestContext, namespace: string, name: string, ifMatch: string | undefined, input: SchemaChangeInput): Promise<RegisteredSchema> {
    const current = await this.current(rc, namespace, name, ifMatch, 'A schema change');
    for (const [field, value] of [['namespace', namespace], ['name', name]] as const) {
      if (input[field] !== undefined && input[field] !== value) {
        throw ValidationFailed(`The body's ${field} differs from the path`, [{ path: `/${field}`, message: `must be "${value}"` }]);
      }
    }
    const { migrate: rawMigrate, ...registration } = input;
    const prepared = this.registry.prepare({ ...registration, namespace, name });
    const migrate = checkMigrate(rawMigrate);
    const now = nowIso();
    const next: RegisteredSchema = {
      ...current,
      schema: prepared.input.schema,
      indexes: prepared.indexes,
      unique: prepared.unique,
      // A change without the key keeps the schema's workflow; with it, the key is the new one.
      workflow: prepared.input.workflow === undefined ? current.workflow : prepared.workflow,
      title: prepared.input.title ?? current.title,
      description: prepared.input.description ?? current.description,
      version: current.version + 1,
      updatedAt: now,
    };
    for (const g of this.registry.guards) await g.checkDefinition?.(rc, next);

    const touched = new Set([...Object.keys(migrate.set), ...migrate.unset]);
    const newUnique = next.unique.filter((u) => !current.unique.some((c) => c.join() === u.join()));
    const widening = !touched.size && isWidening(current.schema, next.schema);
    const oldIndexes = this.registry.repository.indexStatements(current);
    const newIndexes = this.registry.repository.indexStatements(next, true);
    const built: string[] = [];
    const gate = this.registry.keyOf(current);
    // One change of a schema at a time, in every process (a migration left by a dead one is rolled back first).
    const release = await this.migrations.hold(rc, current);
    let migration: Migration | null = null;
    try {
      await this.registry.gates.close(gate);
      const closedAt = Date.now();
      const renewal = setInterval(() => { this.registry.gates.close(gate).catch(() => {}); }, GATE_RENEW_MS);
      try {
        await this.registry.gates.drain(gate);
        // From before the migration's own time stamp (`now`), which the records it rewrites carry.
        let since = new Date(Math.min(Date.parse(now), Date.now()) - RECHECK_MARGIN_MS).toISOString();
        const startedAt = Date.now();
        if (!widening) await this.checkAll(rc, current, prepared.validate, migrate);
        const checkedAt = Date.now();
        for (const fields of newUnique.filter((u) => !u.some((f) => touched.has(f)))) await this.checkUnique(rc, current, fields);
        if (this.db.dialect.name === 'postgres') {
          // Built without blocking writes, outside the switching transaction (unique sets touched by the
          // migration wait for it, below).
          for (const [indexName, sql] of newIndexes) {
            if (oldIndexes.has(indexName) || touchesMigrated(next, indexName, touched, this.registry)) continue;
            built.push(indexName);
            try {
              await this.registry.repository.ddl(null, sql);
            } catch (err) {
              if (this.db.dialect.isUniqueViolation(err)) {
                const fields = next.unique.find((u) => indexName.endsWith(this.registry.repository.indexSuffix(u)));
                if (fields) await this.checkUnique(rc, current, fields);
              }
              throw err;
            }
          }
        }
        if (this.db.dialect.name === 'postgres') await sleep(GATE_SETTLE_MS - (Date.now() - closedAt));
        const checkLate = (late: StoredDocument[]) => {
          const failures = this.failures(late, prepared.validate, migrate);
          if (failures.length) throw incompatible(failures);
        };
        if (touched.size) {
          // The records are migrated in batches while writes wait; the switch then only catches up with
          // the records written late (since the check began), which the first pass here makes few.
          migration = await this.migrations.start(rc, current, next.version, { ...migrate, now });
          const caughtUpAt = new Date(Date.now() - RECHECK_MARGIN_MS).toISOString();
          await this.migrations.catchUp(rc, migration, since, checkLate);
          since = caughtUpAt;
        }
        const migratedAt = Date.now();
        await this.registry.gates.drain(gate);
        await this.db.transaction(rc, async (rc) => {
          await this.records.lockWrites(rc, current);
          const stored = await this.registry.repository.lockVersion(rc, current.id);
          if (stored !== current.version) throw VersionMismatch({ expected: String(current.version), actual: stored ?? 0 });
          if (migration) await this.migrations.catchUp(rc, migration, since, checkLate);
          else if (!widening) checkLate(await this.records.changedSince(rc, current, since));
          for (const fields of newUnique.filter((u) => u.some((f) => touched.has(f)))) await this.checkUnique(rc, current, fields);
          const extra: ErrorDetail[] = [];
          for (const g of this.registry.guards) extra.push(...((await g.checkRecords?.(rc, next, current)) ?? []));
          if (extra.length) throw incompatible(extra.slice(0, MAX_DETAILS));
          for (const sql of this.registry.repository.indexStatements(next).values()) await this.registry.repository.ddl(rc, sql);
          for (const indexName of oldIndexes.keys()) {
            if (!newIndexes.has(indexName)) await this.registry.repository.ddl(rc, `DROP INDEX IF EXISTS ${indexName}`);
          }
          await this.registry.repository.storeVersion(rc, next);
          await this.registry.changed(rc, next);
          await this.audit?.add(rc, { action: 'schema.changed', target: `schema/${next.namespace}.${next.name}` });
        });
        rc.logger?.info({ schema: gate, version: next.version, checkMs: checkedAt - startedAt, migrateMs: migration ? migratedAt - checkedAt : 0,
          switchMs: Date.now() - migratedAt }, 'schema version switched');
      } catch (err) {
        for (const indexName of built) await this.registry.repository.ddl(null, `DROP INDEX IF EXISTS ${indexName}`).catch(() => {});
        // Nothing changes: the migrated records get their previous state back before writes go on.
        if (migration) await this.migrations.rollBack(rc, migration);
        throw err;
      } finally {
        clearInterval(renewal);
        await this.registry.gates.open(gate);
      }
      // The version is stored: a failure here only leaves the side table to the next start.
      if (migration) await this.migrations.finish(rc, migration).catch((err) => rc.logger?.error({ err }, 'dropping a migration\'s side table failed'));
    } finally {
      await release();
    }
    return next;
  }

  /** DELETE /metadata/schemas/{ns}/{name}: the schema and every record of it, one event. */
  async remove(rc: RequestContext, namespace: string, name: string, ifMatch: string | undefined): Promise<void> {
    const current = await this.current(rc, namespace, name, ifMatch, 'Deleting a schema');
    for (const g of this.registry.guards) await g.checkDeletion?.(rc, current);
    const gate = this.registry.keyOf(current);
    const release = await this.migrations.hold(rc, current);
    await this.registry.gates.close(gate);
    try {
      await this.registry.gates.drain(gate);
      await this.db.transaction(rc, async (rc) => {
        await this.records.lockWrites(rc, current);
        const stored = await this.registry.repository.lockVersion(rc, current.id);
        if (stored !== current.version) throw VersionMismatch({ expected: String(current.version), actual: stored ?? 0 });
        const records = await this.totals.ofSchema(rc, current.id, current.tenantId);
        await this.registry.repository.remove(rc, current);
        await this.events.publish(rc, {
          name: 'metadata.schema.deleted',
          payload: { namespace: current.namespace, name: current.name, version: current.version, records },
        });
        await this.registry.changed(rc, current);
        await this.audit?.add(rc, { action: 'schema.deleted', target: `schema/${current.namespace}.${current.name}` });
      });
    } finally {
      await this.registry.gates.open(gate);
      await release();
    }
  }

  /** GET /metadata/schemas/{ns}/{name}/versions. */
  async versions(rc: RequestContext, namespace: string, name: string) {
    const current = await this.registry.resolveStored(rc, namespace, name);
    return this.registry.repository.listVersions(rc, current);
  }

  /** The stored schema, if the caller may change it and If-Match names its version. */
  private async current(rc: RequestContext, namespace: string, name: string, ifMatch: string | undefined, what: string): Promise<RegisteredSchema> {
    assertIdentifier('namespace', namespace);
    assertIdentifier('name', name);
    const current = await this.registry.resolveStored(rc, namespace, name);
    if (current.scope === 'platform' && !rc.principal?.isSuperadmin) throw SuperadminRequired();
    if (!ifMatch) throw PreconditionRequired(what);
    checkIfMatch(ifMatch, current.version);
    return current;
  }

  /** Every stored record, in batches, against the new version (after `migrate`); 409 naming up to 20. */
  private async checkAll(rc: RequestContext, s: RegisteredSchema, validate: ValidateFunction, migrate: Migrate): Promise<void> {
    let after: [string, string] = ['', ''];
    const failures: ErrorDetail[] = [];
    for (;;) {
      const batch = await this.records.batch(rc, s, after, CHECK_BATCH);
      failures.push(...this.failures(batch, validate, migrate));
      if (failures.length >= MAX_DETAILS || batch.length < CHECK_BATCH) break;
      const last = batch[batch.length - 1];
      after = [last.tenantId, last.id];
      await giveWay();
    }
    if (failures.length) throw incompatible(failures.slice(0, MAX_DETAILS));
  }

  private failures(docs: StoredDocument[], validate: ValidateFunction, migrate: Migrate): ErrorDetail[] {
    const found: ErrorDetail[] = [];
    for (const doc of docs) {
      const data = applyMigrate(doc.data, migrate);
      if (validate(data)) continue;
      for (const issue of toIssues(validate.errors)) {
        found.push({ id: doc.id, ...issue });
        if (found.length >= MAX_DETAILS) return found;
      }
    }
    return found;
  }

  private async checkUnique(rc: RequestContext, s: RegisteredSchema, fields: string[]): Promise<void> {
    const groups = await this.records.duplicates(rc, s, fields, MAX_DETAILS);
    if (!groups.length) return;
    const details = groups.flatMap((g) => g.ids.map((id) => ({ id, path: `/${fields[0]}`, message: `shares ${fields.join(', ')} with another record (new unique set)` })));
    throw SchemaIncompatible(`Stored records violate the new unique set ${JSON.stringify(fields)}`, details.slice(0, MAX_DETAILS));
  }
}

function sleep(ms: number): Promise<void> {
  return ms > 0 ? new Promise((resolve) => setTimeout(resolve, ms)) : Promise.resolve();
}

function incompatible(details: ErrorDetail[]) {
  return SchemaIncompatible('Stored records do not match the new version; pass "migrate" to bring them along', details);
}

function checkMigrate(raw: SchemaChangeInput['migrate']): Migrate {
  const set = raw?.set ?? {};
  const unset = raw?.unset ?? [];
  const bad = (path: string, message: string) => ValidationFailed('Invalid migrate', [{ path, message }]);
  for (const field of [...Object.keys(set), ...unset]) {
    if (!SAFE_FIELD.test(field)) throw bad('/migrate', `"${field.slice(0, 64)}" is not a field name`);
    if ((SERVER_FIELDS as readonly string[]).includes(field)) throw bad('/migrate', `"${field}" is managed by the server`);
  }
  for (const field of unset) if (Object.hasOwn(set, field)) throw bad('/migrate/unset', `"${field}" is both set and unset`);
  return { set, unset };
}

function applyMigrate(data: Record<string, unknown>, migrate: Migrate): Record<string, unknown> {
  const out = structuredClone(data);
  for (const field of migrate.unset) delete out[field];
  for (const [field, value] of Object.entries(migrate.set)) out[field] = structuredClone(value);
  return out;
}

/** Whether an index of `next` covers a field the migration rewrites (then it is built after the rewrite). */
function touchesMigrated(next: RegisteredSchema, indexName: string, touched: Set<string>, registry: SchemaRegistry): boolean {
  if (!touched.size) return false;
  return [...next.indexes, ...next.unique].some((fields) => indexName.endsWith(registry.repository.indexSuffix(fields)) && fields.some((f) => touched.has(f)));
}
