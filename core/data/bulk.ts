import { localize } from './locales.js';
import type { Database } from '../db/database.js';
import { newId, nowIso } from '../base/ids.js';
import { AppError, Conflict, Forbidden, ValidationFailed, type ErrorDetail } from '../base/errors.js';
import { assertMayWrite as assertPolicyAllows, fillFixedFields, readableRecord, type SchemaAccess } from './record-policies.js';
import type { RequestContext } from '../base/request-context.js';
import type { CompiledSchema, SchemaRegistry } from '../metadata/schema-registry.js';
import { applyMergePatch, isPlainObject } from './merge-patch.js';
import { refuseServerFields, stripServerFields, type DataRecord, type RecordsService } from './records.service.js';
import type { RecordRow } from './records.repository.js';
import { relationsOf } from './relations.js';
import type { BulkResult, PackBulk } from './pack-records.js';

/** Items per bulk request (CONTRACT.md 12.3), and per write batch of an import. */
export const BULK_LIMIT = 1000;
/** Errors listed in one answer, at most. */
export const MAX_LISTED_ERRORS = 100;
/** Keys per lookup statement of an upsert (well under both engines' parameter limits). */
const LOOKUP_CHUNK = 500;

export type { BulkResult } from './pack-records.js';

/** An item that failed, by its index among the items given; `path` within the item. */
export interface ItemError {
  index: number;
  path: string;
  message: string;
  /** `forbidden` when the caller's role policies refuse the item (CONTRACT.md 16.1); else a validation failure. */
  code?: string;
}

/** Thrown by `write` when items fail: every failing item's errors, nothing written. */
export class ItemsFailed extends Error {
  constructor(readonly errors: ItemError[]) {
    super('Some items failed');
  }
}

/**
 * Writes many records of one schema at once, all or none: the same validation, filter hooks and events
 * as single writes (RecordsService), in one transaction, with the rows inserted as multi-row statements.
 * With `upsert` (a field that a declared unique set consists of), an item whose value is stored already
 * updates that record as a JSON merge patch instead.
 */
export class BulkWriter {
  constructor(private readonly db: Database, private readonly records: RecordsService, private readonly schemas: SchemaRegistry) {}

  /**
   * POST /data/{ns}/{schema}/bulk, and the packs' way to write many records (kernel.bulk): up to
   * BULK_LIMIT items of ns.name checked in one pass and written all or none, through the schema's gate
   * like single writes (while it migrates they wait, then validate against the new version; 503 after
   * SCHEMA_WRITE_WAIT_MS). Failing items: 400 validation_failed naming `/items/<i>/<path>`.
   */
  async writeAll(rc: RequestContext, namespace: string, name: string, items: unknown[], options: { upsert?: string | null } = {}): Promise<BulkResult> {
    return this.writeAllAs(null, rc, namespace, name, items, options);
  }

  /** The bulk writer as a pack's context holds it: its writes carry the pack's authority (sealed schemas, RecordsService.forPack). */
  forPack(pack: string | null): PackBulk {
    return Object.freeze<PackBulk>({ writeAll: (rc, namespace, name, items, options) => this.writeAllAs(pack, rc, namespace, name, items, options) });
  }

  private async writeAllAs(writer: string | null, rc: RequestContext, namespace: string, name: string, items: unknown[], options: { upsert?: string | null } = {}): Promise<BulkResult> {
    if (items.length > BULK_LIMIT) throw ValidationFailed(`At most ${BULK_LIMIT} items at once`, [{ path: '/items', message: `must NOT have more than ${BULK_LIMIT} items` }]);
    if (!items.length) return { items: [], created: 0, updated: 0 };
    return this.schemas.writing(rc, namespace, name, async (schema) => {
      this.records.assertMayWrite(schema, writer);
      const upsert = this.upsertField(schema, options.upsert);
      const failed: ItemError[] = [];
      const checked: Array<Record<string, unknown>> = [];
      items = await this.filledForCreate(rc, schema, items, upsert, writer);
      items.forEach((item, index) => {
        const outcome = this.check(schema, item, upsert);
        if ('errors' in outcome) failed.push(...outcome.errors.map((e) => ({ index, ...e })));
        else checked.push(outcome.data);
      });
      if (failed.length) throw itemsFailed(failed, items.length);
      try {
        return await this.write(rc, schema, checked, upsert, writer);
      } catch (err) {
        if (err instanceof ItemsFailed) throw itemsFailed(err.errors, items.length);
        throw err;
      }
    });
  }

  /**
   * The items with the fields their role's policy fixes with an equality filled, as a single create does (CONTRACT.md
   * 16.1), before they are checked as creates. Upserts are filled item by item once it is known which create (prepare).
   */
  async filledForCreate<T>(rc: RequestContext, schema: CompiledSchema, items: T[], upsert: string | null, writer: string | null = null): Promise<T[]> {
    const access = upsert ? null : await this.records.accessTo(rc, schema, writer);
    return access ? items.map((item) => (isPlainObject(item) ? fillFixedFields(access, item) as T : item)) : items;
  }

  /**
   * The field an upsert matches on: it must be the single field of a declared unique set, so that it
   * names at most one record.
   */
  upsertField(schema: CompiledSchema, field: string | null | undefined): string | null {
    if (field === undefined || field === null || field === '') return null;
    if (!schema.unique.some((set) => set.length === 1 && set[0] === field)) {
      throw ValidationFailed(`upsert needs a field with a unique constraint of its own in ${schema.namespace}.${schema.name}`, [
        { path: 'query/upsert', message: `"${field.slice(0, 64)}" is not declared unique on its own` },
      ]);
    }
    return field;
  }

  /**
   * Checks one item as a create would (server-managed fields refused, the schema's validation) and
   * returns it with defaults applied; in upsert mode an item may be a partial patch of a stored record,
   * so only the key and server-managed fields are checked here and the rest once it is merged.
   */
  check(schema: CompiledSchema, item: unknown, upsert: string | null): { data: Record<string, unknown> } | { errors: ErrorDetail[] } {
    try {
      refuseServerFields(item);
      if (upsert) {
        const key = (item as Record<string, unknown>)[upsert];
        if (key === undefined || key === null || isPlainObject(key) || Array.isArray(key)) {
          return { errors: [{ path: `/${upsert}`, message: 'is required to upsert' }] };
        }
        return { data: item as Record<string, unknown> };
      }
      return { data: this.records.validate(schema, item) };
    } catch (err) {
      if (err instanceof AppError && err.code === 'validation_failed') return { errors: err.details.length ? err.details : [{ path: '/', message: err.message }] };
      throw err;
    }
  }

  /**
   * Writes checked items in one transaction (joins rc's transaction when there is one). Throws
   * ItemsFailed when a hook or a merged document refuses an item; Conflict (409) when a unique value
   * is taken.
   */
  async write(rc: RequestContext, schema: CompiledSchema, items: Array<Record<string, unknown>>, upsert: string | null, writer: string | null = null): Promise<BulkResult> {
    this.records.assertMayWrite(schema, writer);
    if (upsert) {
      const seen = new Map<string, number>();
      const errors: ItemError[] = [];
      items.forEach((item, index) => {
        const key = keyOf(item[upsert]);
        const first = seen.get(key);
        if (first !== undefined) errors.push({ index, path: `/${upsert}`, message: `repeats the value of item ${first}` });
        else seen.set(key, index);
      });
      if (errors.length) throw new ItemsFailed(errors);
    }
    const access = await this.records.accessTo(rc, schema, writer);
    return this.db.transaction(rc, async (rc) => {
      const stored = upsert ? await this.findByKeys(rc, schema, upsert, items.map((i) => i[upsert])) : new Map<string, DataRecord>();
      const now = nowIso();
      const errors: ItemError[] = [];
      const prepared: Array<{ index: number; record: DataRecord; before: Record<string, unknown> | null; previous: DataRecord | null }> = [];
      for (const [index, item] of items.entries()) {
        const previous = upsert ? stored.get(keyOf(item[upsert])) ?? null : null;
        try {
          prepared.push({ index, ...(await this.prepare(rc, schema, item, previous, upsert !== null, now, writer, access)), previous });
        } catch (err) {
          if (!(err instanceof AppError) || (err.code !== 'validation_failed' && err.code !== 'forbidden' && err.code !== 'not_found')) throw err;
          const refused = err.code !== 'validation_failed' ? { code: 'forbidden' as const } : {};
          const details = err.details.length ? err.details : [{ path: '/', message: err.message }];
          errors.push(...details.map((d) => ({ index, ...d, ...refused })));
        }
      }
      // The references of every item in one query per relation, not one per item (nothing to do without relations).
      if (relationsOf(schema.schema).length) {
        const dangling = await this.records.relations.referenceIssues(rc, schema, prepared.map((p) => ({ data: stripServerFields(p.record), previous: p.before })));
        dangling.forEach((issues, n) => errors.push(...issues.map((d) => ({ index: prepared[n].index, ...d }))));
      }
      if (errors.length) throw new ItemsFailed(errors.sort((a, b) => a.index - b.index));
      const created = prepared.filter((w) => !w.previous).map((w) => w.record);
      for (const { record, previous } of prepared) {
        if (!previous) continue;
        if (!(await this.records.repository.update(rc, schema, record.id, previous.version, stripServerFields(record), now))) {
          throw Conflict('A record was changed by another request meanwhile; send the items again');
        }
      }
      await this.records.repository.insertMany(rc, schema, created);
      await this.records.keepMany(rc, schema, prepared.map(({ record, previous }) => ({ action: previous ? 'update' as const : 'create' as const, record })), now);
      await this.records.publishMany(rc, schema, prepared.map(({ record, previous }) => ({ action: previous ? 'update' as const : 'create' as const, record, previous })));
      // Answers as reads: without the other locales' values (core/data/locales.ts).
      return { items: prepared.map((w) => localize(w.record, schema.localized, null)), created: created.length, updated: prepared.length - created.length };
    });
  }

  /** The record an item becomes: validated (after merging into the stored one, for an update) and through the hooks; references are checked by the caller. */
  private async prepare(
    rc: RequestContext, schema: CompiledSchema, item: Record<string, unknown>, previous: DataRecord | null, unvalidated: boolean, now: string, writer: string | null,
    access: SchemaAccess | null,
  ): Promise<{ record: DataRecord; before: Record<string, unknown> | null }> {
    if (previous) {
      const before = stripServerFields(previous);
      const merged = this.records.validate(schema, applyMergePatch(before, item));
      // Under role policies (CONTRACT.md 16.1): the stored record and the merged one, as a single update checks them.
      if (access) {
        if (!readableRecord(access, previous)) throw Forbidden('Your role may not change this record', [{ path: '/', message: 'is not a record your role may change' }]);
        assertPolicyAllows(access, 'update', previous, { ...previous, ...merged }, Object.keys(item));
      }
      const final = await this.records.runHooks(rc, schema, { action: 'update', id: previous.id, data: merged, previous: before, version: previous.version + 1, writer });
      return { record: { id: previous.id, ...final, createdAt: previous.createdAt, updatedAt: now, version: previous.version + 1 }, before };
    }
    const id = newId();
    const filled = access ? fillFixedFields(access, item) : item;
    const data = unvalidated || filled !== item ? this.records.validate(schema, filled) : item;
    if (access) assertPolicyAllows(access, 'create', null, data, Object.keys(item));
    const final = await this.records.runHooks(rc, schema, { action: 'create', id, data, previous: null, version: 1, writer });
    return { record: { id, ...final, createdAt: now, updatedAt: now, version: 1 }, before: null };
  }

  /** Stored records whose `field` holds one of `keys`, by key. */
  private async findByKeys(rc: RequestContext, schema: CompiledSchema, field: string, keys: unknown[]): Promise<Map<string, DataRecord>> {
    const found = new Map<string, DataRecord>();
    const type = schema.types.get(field);
    const expression = this.db.dialect.jsonField(field, type === 'number' || type === 'integer' || type === 'boolean' ? type : 'string');
    for (let i = 0; i < keys.length; i += LOOKUP_CHUNK) {
      const chunk = keys.slice(i, i + LOOKUP_CHUNK);
      const rows = await this.db.sql(rc).rows<Omit<RecordRow, 'tenant_id'>>(
        `SELECT id, data, version, created_at, updated_at FROM ${schema.tableName} WHERE tenant_id = ${this.db.dialect.fixedParameter} AND ${expression} IN (${chunk.map(() => '?').join(', ')})`,
        [rc.tenantId!, ...chunk]);
      for (const row of rows) {
        const record = this.records.repository.toRecord(row);
        found.set(keyOf(record[field]), record);
      }
    }
    return found;
  }
}

function keyOf(value: unknown): string {
  return typeof value === 'string' ? `s:${value}` : `v:${JSON.stringify(value)}`;
}

function itemsFailed(errors: ItemError[], total: number) {
  const items = new Set(errors.map((e) => e.index)).size;
  const refused = errors.filter((e) => e.code === 'forbidden');
  // One item the policies refuse refuses the whole call: 403 naming it (CONTRACT.md 16.1).
  if (refused.length) return Forbidden(`${new Set(refused.map((e) => e.index)).size} of ${total} items are not allowed to your role; nothing was written`, itemDetails(refused));
  return ValidationFailed(`${items} of ${total} items failed; nothing was written`, itemDetails(errors));
}

/** Item errors as the contract's error details: `/items/<i>/<path>`. */
export function itemDetails(errors: ItemError[]): ErrorDetail[] {
  return errors.slice(0, MAX_LISTED_ERRORS).map((e) => ({ path: `/items/${e.index}${e.path === '/' ? '' : e.path}`, message: e.message }));
}
