import type { Database } from '../db/database.js';
import { newId, nowIso, UUID_PATTERN } from '../base/ids.js';
import type { RequestContext } from '../base/request-context.js';
import type { HookPayload, RecordAction } from '../hooks/hook-registry.js';
import type { Page, Pagination } from '../http/envelope.js';
import { RawJson } from '../http/raw-json.js';
import { Conflict, Forbidden, InvalidCursor, NotFound, SchemaNotFound, ValidationFailed, type ErrorDetail } from '../base/errors.js';
import { checkIfMatch } from '../base/if-match.js';
import type { EventsService } from '../events/events.service.js';
import type { HookRegistry } from '../hooks/hook-registry.js';
import { toIssues } from '../base/ajv.js';
import { isScalar, SERVER_FIELDS } from '../metadata/schema-definition.js';
import type { CompiledSchema, SchemaRegistry } from '../metadata/schema-registry.js';
import { checkQuery, encodeCursor, type RecordQuery } from './list-query.js';
import { applyMergePatch, isPlainObject } from './merge-patch.js';
import { documentJson, recordJsonOf, RecordsRepository, type DataRecord, type FieldLookup, type GroupRow, type ListedRow } from './records.repository.js';
import type { ChangeOptions, CreateInput, CreateOptions, FieldChange, FieldMatch, GroupQuery, PackRecords, ReadOptions, WriteOptions } from './pack-records.js';
import { Relations, type ExpandTree, type ReadAccess } from './relations.js';
import { RelationsRepository } from './relations.repository.js';
import { RevisionsRepository, type Revision } from './revisions.repository.js';
import type { AuditLog } from '../audit/audit-log.repository.js';
import { previewBy, previewList, previewOne } from './preview-reads.js';
import { assertMayWrite as assertPolicyAllows, assertReadableFields, fillFixedFields, readableRecord, showsWholeRecords, type RecordPolicies, type SchemaAccess } from './record-policies.js';
import { DEFAULT_LOCALES, LocalesHolder } from '../tenants/tenant-locales.js';
import { checkTranslations, chooseLocale, LOCALES_KEY, localize, localizedMembers, storedInput, takeTranslations, type LocaleChoice } from './locales.js';

export type { DataRecord } from './records.repository.js';
export type { RecordQuery } from './list-query.js';

export type { ChangeOptions, CreateInput, CreateOptions, FieldChange, GroupQuery, ReadOptions, RecordGroup, WriteOptions } from './pack-records.js';

/**
 * Who writes: null for the kernel's callers (the data API, bulk, import, MCP tools, the console), else the name
 * of the pack whose context holds the records service (PackRecords). Only the kernel mints a pack's authority
 * (pack-loader, through RecordsService.forPack), so no caller can write a sealed schema as its owner.
 */
type Writer = string | null;

const PAST_TENSE: Record<RecordAction, string> = { create: 'created', update: 'updated', delete: 'deleted' };

/**
 * The record store. `/data` and every pack call this same service, so a record written anywhere runs
 * the same validation, filter hooks (inside the transaction) and events (outbox, after commit).
 */
export class RecordsService {
  readonly repository: RecordsRepository;
  /** References between records (CONTRACT.md 12.2); also a guard of schema changes and deletions. */
  readonly relations: Relations;
  /** Every write's revision (CONTRACT.md 16.3), queued in its transaction; also used by core/data/bulk.ts. */
  readonly revisions: RevisionsRepository;
  /** The tenants' locales (CONTRACT.md 17.2), installed by the tenant-admin pack (its site config). */
  readonly locales: LocalesHolder;

  /** The custom roles' policies (CONTRACT.md 16.1); set once by the composition root. */
  policies: RecordPolicies | null = null;

  constructor(
    private readonly db: Database,
    private readonly schemas: SchemaRegistry,
    private readonly hooks: HookRegistry,
    private readonly events: EventsService,
    /** The audit log: each write's entry is queued with its revision (CONTRACT.md 16.4). */
    readonly audit: AuditLog,
    /** Whether a caller may read a schema's records: referenced records it may not read expand to null. */
    canRead?: ReadAccess,
  ) {
    this.repository = new RecordsRepository(db);
    this.revisions = new RevisionsRepository(db);
    this.locales = new LocalesHolder(db.changes);
    this.relations = new Relations(new RelationsRepository(db), schemas, canRead);
  }

  /** Set once by the composition root: the custom roles' policies (CONTRACT.md 16.1), applied to the kernel's callers. */
  usePolicies(policies: RecordPolicies): void {
    this.policies = policies;
  }

  /**
   * What the caller may do with the schema's records under its custom roles' policies (null: no policy narrows it);
   * a schema it can read nothing of is absent for it (404 schema_not_found). Packs writing with their own authority
   * (`writer`) are not narrowed: a custom role reaches no pack endpoint.
   */
  async accessTo(rc: RequestContext, schema: CompiledSchema, writer: Writer = null): Promise<SchemaAccess | null> {
    if (writer !== null || !this.policies) return null;
    const access = await this.policies.forSchema(rc, schema);
    if (access && !access.readable) throw SchemaNotFound({ ns: schema.namespace, name: schema.name });
    return access;
  }

  /** The record read for a write under `access`: a record the caller cannot read is absent (404). */
  private readableOrMissing(access: SchemaAccess | null, schema: CompiledSchema, record: DataRecord): void {
    if (access && !readableRecord(access, record)) throw NotFound(`No ${schema.namespace}.${schema.name} record "${record.id}"`);
  }

  async create(rc: RequestContext, namespace: string, name: string, input: unknown, options: CreateOptions = {}): Promise<DataRecord> {
    return this.createAs(null, rc, namespace, name, input, options);
  }

  /**
   * See PackRecords.chooseLocale: the tenant's locales are read only when a locale is asked for (without one, a
   * settled promise: no async layer on every read).
   */
  chooseLocale(rc: RequestContext, raw: { locale?: unknown; fallback?: unknown }, options: { all?: boolean } = {}): Promise<LocaleChoice | null> {
    if (raw.locale === undefined || raw.locale === '') {
      // Without a locale, only `fallback` is checked: no need of the tenant's locales.
      try {
        return Promise.resolve(chooseLocale(DEFAULT_LOCALES, raw, options));
      } catch (err) {
        return Promise.reject(err);
      }
    }
    return this.locales.localesOf(rc, rc.tenantId!).then((locales) => chooseLocale(locales, raw, options));
  }

  /** `restored`: a restore's re-creation, which continues the record's numbering (its revisions keep theirs) at `version`. */
  private async createAs(
    writer: Writer, rc: RequestContext, namespace: string, name: string, input: CreateInput, options: CreateOptions = {}, restored: { version: number } | null = null,
    asStored = restored !== null,
  ): Promise<DataRecord> {
    const version = restored?.version ?? 1;
    const id = options.id ?? newId();
    if (!UUID_PATTERN.test(id)) throw new Error(`records.create: the id "${id.slice(0, 40)}" is not a UUID`);
    return this.schemas.writing(rc, namespace, name, async (schema) => {
      this.assertMayWrite(schema, writer);
      const built = typeof input === 'function';
      const access = built ? null : await this.accessTo(rc, schema, writer);
      // Fields a create policy fixes with an equality are filled from it when the body leaves them out (16.1).
      // A field outside every create policy's fields.write is 403 before the body is validated.
      if (access) assertPolicyAllows(access, 'create', null, null, Object.keys(refuseServerFields(input) as object));
      const body = access ? fillFixedFields(access, input as Record<string, unknown>) : input;
      // A restored revision or a published draft brings its stored translations; anything else names a locale's values with `locale`.
      const stored = (document: unknown) => (asStored ? document : storedInput(schema, refuseServerFields(document), options.locale ?? null, true));
      const given = built ? null : this.validate(schema, stored(body));
      if (access && given) assertPolicyAllows(access, 'create', null, given, Object.keys(input as object));
      return this.db.transaction(rc, async (rc) => {
        const data = given ?? this.validate(schema, stored(await (input as (rc: RequestContext) => Promise<unknown>)(rc)));
        const final = await this.runHooks(rc, schema, { action: 'create', id, data, previous: null, version, writer });
        await this.relations.checkReferences(rc, schema, final, null);
        const { record, document } = await this.repository.insert(rc, schema, id, final, nowIso(), version);
        await this.keep(rc, schema, 'create', record, record.createdAt, restored !== null, document);
        await this.publish(rc, schema, 'create', record, null);
        const shown = localize(record, schema.localized, options.locale ?? null);
        return access ? shownAfterWrite(access, shown) : shown;
      });
    });
  }

  /**
   * 403 forbidden unless `writer` may write the schema's records: a sealed schema (NamespaceDeclaration.sealed)
   * only by its own pack. Every write of a record passes here (this service's and the bulk writer's).
   */
  assertMayWrite(schema: CompiledSchema, writer: Writer): void {
    const owner = this.schemas.sealedBy(schema.namespace, schema.name);
    if (owner !== null && owner !== writer) throw Forbidden(`${schema.namespace}.${schema.name} records are written only through the ${owner} endpoints`);
  }

  /**
   * The records service as the pack `pack` holds it: writes carry the pack's authority (a schema its namespace
   * declares sealed is written by it alone); the repository, the hooks and the event publishing stay here.
   * Called by the kernel alone (core/kernel/pack-loader.ts), once per pack.
   */
  forPack(pack: string | null): PackRecords {
    // A forwarder: the records are the schema's, validated on every write; RecordOf names their generated type.
    const facade: { [K in keyof PackRecords]: (...args: any[]) => Promise<unknown> } = {
      create: (rc, namespace, name, input, options) => this.createAs(pack, rc, namespace, name, input, options),
      update: (rc, namespace, name, id, patch, options = {}) => this.updateAs(pack, rc, namespace, name, id, patch, options),
      modify: (rc, namespace, name, id, change) => this.modifyAs(pack, rc, namespace, name, id, change),
      chooseLocale: (rc, raw, options) => this.chooseLocale(rc, raw, options),
      change: (rc, namespace, name, id, change, options) => this.changeAs(pack, rc, namespace, name, id, change, options),
      delete: (rc, namespace, name, id, options = {}) => this.deleteAs(pack, rc, namespace, name, id, options),
      get: (rc, namespace, name, id, options) => this.get(rc, namespace, name, id, options),
      find: (rc, namespace, name, id, read) => this.find(rc, namespace, name, id, read),
      findOne: (rc, namespace, name, match) => this.findOne(rc, namespace, name, match),
      findBy: (rc, namespace, name, match, read) => this.findBy(rc, namespace, name, match, read),
      versionBy: (rc, namespace, name, match) => this.versionBy(rc, namespace, name, match),
      findAllBy: (rc, namespace, name, field, values, read) => this.findAllBy(rc, namespace, name, field, values, read),
      list: (rc, namespace, name, query, read) => this.list(rc, namespace, name, query, read),
      group: (rc, namespace, name, query) => this.group(rc, namespace, name, query),
    };
    return Object.freeze(facade) as PackRecords;
  }

  async get(rc: RequestContext, namespace: string, name: string, id: string, options: ReadOptions = {}): Promise<DataRecord> {
    const schema = await this.schemas.resolve(rc, namespace, name);
    const access = await this.accessTo(rc, schema);
    if (access && typeof options.expand === 'string') assertReadableFields(access, options.expand.split(',').map((p) => p.trim().split('.')[0]));
    const expand = await this.relations.parseExpand(rc, schema, options.expand);
    if (rc.preview) {
      const shown = await previewOne(rc.preview, namespace, name, id, null);
      if (shown) return localize(shown as DataRecord, schema.localized, options.locale ?? null);
    }
    const stored = await this.require(rc, schema, id);
    const readable = access ? readableRecord(access, stored) : stored;
    if (!readable) throw NotFound(`No ${namespace}.${name} record "${id.slice(0, 40)}"`);
    const record = localize(readable, schema.localized, options.locale ?? null);
    return expand ? (await this.relations.expandRecords(rc, [record], expand))[0] : record;
  }

  /** A record or null, without throwing (for packs). */
  async find(rc: RequestContext, namespace: string, name: string, id: string, read: ReadOptions = {}): Promise<DataRecord | null> {
    const schema = await this.schemas.resolve(rc, namespace, name);
    const live = UUID_PATTERN.test(id) ? await this.repository.findById(rc, schema, id) : null;
    const record = rc.preview ? await previewOne(rc.preview, namespace, name, id, live) : live;
    return record && localize(record as DataRecord, schema.localized, read.locale ?? null);
  }

  /**
   * The first record whose fields equal `match` (`{ sku: 'A-1' }`), or null: a lookup by a (unique) field.
   */
  async findOne(rc: RequestContext, namespace: string, name: string, match: FieldMatch): Promise<DataRecord | null> {
    const filter = Object.entries(match).map(([field, value]) => ({ field, op: 'eq' as const, value }));
    const { items } = await this.list(rc, namespace, name, { filter, limit: 1, count: false, sort: [{ field: 'createdAt' }] });
    return (items[0] as DataRecord | undefined) ?? null;
  }

  /** The record whose fields equal `match`, on a unique index (see PackRecords.findBy). */
  async findBy(rc: RequestContext, namespace: string, name: string, match: FieldMatch, read: ReadOptions = {}): Promise<DataRecord | null> {
    const schema = await this.schemas.resolve(rc, namespace, name);
    const live = await this.repository.findBy(rc, schema, lookupOf(schema, match), match, false);
    const record = rc.preview ? await previewBy(rc.preview, namespace, name, match, live) : live;
    return record && localize(record as DataRecord, schema.localized, read.locale ?? null);
  }

  /** The records whose text field `field` is one of `values` (see PackRecords.findAllBy). */
  async findAllBy(rc: RequestContext, namespace: string, name: string, field: string, values: readonly string[], read: ReadOptions = {}): Promise<DataRecord[]> {
    const unique = [...new Set(values)];
    if (!unique.length) return [];
    // A preview shows drafts in place of live records: each value through findBy, which knows them.
    if (rc.preview) return (await Promise.all(unique.map((v) => this.findBy(rc, namespace, name, { [field]: v }, read)))).filter((r) => r !== null);
    const schema = await this.schemas.resolve(rc, namespace, name);
    lookupOf(schema, { [field]: unique[0] });
    if (field !== 'id' && schema.types.get(field) !== 'string') throw new Error(`records.findAllBy: ${namespace}.${name}.${field} is not a text field`);
    const found = await this.repository.findAllBy(rc, schema, field, unique);
    return found.map((record) => localize(record, schema.localized, read.locale ?? null));
  }

  /**
   * The id and version of the record `findBy` finds. No async layer of its own when the schema is known (a
   * storefront's 304 is this look-up and little else).
   */
  versionBy(rc: RequestContext, namespace: string, name: string, match: FieldMatch): Promise<{ id: string; version: number } | null> {
    if (rc.preview) return this.findBy(rc, namespace, name, match);
    try {
      const known = this.schemas.known(rc, namespace, name);
      if (known) return this.versionIn(rc, known, match);
    } catch (err) {
      return Promise.reject(err);
    }
    return this.schemas.resolve(rc, namespace, name).then((schema) => this.versionIn(rc, schema, match));
  }

  /** versionBy's look-up in a resolved schema (lookupOf throws for a field that is not a plain scalar). */
  private versionIn(rc: RequestContext, schema: CompiledSchema, match: FieldMatch): Promise<{ id: string; version: number } | null> {
    return this.repository.findBy(rc, schema, lookupOf(schema, match), match, true);
  }

  /** Counts, sums and maxima by field or by day (see GroupQuery). */
  async group(rc: RequestContext, namespace: string, name: string, query: GroupQuery): Promise<GroupRow[]> {
    const schema = await this.schemas.resolve(rc, namespace, name);
    const order = query.order ?? 'count';
    const sum = query.sum ?? [];
    const max = query.max ?? [];
    // The fields are checked as the list checks sort keys; the filter as the list's filter.
    const parsed = checkQuery({ filter: query.filter, sort: [query.by, ...(query.thenBy ? [query.thenBy] : []), ...sum, ...max].map((field) => ({ field })), count: false }, schema.types);
    const [kind, field] = order.split(':');
    if (!(kind === 'count' || kind === 'key' || (kind === 'sum' && sum.includes(field)) || (kind === 'max' && max.includes(field)))) {
      throw new Error(`records.group: cannot order by "${order}"`);
    }
    return this.repository.group(rc, schema, parsed, {
      by: query.by, byDay: query.byDay === true, timeZone: query.timeZone ?? null, thenBy: query.thenBy ?? null, sum, max, order, limit: query.limit ?? 1000,
    });
  }

  /**
   * An atomic read-modify-write: reads the record with its row locked for the transaction, hands it to
   * `change`, and applies the merge patch it returns (validation, hooks, event, new version) before the lock
   * is released. Concurrent modifications of one record queue behind each other instead of failing with
   * 409/412 (`stock: current.stock - 1` never loses an update). `change` may throw to refuse; returning
   * nothing (or an empty patch) writes nothing. Returns the record as stored.
   */
  async modify(
    rc: RequestContext, namespace: string, name: string, id: string,
    change: (current: DataRecord) => Record<string, unknown> | void | Promise<Record<string, unknown> | void>,
  ): Promise<DataRecord> {
    return this.modifyAs(null, rc, namespace, name, id, change);
  }

  private async modifyAs(
    writer: Writer, rc: RequestContext, namespace: string, name: string, id: string,
    change: (current: DataRecord) => Record<string, unknown> | void | Promise<Record<string, unknown> | void>,
  ): Promise<DataRecord> {
    return this.schemas.writing(rc, namespace, name, (schema) => {
      this.assertMayWrite(schema, writer);
      return this.db.transaction(rc, async (rc) => {
        const current = await this.require(rc, schema, id, true);
        const patch = await change(structuredClone(current));
        if (!patch || Object.keys(patch).length === 0) return localize(current, schema.localized, null);
        return this.write(rc, schema, current, checkPatch(patch), writer);
      });
    });
  }

  /**
   * A conditional change (stock taken only while enough is left, a status moved only from the one read): the
   * record is read with its row locked for the transaction, and when every `where` holds, `add` and `set` are
   * written as an update through the whole pipeline (migration gate, validation, hooks, the record event with
   * `previous`). Null when the record is missing or a condition does not hold: then nothing is written.
   */
  private async changeAs(writer: Writer, rc: RequestContext, namespace: string, name: string, id: string, change: FieldChange, options: ChangeOptions = {}): Promise<DataRecord | null> {
    return this.schemas.writing(rc, namespace, name, (schema) => {
      this.assertMayWrite(schema, writer);
      return this.db.transaction(rc, async (rc) => {
        const current = UUID_PATTERN.test(id) ? await this.repository.findById(rc, schema, id, true) : null;
        if (!current || !(change.where ?? []).every(([field, op, value]) => holds(current[field], op, value))) return null;
        const patch: Record<string, unknown> = { ...change.set };
        for (const [field, delta] of Object.entries(change.add ?? {})) patch[field] = Number(current[field] ?? 0) + delta;
        return this.write(rc, schema, current, checkPatch(patch), writer, options.note);
      });
    });
  }

  /** Applies a JSON merge patch, validates the merged document and writes a new version. */
  async update(rc: RequestContext, namespace: string, name: string, id: string, patch: unknown, options: WriteOptions = {}): Promise<DataRecord> {
    return this.updateAs(null, rc, namespace, name, id, patch, options);
  }

  private async updateAs(writer: Writer, rc: RequestContext, namespace: string, name: string, id: string, patch: unknown, options: WriteOptions): Promise<DataRecord> {
    return this.schemas.writing(rc, namespace, name, (schema) => {
      this.assertMayWrite(schema, writer);
      return this.updateIn(rc, schema, id, patch, options, writer);
    });
  }

  private async updateIn(rc: RequestContext, schema: CompiledSchema, id: string, patch: unknown, options: WriteOptions, writer: Writer): Promise<DataRecord> {
    const locale = options.locale ?? null;
    const checked = storedInput(schema, checkPatch(patch), locale, false) as Record<string, unknown>;
    const access = await this.accessTo(rc, schema, writer);
    return this.db.transaction(rc, async (rc) => {
      const current = await this.require(rc, schema, id);
      if (access) {
        this.readableOrMissing(access, schema, current);
        assertPolicyAllows(access, 'update', current, { ...current, ...(applyMergePatch(stripServerFields(current), checked) as Record<string, unknown>) }, Object.keys(checked));
      }
      checkIfMatch(options.ifMatch, current.version);
      const record = await this.write(rc, schema, current, checked, writer, undefined, 'merge', locale);
      return access ? shownAfterWrite(access, record) : record;
    });
  }

  /**
   * Writes a draft's document as the record's next live version through the one write path (CONTRACT.md 17.1):
   * `document` is given the live record, read with its row locked (null for a draft-only record), and returns the
   * whole new document. `baseVersion` 0 creates the record under `id` (version 1, `created`); else the live
   * record must still be at `baseVersion` (409 conflict) and `ifMatch` holds (412). Joins rc's transaction.
   */
  async publishDocument(
    rc: RequestContext, namespace: string, name: string, id: string, baseVersion: number,
    document: (live: DataRecord | null) => Record<string, unknown>, ifMatch?: string | null, locked?: { current: DataRecord | null },
  ): Promise<DataRecord> {
    return this.schemas.writing(rc, namespace, name, (schema) => {
      this.assertMayWrite(schema, null);
      return this.db.transaction(rc, async (rc) => {
        // `locked`: the live record as rc's transaction read it locked already (a release's items, read at once).
        const current = locked ? locked.current : UUID_PATTERN.test(id) ? await this.repository.findById(rc, schema, id, true) : null;
        if (baseVersion === 0 && !current) return this.createAs(null, rc, namespace, name, document(null), { id }, null, true);
        if (!current) throw Conflict(`The live ${namespace}.${name} record was deleted since the draft was made`);
        checkIfMatch(ifMatch, current.version);
        if (current.version !== baseVersion) {
          throw Conflict(`The live ${namespace}.${name} record is at version ${current.version}, the draft was made from ${baseVersion}; save it with ?rebase=true`);
        }
        return this.write(rc, schema, current, document(current), null, undefined, 'replace');
      });
    });
  }

  /**
   * Merges `patch` into `current` (read in rc's transaction), validates, runs the hooks, writes and publishes.
   * `replace`: the patch is the whole new document (a draft's), `restore`: likewise, a restored revision.
   */
  private async write(
    rc: RequestContext, schema: CompiledSchema, current: DataRecord, patch: Record<string, unknown>, writer: Writer, note?: Readonly<Record<string, unknown>>,
    how: 'merge' | 'replace' | 'restore' = 'merge', locale: LocaleChoice | null = null,
  ): Promise<DataRecord> {
    const { id } = current;
    const previous = stripServerFields(current);
    const merged = this.validate(schema, how === 'merge' ? applyMergePatch(previous, patch) : patch);
    const final = await this.runHooks(rc, schema, { action: 'update', id, data: merged, previous, version: current.version + 1, writer, note });
    await this.relations.checkReferences(rc, schema, final, previous);
    const now = nowIso();
    if (!(await this.repository.update(rc, schema, id, current.version, final, now))) {
      throw Conflict('The record was changed by another request; read it again and retry');
    }
    const record: DataRecord = { id, ...final, createdAt: current.createdAt, updatedAt: now, version: current.version + 1 };
    await this.keep(rc, schema, 'update', record, now, how === 'restore');
    await this.publish(rc, schema, 'update', record, current);
    return localize(record, schema.localized, locale);
  }

  async delete(rc: RequestContext, namespace: string, name: string, id: string, options: WriteOptions = {}): Promise<void> {
    return this.deleteAs(null, rc, namespace, name, id, options);
  }

  private async deleteAs(writer: Writer, rc: RequestContext, namespace: string, name: string, id: string, options: WriteOptions): Promise<void> {
    return this.schemas.writing(rc, namespace, name, (schema) => {
      this.assertMayWrite(schema, writer);
      return this.deleteIn(rc, schema, id, options, writer);
    });
  }

  private async deleteIn(rc: RequestContext, schema: CompiledSchema, id: string, options: WriteOptions, writer: Writer): Promise<void> {
    const access = await this.accessTo(rc, schema, writer);
    await this.db.transaction(rc, async (rc) => {
      const current = await this.require(rc, schema, id);
      if (access) {
        this.readableOrMissing(access, schema, current);
        assertPolicyAllows(access, 'delete', current, null, []);
      }
      checkIfMatch(options.ifMatch, current.version);
      await this.runHooks(rc, schema, { action: 'delete', id, data: stripServerFields(current), previous: stripServerFields(current), version: current.version, writer });
      if (!(await this.repository.delete(rc, schema, id, current.version))) {
        throw Conflict('The record was changed by another request; read it again and retry');
      }
      await this.keep(rc, schema, 'delete', current, nowIso());
      await this.publish(rc, schema, 'delete', current, current);
      await this.deleteReferences(rc, schema, id, writer);
    });
  }

  /**
   * The on-delete behaviour of the relations that point at a deleted record, in its transaction: `restrict`
   * refuses (409), `set_null` clears the referring field (or takes the id out of the array), `cascade`
   * deletes the referring records; each as a write of its own with its hooks and event.
   */
  private async deleteReferences(rc: RequestContext, schema: CompiledSchema, id: string, writer: Writer): Promise<void> {
    for (const { schema: source, relation, ids } of await this.relations.onDelete(rc, schema, id)) {
      for (const referring of ids) {
        const current = await this.repository.findById(rc, source, referring);
        // Gone already: a cascade reached it first.
        if (!current) continue;
        if (relation.onDelete === 'cascade') {
          await this.deleteIn(rc, source, referring, {}, writer);
          continue;
        }
        const held = current[relation.field];
        const cleared = relation.many && Array.isArray(held) ? held.filter((v) => v !== id) : null;
        await this.updateIn(rc, source, referring, { [relation.field]: cleared }, {}, writer);
      }
    }
  }

  /**
   * A record's revisions, newest first (CONTRACT.md 16.3), paged as lists: `limit`, `offset`, `cursor` (the
   * `nextCursor` of the page before), `count`. The record may be deleted; a record with no revision and no row
   * (or another tenant's): 404 not_found.
   */
  async revisionsOf(rc: RequestContext, namespace: string, name: string, id: string, query: RevisionQuery = {}): Promise<Page<Revision>> {
    const schema = await this.schemas.resolve(rc, namespace, name);
    const limit = query.limit ?? 50;
    const offset = query.offset ?? 0;
    const before = query.cursor ? decodeRevisionCursor(query.cursor) : null;
    const known = UUID_PATTERN.test(id);
    const rows = known ? await this.revisions.list(rc, namespace, name, id, { limit, offset, before }) : [];
    if (!rows.length && (!known || (offset === 0 && before === null && !(await this.repository.findById(rc, schema, id))))) {
      throw NotFound(`No ${namespace}.${name} record "${id.slice(0, 40)}"`);
    }
    const hasMore = rows.length > limit;
    const access = await this.accessTo(rc, schema);
    const kept = hasMore ? rows.slice(0, limit) : rows;
    // Under policies: the revisions of a record the caller may read (or could before its deletion), readable fields only.
    const items = access ? kept.flatMap((r) => {
      const data = readableRecord(access, r.data);
      return data ? [{ ...r, data }] : [];
    }) : kept;
    if (access && kept.length && !items.length) throw NotFound(`No ${namespace}.${name} record "${id.slice(0, 40)}"`);
    const total = query.count === false ? null : await this.revisions.count(rc, namespace, name, id);
    const nextCursor = hasMore ? Buffer.from(`v${items[items.length - 1].version}`).toString('base64url') : null;
    return { items, pagination: { limit, offset, total, totalEstimated: false, hasMore, nextCursor } };
  }

  /**
   * Writes a revision's data as the record's next version through the one write path (sealed rule, current
   * schema's validation, hooks, relations, revision, event): an update of the record, or, when it was deleted,
   * its re-creation under the same id with the version after its last revision. 404 when there is no such revision.
   */
  async restore(rc: RequestContext, namespace: string, name: string, id: string, version: number): Promise<{ record: DataRecord; created: boolean }> {
    return this.db.transaction(rc, (rc) => this.schemas.writing(rc, namespace, name, async (schema) => {
      this.assertMayWrite(schema, null);
      const revision = UUID_PATTERN.test(id) && Number.isSafeInteger(version) ? await this.revisions.find(rc, namespace, name, id, version) : null;
      if (!revision) throw NotFound(`No revision ${String(version).slice(0, 20)} of ${namespace}.${name} record "${id.slice(0, 40)}"`);
      const document = stripServerFields(revision.data);
      const current = await this.repository.findById(rc, schema, id, true);
      const access = await this.accessTo(rc, schema);
      if (access) {
        if (current) this.readableOrMissing(access, schema, current);
        assertPolicyAllows(access, current ? 'update' : 'create', current, { ...revision.data }, Object.keys(document));
      }
      if (current) return { record: await this.write(rc, schema, current, document, null, undefined, 'restore'), created: false };
      const next = (await this.revisions.latestVersion(rc, namespace, name, id)) + 1;
      return { record: await this.createAs(null, rc, namespace, name, document, { id }, { version: next }), created: true };
    }));
  }

  /**
   * Lists with the query language of CONTRACT.md section 3, as an object (routes read it from the query
   * string with `queryFromString`).
   */
  async list(rc: RequestContext, namespace: string, name: string, query: RecordQuery = {}, options: ReadOptions = {}): Promise<Page<Record<string, unknown>>> {
    const { parsed, rows, pagination, schema, expand, read, access } = await this.page(rc, namespace, name, query);
    const locale = options.locale ?? null;
    if (rc.preview) {
      const live = await this.items(rc, schema, rows, null, expand, read, access, locale);
      const items = await previewList(rc.preview, namespace, name, live, query, (draft) => localize(draft, schema.localized, locale));
      return { items: parsed.fields ? items.map((r) => project(r, parsed.fields!)) : items, pagination };
    }
    return { items: await this.items(rc, schema, rows, parsed.fields, expand, read, access, locale), pagination };
  }

  /**
   * `list` with the items as one JSON array text, for the data API's responses: each document goes
   * from the database into the response as JSON text, without being parsed and serialised again (on a
   * page of 50 that was a fifth of the request's time). The same items, in the same order, as `list`.
   */
  async listJson(rc: RequestContext, namespace: string, name: string, query: RecordQuery = {}, options: ReadOptions = {}): Promise<{ items: RawJson; pagination: Pagination }> {
    const { parsed, rows, pagination, schema, expand, read, access } = await this.page(rc, namespace, name, query);
    const locale = options.locale ?? null;
    let text: string;
    const localized = locale !== null && schema.localized.length > 0;
    // Rows a policy narrows to some of their fields are parsed and cut; a policy that narrows rows only (its filter is
    // in the page's SQL) leaves each row whole, so its JSON goes out as stored.
    const narrowed = access !== null && !showsWholeRecords(access);
    // In one locale, each document's text takes that locale's values without being parsed (core/data/locales.ts).
    if (localized && !narrowed && locale.locale !== '*' && !parsed.fields && !expand) {
      const members = localizedMembers(schema.localized, locale);
      text = `[${rows.map((r) => recordJsonOf(r, members(documentJson(r)))).join(',')}]`;
    } else if (parsed.fields || localized || narrowed) text = JSON.stringify(await this.items(rc, schema, rows, parsed.fields, expand, read, access, locale));
    // An expansion splices the referenced records' stored JSON into the page's, as the plain list does.
    else if (expand) text = `[${(await this.relations.expandJson(rc, rows, expand, read)).join(',')}]`;
    else text = `[${rows.map((r) => this.repository.toRecordJson(r)).join(',')}]`;
    return { items: new RawJson(text), pagination };
  }

  /** Rows as the records the API returns, projected to `fields` when given. */
  private async items(
    rc: RequestContext, schema: CompiledSchema, rows: ListedRow[], fields: string[] | null, expand: ExpandTree | null, read: ReadonlyMap<string, ListedRow[]>,
    access: SchemaAccess | null = null,
    locale: LocaleChoice | null = null,
  ): Promise<Array<Record<string, unknown>>> {
    let all: DataRecord[];
    if (locale && schema.localized.length) {
      // In the locale first; the referenced records of an expansion show their default locale's values.
      all = rows.map((r) => localize(this.repository.toRecord(r), schema.localized, locale));
      if (expand) all = await this.relations.expandRecords(rc, all, expand);
    } else {
      all = expand
        ? (await this.relations.expandJson(rc, rows, expand, read)).map((text) => JSON.parse(text) as DataRecord)
        : rows.map((r) => localize(this.repository.toRecord(r), schema.localized, null));
    }
    // The page holds only records the policies let the caller read (SQL); each shows the fields its policies allow.
    const records = access && !access.readAll ? all.flatMap((r) => readableRecord(access, r) ?? []) : all;
    return fields ? records.map((r) => project(r, fields)) : records;
  }

  private async page(rc: RequestContext, namespace: string, name: string, query: RecordQuery) {
    const schema = await this.schemas.resolve(rc, namespace, name);
    const access = await this.accessTo(rc, schema);
    const parsed = checkQuery(query, schema.types, this.relations.manyFields(schema));
    if (access) {
      assertReadableFields(access, [...parsed.filters, ...(parsed.anyOf ?? [])].map((f) => f.field));
      assertReadableFields(access, [...(query.sort ?? []).map((s) => s.field), ...(parsed.fields ?? []), ...(query.expand ?? []).map((p) => p.split('.')[0])]);
      if (access.rows) parsed.policy = access.rows;
    }
    const expand = query.expand?.length ? await this.relations.parseExpand(rc, schema, query.expand.join(',')) : null;
    // The first level of expansions is read in the page's own statement where the engine can.
    const embeds = expand ? await this.relations.embeddable(rc, expand) : [];
    const { rows, referenced, total, totalEstimated } = await this.repository.list(rc, schema, parsed, embeds);
    const hasMore = rows.length > parsed.limit;
    const page = hasMore ? rows.slice(0, parsed.limit) : rows;
    const last = page[page.length - 1];
    let nextCursor: string | null = null;
    if (hasMore && last) {
      const record = this.repository.toRecord(last);
      nextCursor = encodeCursor(parsed.sort.map((s) => (record[s.field] ?? null) as unknown));
    }
    const pagination: Pagination = { limit: parsed.limit, offset: parsed.offset, total, totalEstimated, hasMore, nextCursor };
    return { parsed, rows: page, pagination, schema, expand, read: new Map(embeds.map((e, i) => [e.field, referenced[i]])), access };
  }

  private async require(rc: RequestContext, schema: CompiledSchema, id: string, lock = false): Promise<DataRecord> {
    const record = UUID_PATTERN.test(id) ? await this.repository.findById(rc, schema, id, lock) : null;
    if (!record) throw NotFound(`No ${schema.namespace}.${schema.name} record "${id.slice(0, 40)}"`);
    return record;
  }

  /** The schema's validation of a record body (defaults applied to a copy); also used by core/data/bulk.ts. */
  validate(schema: CompiledSchema, input: unknown): Record<string, unknown> {
    const data = structuredClone(input) as Record<string, unknown>;
    // Localised values: the schema validates the default locale's document, then each locale's (CONTRACT.md 17.2).
    const translations = isPlainObject(data) ? takeTranslations(schema, data) : undefined;
    if (!schema.validate(data)) {
      throw ValidationFailed(`The record does not match ${schema.namespace}.${schema.name}`, toIssues(schema.validate.errors));
    }
    if (translations) {
      checkTranslations(schema, data, translations);
      data[LOCALES_KEY] = translations;
    }
    return data;
  }

  /** Runs the filter hooks of a write inside its transaction; also used by core/data/bulk.ts. */
  async runHooks(rc: RequestContext, schema: CompiledSchema, write: Omit<HookPayload, 'namespace' | 'schema' | 'note'> & { note?: HookPayload['note'] }) {
    const { action, data } = write;
    if (!this.hooks.has(action, schema.namespace, schema.name)) return data;
    const changed = await this.hooks.run({ ...write, namespace: schema.namespace, schema: schema.name, note: write.note ?? null }, rc);
    // A hook may add computed fields; what it returns must still match the schema.
    return action === 'delete' ? changed : this.validate(schema, changed);
  }

  /**
   * Queues a write's revision and audit entry (`record.restored` for a restore) in its transaction; `document`:
   * the record's document as stored (JSON text), reused by the revision when given.
   */
  private async keep(rc: RequestContext, schema: CompiledSchema, action: RecordAction, record: DataRecord, at: string, restored = false, document?: string): Promise<void> {
    await this.revisions.add(rc, schema, action, record, at, document);
    await this.audit.add(rc, { action: restored ? 'record.restored' : `record.${PAST_TENSE[action]}`, target: `${schema.namespace}.${schema.name}/${record.id}` }, at);
  }

  /** Queues the revisions and audit entries of many writes of one transaction (core/data/bulk.ts), as multi-row inserts. */
  async keepMany(rc: RequestContext, schema: CompiledSchema, writes: ReadonlyArray<{ action: RecordAction; record: DataRecord }>, at: string): Promise<void> {
    await this.revisions.addMany(rc, schema, writes, at);
    await this.audit.addMany(rc, writes.map((w) => ({ action: `record.${PAST_TENSE[w.action]}`, target: `${schema.namespace}.${schema.name}/${w.record.id}` })), at);
  }

  /** Queues a record's event in the write's transaction; also used by core/data/bulk.ts. */
  async publish(rc: RequestContext, schema: CompiledSchema, action: RecordAction, record: DataRecord, previous: DataRecord | null) {
    await this.events.publish(rc, recordEvent(schema, action, record, previous));
  }

  /** The events of many writes of one transaction (core/data/bulk.ts), written to the outbox together. */
  async publishMany(rc: RequestContext, schema: CompiledSchema, writes: Array<{ action: RecordAction; record: DataRecord; previous: DataRecord | null }>) {
    await this.events.publishMany(rc, writes.map((w) => recordEvent(schema, w.action, w.record, w.previous)));
  }
}

/** The look-ups each schema version was asked for, checked (lookupOf): a look-up by the same fields is checked once. */
const checkedLookups = new WeakMap<CompiledSchema, Map<string, FieldLookup>>();
const SERVER_FIELD_NAMES: ReadonlySet<string> = new Set(SERVER_FIELDS);

/** The look-up by `match`'s fields (findBy, findAllBy, versionBy), whose fields must be scalar fields of the schema. */
function lookupOf(schema: CompiledSchema, match: FieldMatch): FieldLookup {
  let checked = checkedLookups.get(schema);
  if (checked === undefined) checkedLookups.set(schema, (checked = new Map()));
  const fields = Object.keys(match);
  const key = fields.length === 1 ? fields[0] : fields.join('\u0000');
  let lookup = checked.get(key);
  if (lookup !== undefined) return lookup;
  const unknown = fields.find((f) => !isScalar(schema.types.get(f)) && !SERVER_FIELD_NAMES.has(f));
  if (!fields.length || unknown !== undefined) throw new Error(`records.findBy: ${schema.namespace}.${schema.name} has no plain scalar field "${unknown ?? ''}"`);
  checked.set(key, (lookup = { fields, key }));
  return lookup;
}

/** The paging of a record's revisions (RecordsService.revisionsOf). */
export interface RevisionQuery {
  limit?: number;
  offset?: number;
  cursor?: string;
  count?: boolean;
}

/** A revisions page's cursor: the last version of the page before. */
function decodeRevisionCursor(cursor: string): number {
  const match = /^v([1-9][0-9]{0,14})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match) throw InvalidCursor('The cursor is malformed');
  return Number(match[1]);
}

/** Whether a stored value meets a FieldChange condition (values of another type never do). */
function holds(stored: unknown, op: '=' | '>=' | '<=' | '>' | '<' | '<>', value: number | string | boolean): boolean {
  if (typeof stored !== typeof value) return op === '<>';
  const a = stored as number | string | boolean;
  switch (op) {
    case '=': return a === value;
    case '<>': return a !== value;
    case '>=': return a >= value;
    case '<=': return a <= value;
    case '>': return a > value;
    case '<': return a < value;
  }
}

/** A merge patch must be a JSON object without server-managed fields. */
function checkPatch(patch: unknown): Record<string, unknown> {
  if (!isPlainObject(patch)) throw ValidationFailed('The body must be a JSON object (a merge patch)', [{ path: '/', message: 'must be object' }]);
  refuseServerFields(patch);
  return patch;
}

function recordEvent(schema: CompiledSchema, action: RecordAction, record: DataRecord, previous: DataRecord | null) {
  return {
    name: `${schema.namespace}.${schema.name}.${PAST_TENSE[action]}`,
    payload: { namespace: schema.namespace, schema: schema.name, id: record.id, record, previous },
  };
}

export function refuseServerFields(input: unknown): unknown {
  if (!isPlainObject(input)) {
    throw ValidationFailed('The body must be a JSON object', [{ path: '/', message: 'must be object' }]);
  }
  const issues: ErrorDetail[] = SERVER_FIELDS.filter((f) => Object.hasOwn(input, f)).map((f) => ({ path: `/${f}`, message: 'is managed by the server and may not be set' }));
  if (issues.length) throw ValidationFailed('The body sets server-managed fields', issues);
  return input;
}

export function stripServerFields(record: DataRecord): Record<string, unknown> {
  const { id: _id, createdAt: _c, updatedAt: _u, version: _v, ...data } = record;
  return data;
}

/** A written record as its writer under role policies sees it: its readable fields, or the server fields alone. */
function shownAfterWrite(access: SchemaAccess, record: DataRecord): DataRecord {
  return readableRecord(access, record) ?? { id: record.id, createdAt: record.createdAt, updatedAt: record.updatedAt, version: record.version };
}

function project(record: Record<string, unknown>, fields: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = { id: record.id };
  for (const f of fields) if (f in record) out[f] = record[f];
  return out;
}
