import type { RequestContext } from '../base/request-context.js';
import type { Page } from '../http/envelope.js';
import type { RecordQuery } from './list-query.js';
import type { DataRecord, FieldValues, GroupRow } from './records.repository.js';
import type { LocaleChoice } from './locales.js';

export interface WriteOptions {
  /** The If-Match header value: `"3"`, `W/"3"` or `3`. */
  ifMatch?: string | null;
  /** The locale whose values of the localised fields the write sets (CONTRACT.md 17.2); null: the default's. */
  locale?: LocaleChoice | null;
}

/** Options of a create. */
export interface CreateOptions {
  /** The id the record gets (a UUID the caller made, e.g. to name it in rows written beside it); default a new UUIDv7. */
  id?: string;
  /** The locale of the localised values given (CONTRACT.md 17.2); null: the default's. */
  locale?: LocaleChoice | null;
}

/**
 * The body of a create, or a function that makes it inside the write's transaction (after the schema's
 * migration gate, before validation): to draw a number, take stock or write rows beside the record all or none.
 */
export type CreateInput = unknown | ((rc: RequestContext) => Promise<Record<string, unknown>>);

/**
 * A conditional change of top-level fields (stock taken only while enough is left, a status moved only from the
 * one read): `add` integers, `set` values, applied only when every `where` holds of the record as stored.
 */
export interface FieldChange {
  /** Integer fields to add to. */
  add?: Record<string, number>;
  /** Fields to set. */
  set?: Record<string, string | number | boolean | null>;
  /** Conditions on the stored fields, all of which must hold. */
  where?: Array<[field: string, op: '=' | '>=' | '<=' | '>' | '<' | '<>', value: number | string | boolean]>;
}

/** What a writing pack hands its own filter hooks with a change (HookPayload.note), e.g. why stock moved. */
export interface ChangeOptions {
  note?: Readonly<Record<string, unknown>>;
}


/**
 * A grouped read (PackRecords.group): the records matching `filter` (the list's filter language), grouped by the
 * value of `by` (or, with `byDay`, the day of that ISO date-time, in `timeZone` when given, else UTC) and then,
 * with `thenBy`, by the value of that field too, each group with its count and the sums and maxima asked for;
 * ordered by `order` (`count`, `sum:<field>`, `max:<field>` descending, or `key`), at most `limit`.
 */
export interface GroupQuery {
  by: string;
  byDay?: boolean;
  /** An IANA time zone name (with `byDay`); the caller checks that the Intl database knows it. */
  timeZone?: string;
  thenBy?: string;
  filter?: RecordQuery['filter'];
  sum?: string[];
  max?: string[];
  order?: string;
  limit?: number;
}


export interface ReadOptions {
  /** `expand=a,b.c` (CONTRACT.md 12.2): referenced records in place of their ids. */
  expand?: unknown;
  /** The locale of the localised fields read (records.chooseLocale; CONTRACT.md 17.2); null: the default's. */
  locale?: LocaleChoice | null;
}

export type RecordGroup = GroupRow;

export interface BulkResult {
  /** The written records, in the order of the items. */
  items: DataRecord[];
  created: number;
  updated: number;
}

/**
 * Record types by `ns.schema`, declared by each pack's generated files (npm run pack-types, from its JSON Schema
 * files) by declaration merging, so that reads and writes of `pack.records` are typed without a cast.
 */

// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled by declaration merging, one entry per pack schema (packs/<pack>/generated/*.ts)
export interface RecordTypes {}

/** The record type of `ns.schema`: its generated type, else a DataRecord. */
export type RecordOf<N extends string, S extends string> = `${N}.${S}` extends keyof RecordTypes ? RecordTypes[`${N}.${S}`] : DataRecord;

/** Field values a look-up matches by equality: `{ sku: 'A-1', status: 'active' }`. */
export type FieldMatch = FieldValues;

/**
 * The records service as a pack holds it (PackContext.records): every read and write of records a pack makes,
 * through the one write path (migration gate, validation, hooks, the kernel's record events), with the pack's
 * own authority: a schema its namespace declares `sealed` is written by it alone.
 */
export interface PackRecords {
  /**
   * Creates a record. `input` may be a function that makes the document inside the write's transaction (to draw
   * a number, take stock or write rows beside it, all or none); `options.id` is the id the record gets.
   */
  create<N extends string, S extends string>(
    rc: RequestContext, namespace: N, name: S, input: (rc: RequestContext) => Promise<Record<string, unknown>>, options?: CreateOptions,
  ): Promise<RecordOf<N, S>>;
  create<N extends string, S extends string>(rc: RequestContext, namespace: N, name: S, input: CreateInput, options?: CreateOptions): Promise<RecordOf<N, S>>;
  /** A JSON merge patch, validated after merging (`ifMatch`: 412 on another version). */
  update<N extends string, S extends string>(rc: RequestContext, namespace: N, name: S, id: string, patch: unknown, options?: WriteOptions): Promise<RecordOf<N, S>>;
  /** A read-modify-write under the record's row lock: `change` returns the merge patch (or nothing). */
  modify<N extends string, S extends string>(
    rc: RequestContext, namespace: N, name: S, id: string,
    change: (current: RecordOf<N, S>) => Record<string, unknown> | void | Promise<Record<string, unknown> | void>,
  ): Promise<RecordOf<N, S>>;
  /**
   * A conditional change (`add` to integers, `set` fields, only while every `where` holds): null when the record is
   * missing or a condition does not hold, and then nothing was written.
   */
  change<N extends string, S extends string>(rc: RequestContext, namespace: N, name: S, id: string, change: FieldChange, options?: ChangeOptions): Promise<RecordOf<N, S> | null>;
  delete(rc: RequestContext, namespace: string, name: string, id: string, options?: WriteOptions): Promise<void>;

  /** A record by id; 404 not_found. */
  get<N extends string, S extends string>(rc: RequestContext, namespace: N, name: S, id: string, options?: ReadOptions): Promise<RecordOf<N, S>>;
  /** A record by id, or null. */
  find<N extends string, S extends string>(rc: RequestContext, namespace: N, name: S, id: string, read?: ReadOptions): Promise<RecordOf<N, S> | null>;
  /** The oldest record whose fields equal `match`, or null (through the list query). */
  findOne<N extends string, S extends string>(rc: RequestContext, namespace: N, name: S, match: FieldMatch): Promise<RecordOf<N, S> | null>;
  /**
   * The record whose fields equal `match`, or null: a look-up on a unique index (`{ sku }`), its statement
   * compiled once per schema table and fields. Meant for hot paths (a storefront's product by sku).
   */
  findBy<N extends string, S extends string>(rc: RequestContext, namespace: N, name: S, match: FieldMatch, read?: ReadOptions): Promise<RecordOf<N, S> | null>;
  /**
   * The records whose text field (`id`, `sku`) is one of `values`, in no order: `findBy` for many values, in one
   * statement made once per schema table and field. Meant for hot paths (a cart's products by sku).
   */
  findAllBy<N extends string, S extends string>(rc: RequestContext, namespace: N, name: S, field: string, values: readonly string[], read?: ReadOptions): Promise<Array<RecordOf<N, S>>>;
  /** Only the id and version of the record `findBy` finds: the index and the row's header, never its document. */
  versionBy(rc: RequestContext, namespace: string, name: string, match: FieldMatch): Promise<{ id: string; version: number } | null>;
  /** Records with the data API's query language (CONTRACT.md section 3); with `fields`, only those fields (and id) are present. */
  list<N extends string, S extends string>(rc: RequestContext, namespace: N, name: S, query?: RecordQuery, read?: ReadOptions): Promise<Page<RecordOf<N, S>>>;
  /**
   * The locale a read or write asks for (`?locale=`, `?fallback=`), checked against the tenant's locales (400
   * validation_failed at `/locale`); null for the default locale. Hand it to reads and writes as `locale`. `*` (every
   * locale's values) is allowed unless `all` is false.
   */
  chooseLocale(rc: RequestContext, raw: { locale?: unknown; fallback?: unknown }, options?: { all?: boolean }): Promise<LocaleChoice | null>;
  /** Counts, sums and latest values by field or by day, over the records matching the query's filters. */
  group(rc: RequestContext, namespace: string, name: string, query: GroupQuery): Promise<RecordGroup[]>;
}

/** The bulk writer as a pack holds it (PackContext.bulk), with the pack's authority. */
export interface PackBulk {
  /** Many records of one schema, all or none (CONTRACT.md 12.3). */
  writeAll(rc: RequestContext, namespace: string, name: string, items: unknown[], options?: { upsert?: string | null }): Promise<BulkResult>;
}
