import type { RequestContext } from '../base/request-context.js';
import type { Page } from '../http/envelope.js';
import type { BulkResult } from './bulk.js';
import type { RecordQuery } from './list-query.js';
import type { DataRecord } from './records.repository.js';
import type { ChangeOptions, CreateInput, CreateOptions, FieldChange, ReadOptions, RecordGroup, GroupQuery, WriteOptions } from './records.service.js';

/**
 * Record types by `ns.schema`, declared by each pack's generated files (npm run pack-types, from its JSON Schema
 * files) by declaration merging, so that reads and writes of `pack.records` are typed without a cast.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-interface
export interface RecordTypes {}

/** The record type of `ns.schema`: its generated type, else a DataRecord. */
export type RecordOf<N extends string, S extends string> = `${N}.${S}` extends keyof RecordTypes ? RecordTypes[`${N}.${S}`] : DataRecord;

/** Field values a look-up matches by equality: `{ sku: 'A-1', status: 'active' }`. */
export type FieldMatch = Readonly<Record<string, string | number | boolean>>;

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
  create<N extends string, S extends string>(rc: RequestContext, namespace: N, name: S, input: (rc: RequestContext) => Promise<Record<string, unknown>>, options?: CreateOptions): Promise<RecordOf<N, S>>;
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
  find<N extends string, S extends string>(rc: RequestContext, namespace: N, name: S, id: string): Promise<RecordOf<N, S> | null>;
  /** The oldest record whose fields equal `match`, or null (through the list query). */
  findOne<N extends string, S extends string>(rc: RequestContext, namespace: N, name: S, match: FieldMatch): Promise<RecordOf<N, S> | null>;
  /**
   * The record whose fields equal `match`, or null: a look-up on a unique index (`{ sku }`), its statement
   * compiled once per schema table and fields. Meant for hot paths (a storefront's product by sku).
   */
  findBy<N extends string, S extends string>(rc: RequestContext, namespace: N, name: S, match: FieldMatch): Promise<RecordOf<N, S> | null>;
  /** Only the id and version of the record `findBy` finds: the index and the row's header, never its document. */
  versionBy(rc: RequestContext, namespace: string, name: string, match: FieldMatch): Promise<{ id: string; version: number } | null>;
  /** Records with the data API's query language (CONTRACT.md section 3); with `fields`, only those fields (and id) are present. */
  list<N extends string, S extends string>(rc: RequestContext, namespace: N, name: S, query?: RecordQuery): Promise<Page<RecordOf<N, S>>>;
  /** Counts, sums and latest values by field or by day, over the records matching the query's filters. */
  group(rc: RequestContext, namespace: string, name: string, query: GroupQuery): Promise<RecordGroup[]>;
}

/** The bulk writer as a pack holds it (PackContext.bulk), with the pack's authority. */
export interface PackBulk {
  /** Many records of one schema, all or none (CONTRACT.md 12.3). */
  writeAll(rc: RequestContext, namespace: string, name: string, items: unknown[], options?: { upsert?: string | null }): Promise<BulkResult>;
}
