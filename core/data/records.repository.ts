import type { Database } from '../db/database.js';
import { inValues, type Dialect } from '../db/dialects/dialect.js';
import { forUpdateClause } from '../db/dialects/row-locking.js';
import type { RequestContext } from '../base/request-context.js';
import type { CompiledSchema } from '../metadata/schema-registry.js';
import { SqlListQuery, SqlParts, type ListQuery } from './list-query.js';
import { slowListAdvice } from './slow-list.js';
import { ESTIMATE_ABOVE, TotalsRepository } from './totals.repository.js';
import { withoutLocalesJson } from './locales.js';
import { membersOf } from './json-members.js';

/** A stored record, flat as the API returns it. */
export interface DataRecord {
  id: string;
  createdAt: string;
  updatedAt: string;
  version: number;
  [field: string]: unknown;
}

/**
 * An expansion read with the list, in its own statement (CONTRACT.md 12.2): the records of `table` that
 * the top-level relation `field` (`many`: an array of ids) of the page's records refers to.
 */
export interface EmbeddedExpansion {
  field: string;
  table: string;
  many: boolean;
}

/** A listed row: the record's columns, its document as JSON text (or parsed). */
export type ListedRow = Omit<RecordRow, 'tenant_id'>;

/** A row of a record table as the list and read queries return it (`data` as JSON text or parsed). */
export interface RecordRow {
  tenant_id: string;
  id: string;
  data: unknown;
  version: number;
  created_at: string;
  updated_at: string;
}

/**
 * A row as the record's JSON text, without parsing the document: `{"id":..., <document fields><extra>,
 * "createdAt":..., "updatedAt":..., "version":...}`; `extra` is more members, each led by a comma; `data` the
 * document's text as the answer shows it, by default the stored one without the other locales' values of localised
 * fields, which are the store's (core/data/locales.ts).
 */
export function recordJson(row: Omit<RecordRow, 'tenant_id'>, extra = '', data = withoutLocalesJson(documentJson(row))): string {
  return recordJsonOf(row, membersOf(data), extra);
}

/**
 * A record as JSON text, the text JSON.stringify gives (`{"id":…, <document>, "createdAt":…, "updatedAt":…,
 * "version":…}`), built from its document's JSON text when that is at hand (as `insert` stored it).
 */
export function recordText(record: DataRecord, document?: string): string {
  if (document === undefined) return JSON.stringify(record);
  return recordJsonOf({ id: record.id, created_at: record.createdAt, updated_at: record.updatedAt, version: record.version }, membersOf(document));
}

/** A row's document as JSON text, as stored. */
export function documentJson(row: Pick<RecordRow, 'data'>): string {
  return typeof row.data === 'string' ? row.data : JSON.stringify(row.data);
}

/** `recordJson` with the document's members given as text, each led by a comma (empty: none). */
export function recordJsonOf(row: Omit<RecordRow, 'tenant_id' | 'data'>, members: string, extra = ''): string {
  return `{"id":${JSON.stringify(row.id)}${members}${extra},"createdAt":${JSON.stringify(row.created_at)},"updatedAt":${JSON.stringify(row.updated_at)},"version":${Number(row.version)}}`;
}

/**
 * A page's LIMIT (limit + 1 rows, to know whether more follow) as a constant, and its OFFSET only when it
 * is not 0 (bound). PostgreSQL plans a prepared statement whose LIMIT or OFFSET is a parameter for a tenth
 * of the table (it cannot know how many rows are wanted), so that generic plan never wins over planning
 * each execution again; with constants the page statement is planned once per connection. Each list
 * limit (1..LIST_LIMITS.maxLimit) is one more statement text, a few at most in practice.
 * A filtered page on PostgreSQL (`bound`) keeps both as parameters: its best plan depends on the filter's values
 * (how many records match), which a generic plan does not know — the bench's indexed filter ran at 0.15 of the
 * plain list with a generic plan, 0.9 planned per execution. SQLite plans a statement once whatever its values:
 * there the bound pair held a filtered page of 50 at 0.84-0.87 of its twin, the constants at 0.97 (npm run bench).
 */
function pageLimit(query: Pick<ListQuery, 'limit' | 'offset'>, bound: boolean): { sql: string; bindings: number[] } {
  const limit = Number(query.limit) + 1;
  if (!Number.isSafeInteger(limit) || limit < 1) throw new Error(`list: bad limit ${query.limit}`);
  if (bound) return { sql: ' LIMIT ? OFFSET ?', bindings: [limit, Number(query.offset) || 0] };
  return query.offset ? { sql: ` LIMIT ${limit} OFFSET ?`, bindings: [query.offset] } : { sql: ` LIMIT ${limit}`, bindings: [] };
}

/** The columns of a listed row (ListedRow), in this order, of table `alias` if given: the document as JSON text. */
function listedColumns(d: Dialect, alias = ''): string {
  const a = alias ? `${alias}.` : '';
  return `${a}id, ${d.jsonText(`${a}data`)} AS data, ${a}version, ${a}created_at, ${a}updated_at`;
}

/** The id and version of a look-up's first row (findBy), or null. */
function firstVersion(rows: ReadonlyArray<{ id: string; version: number | string }>): { id: string; version: number } | null {
  return rows[0] ? { id: rows[0].id, version: Number(rows[0].version) } : null;
}

/** A value bound to a JSON field's typed expression (SQLite compares booleans as 0 and 1). */
function bindScalar(d: Dialect, value: string | number | boolean): string | number | boolean {
  return typeof value === 'boolean' && d.name === 'sqlite' ? Number(value) : value;
}

/** A list slower than this is logged with the index that would serve it (core/data/slow-list.ts). */
const SLOW_LIST_MS = 200;
/** Field values a look-up matches by equality (`{ sku: 'A-1' }`). */
export type FieldValues = Readonly<Record<string, string | number | boolean>>;

/** A look-up by some fields, checked against its schema once (RecordsService): the fields and the key naming them. */
export interface FieldLookup {
  readonly fields: readonly string[];
  readonly key: string;
}

/** A grouped read (RecordsRepository.group): the group key's expression, what to add up, which page of groups. */
export interface GroupSql {
  /** A field of the schema (or createdAt / updatedAt). */
  by: string;
  /** Group by the day (YYYY-MM-DD) of `by`, an ISO date-time, instead of its value. */
  byDay: boolean;
  /** The time zone of those days (an IANA name); null: UTC. */
  timeZone: string | null;
  /** A second field to group by (its value is the row's `thenKey`). */
  thenBy: string | null;
  sum: string[];
  max: string[];
  /** Groups ordered by this measure (`count`, `sum:<field>`, `max:<field>`, `key`), descending unless `key`. */
  order: string;
  limit: number;
}

/** One group of a grouped read: its key, the number of records and the sums and maxima asked for. */
export interface GroupRow {
  key: string | number | boolean | null;
  /** The value of GroupQuery.thenBy (undefined without it). */
  thenKey?: string | number | boolean | null;
  count: number;
  sum: Record<string, number>;
  max: Record<string, string | number | null>;
}

/** SQL of the record tables. Every query is led by the tenant. */
export class RecordsRepository {
  /**
   * The look-ups by field values (findBy, versionBy) per record table, then fields: each statement made once. Two
   * levels of maps, so that a look-up builds no key of its own (a table's name and a field's are strings kept).
   */
  private readonly lookups = new Map<string, Map<string, { record: string; version: string }>>();
  private lookupCount = 0;

  /**
   * List totals, remembered per table, tenant and filter while nothing can have changed them: no write
   * to the table through this repository (its generation) and no commit by another connection (the
   * dialect's tokens: on SQLite the external change token for every total; on PostgreSQL the snapshot, for
   * filtered totals only, as an unfiltered one is a read of the counter rows that costs no more than asking
   * for the snapshot). A count over a large collection is the most expensive part of a list, and on SQLite
   * it holds the only connection while it runs.
   */
  private readonly counted = new Map<string, { generation: number; token: number | string; total: number }>();
  private readonly generations = new Map<string, number>();
  readonly totals: TotalsRepository;

  constructor(private readonly db: Database) {
    this.totals = new TotalsRepository(db);
  }

  /** Marks every remembered total of a table as stale (call on every write to it). */
  private touch(table: string): void {
    this.generations.set(table, (this.generations.get(table) ?? 0) + 1);
  }

  toRecord(row: Omit<RecordRow, 'tenant_id'>): DataRecord {
    const data = this.db.dialect.fromJson<Record<string, unknown>>(row.data);
    return { id: row.id, ...data, createdAt: row.created_at, updatedAt: row.updated_at, version: Number(row.version) };
  }

  /** Queues a new record's row; returns the record and its document's JSON text as stored (a revision reuses it). */
  async insert(rc: RequestContext, schema: CompiledSchema, id: string, data: Record<string, unknown>, now: string, version = 1): Promise<{ record: DataRecord; document: string | undefined }> {
    // Queued until commit: with its outbox event, one statement (PostgreSQL) or one group commit (SQLite).
    // Totals go stale now and once more when the row is written.
    this.touch(schema.tableName);
    const stored = this.db.dialect.toJson(data);
    await this.db.insertAtCommit(rc, schema.tableName, {
      tenant_id: rc.tenantId!, id, data: stored, version, created_at: now, updated_at: now,
    }, () => this.touch(schema.tableName));
    await this.totals.add(rc, schema.id, 1);
    return { record: { id, ...data, createdAt: now, updatedAt: now, version }, document: typeof stored === 'string' ? stored : undefined };
  }

  /**
   * Inserts many new records in the transaction, queued until commit like `insert` (with their events, one
   * group commit), as multi-row statements: the bulk writes of the data API (core/data/bulk.ts).
   */
  async insertMany(rc: RequestContext, schema: CompiledSchema, records: DataRecord[]): Promise<void> {
    if (!records.length) return;
    this.touch(schema.tableName);
    const batch = this.db.dialect.rowsPerInsert;
    for (let i = 0; i < records.length; i += batch) {
      const rows = records.slice(i, i + batch).map(({ id, createdAt, updatedAt, version, ...data }) => ({
        tenant_id: rc.tenantId!, id, data: this.db.dialect.toJson(data), version, created_at: createdAt, updated_at: updatedAt,
      }));
      await this.db.writeAtCommit(rc, { table: schema.tableName, rows, done: () => this.touch(schema.tableName) });
    }
    await this.totals.add(rc, schema.id, records.length);
  }

  /**
   * Inserts many stored records at once (imports, seeding, benchmarks): no validation, hooks or events.
   * Call inside a transaction; rows go in batches that stay under both engines' parameter limits.
   */
  async bulkInsert(rc: RequestContext, schema: CompiledSchema, records: DataRecord[]): Promise<void> {
    this.touch(schema.tableName);
    const conn = this.db.sql(rc);
    const rows: RecordRow[] = records.map(({ id, createdAt, updatedAt, version, ...data }) => ({
      tenant_id: rc.tenantId!, id, data: this.db.dialect.toJson(data), version, created_at: createdAt, updated_at: updatedAt,
    }));
    const batch = this.db.dialect.rowsPerInsert;
    for (let i = 0; i < rows.length; i += batch) await conn.run(this.db.query(schema.tableName).insert(rows.slice(i, i + batch)));
    if (rows.length) await this.totals.add(rc, schema.id, rows.length);
  }

  /** Refreshes the planner statistics of a schema's table (after a bulk load). */
  analyze(schema: CompiledSchema): Promise<void> {
    return this.db.dialect.analyze(this.db.knex, schema.tableName);
  }

  /** A record by id; with `lock`, its row stays locked for rc's transaction (read-modify-write). */
  async findById(rc: RequestContext, schema: CompiledSchema, id: string, lock = false): Promise<DataRecord | null> {
    const rows = await this.db.sql(rc).rows<RecordRow>(
      `SELECT id, data, version, created_at, updated_at FROM ${schema.tableName} WHERE tenant_id = ${this.db.dialect.fixedParameter} AND id = ?${lock ? forUpdateClause(this.db.dialect) : ''}`, [rc.tenantId!, id]);
    return rows[0] ? this.toRecord(rows[0]) : null;
  }

  /**
   * The records of some ids, by id (a release's items of one schema): one statement per 500 ids (inValues); `lock` holds
   * their rows for rc's transaction.
   */
  async findByIds(rc: RequestContext, schema: CompiledSchema, ids: readonly string[], lock = false): Promise<Map<string, DataRecord>> {
    const found = new Map<string, DataRecord>();
    for (let i = 0; i < ids.length; i += 500) {
      const list = inValues(this.db.dialect, ids.slice(i, i + 500));
      const rows = await this.db.sql(rc).rows<RecordRow>(
        `SELECT id, data, version, created_at, updated_at FROM ${schema.tableName} WHERE tenant_id = ${this.db.dialect.fixedParameter} AND id IN ${list.sql}${lock ? forUpdateClause(this.db.dialect) : ''}`,
        [rc.tenantId!, ...list.bindings]);
      for (const row of rows) found.set(row.id, this.toRecord(row));
    }
    return found;
  }

  /**
   * The record whose fields equal `match` (on a unique index: one at most), its statement made once per table
   * and fields. `versionOnly`: its id and version alone, read from the index and the row's header.
   */
  async findBy(rc: RequestContext, schema: CompiledSchema, lookup: FieldLookup, match: FieldValues, versionOnly: true): Promise<{ id: string; version: number } | null>;
  async findBy(rc: RequestContext, schema: CompiledSchema, lookup: FieldLookup, match: FieldValues, versionOnly: false): Promise<DataRecord | null>;
  findBy(rc: RequestContext, schema: CompiledSchema, lookup: FieldLookup, match: FieldValues, versionOnly: boolean) {
    const { fields } = lookup;
    const d = this.db.dialect;
    const statements = this.lookupStatements(schema, lookup.key, fields, null);
    const bindings: unknown[] = fields.length === 1 ? [rc.tenantId!, bindScalar(d, match[fields[0]])] : [rc.tenantId!, ...fields.map((f) => bindScalar(d, match[f]))];
    if (versionOnly) return this.db.sql(rc).rows<{ id: string; version: number | string }>(statements.version, bindings).then(firstVersion);
    return this.db.sql(rc).rows<RecordRow>(statements.record, bindings).then((rows) => (rows[0] ? this.toRecord(rows[0]) : null));
  }

  /**
   * The records whose text `field` is one of `values` (a look-up on its unique index, as `findBy` for many values):
   * one statement, made once per table, field and size class of the values (see inValues).
   */
  async findAllBy(rc: RequestContext, schema: CompiledSchema, field: string, values: readonly string[]): Promise<DataRecord[]> {
    const list = inValues(this.db.dialect, values);
    const statements = this.lookupStatements(schema, `${field}\u0000${list.sql}`, [field], list.sql);
    const rows = await this.db.sql(rc).rows<RecordRow>(statements.record, [rc.tenantId!, ...list.bindings]);
    return rows.map((row) => this.toRecord(row));
  }

  /**
   * The look-up statements of a table by some fields (`key` names them and `list`): each field equal to its bound
   * value, or with `list` (a placeholder list of inValues) the one field in it. Made once and remembered; a call
   * that finds them allocates nothing (a storefront's 304 is this look-up and little else).
   */
  private lookupStatements(schema: CompiledSchema, key: string, fields: readonly string[], list: string | null): { record: string; version: string } {
    let byKey = this.lookups.get(schema.tableName);
    if (byKey === undefined) this.lookups.set(schema.tableName, (byKey = new Map()));
    let statements = byKey.get(key);
    if (statements === undefined) {
      const sql = new SqlListQuery(this.db.dialect, schema.types);
      const condition = list === null ? fields.map((f) => ` AND ${sql.expression(f).sql} = ?`).join('') : ` AND ${sql.expression(fields[0]).sql} IN ${list}`;
      statements = {
        record: `SELECT id, data, version, created_at, updated_at FROM ${schema.tableName} WHERE tenant_id = ${this.db.dialect.fixedParameter}${condition}`,
        version: `SELECT id, version FROM ${schema.tableName} WHERE tenant_id = ${this.db.dialect.fixedParameter}${condition}`,
      };
      if (++this.lookupCount > 10_000) {
        this.lookups.clear();
        this.lookupCount = 1;
        this.lookups.set(schema.tableName, (byKey = new Map()));
      }
      byKey.set(key, statements);
    }
    return statements;
  }

  /** Counts, sums and maxima of the records matching `query`'s filters, by the value (or day) of one field. */
  async group(rc: RequestContext, schema: CompiledSchema, query: ListQuery, group: GroupSql): Promise<GroupRow[]> {
    const d = this.db.dialect;
    const sql = new SqlListQuery(d, schema.types, schema.plainFields);
    const filters = new SqlParts();
    sql.applyAll(filters, query);
    const by = sql.expression(group.by).sql;
    // A UTC day is the ISO string's date: no time zone function per row (SQLite's hp_local_day cost a grouping of
    // 100,000 orders 40 % of its CPU time).
    const zoned = group.timeZone && group.timeZone !== 'UTC' && group.timeZone !== 'Etc/UTC';
    const key = !group.byDay ? by : zoned ? d.localDay(by, group.timeZone!) : `substr(${by}, 1, 10)`;
    const thenKey = group.thenBy ? sql.expression(group.thenBy).sql : null;
    const measures = [
      ...(thenKey ? [`${thenKey} AS t`] : []),
      'count(*) AS n',
      ...group.sum.map((f, i) => `sum(${sql.expression(f).sql}) AS s${i}`),
      ...group.max.map((f, i) => `max(${sql.expression(f).sql}) AS m${i}`),
    ];
    const [kind, field] = group.order.split(':');
    const order = kind === 'key' ? 'k' : kind === 'count' ? 'n DESC' : `${kind === 'sum' ? 's' : 'm'}${(kind === 'sum' ? group.sum : group.max).indexOf(field)} DESC`;
    const rows = await this.db.sql(rc).rows<Record<string, unknown>>(
      `SELECT ${key} AS k, ${measures.join(', ')} FROM ${schema.tableName} WHERE tenant_id = ${this.db.dialect.fixedParameter}${filters.andWhere()} GROUP BY ${key}${thenKey ? `, ${thenKey}` : ''} ORDER BY ${order}, k${thenKey ? ', t' : ''} LIMIT ?`,
      [rc.tenantId!, ...filters.bindings, group.limit]);
    return rows.map((r) => ({
      key: r.k as GroupRow['key'],
      ...(thenKey ? { thenKey: r.t as GroupRow['key'] } : {}),
      count: Number(r.n),
      sum: Object.fromEntries(group.sum.map((f, i) => [f, Number(r[`s${i}`] ?? 0)])),
      max: Object.fromEntries(group.max.map((f, i) => [f, (r[`m${i}`] ?? null) as string | number | null])),
    }));
  }

  /** Writes a new version if the stored one is still `version`; false when another write came first. */
  async update(rc: RequestContext, schema: CompiledSchema, id: string, version: number, data: Record<string, unknown>, now: string): Promise<boolean> {
    this.touch(schema.tableName);
    // A prepared statement (knex would prepare it anew on each call); RETURNING tells whether it wrote.
    const changed = await this.db.sql(rc).rows(
      `UPDATE ${schema.tableName} SET data = ?, version = ?, updated_at = ? WHERE tenant_id = ${this.db.dialect.fixedParameter} AND id = ? AND version = ? RETURNING version`,
      [this.db.dialect.toJson(data), version + 1, now, rc.tenantId!, id, version]);
    return changed.length === 1;
  }

  async delete(rc: RequestContext, schema: CompiledSchema, id: string, version: number): Promise<boolean> {
    this.touch(schema.tableName);
    const deleted = (await this.db.sql(rc).rows(
      `DELETE FROM ${schema.tableName} WHERE tenant_id = ${this.db.dialect.fixedParameter} AND id = ? AND version = ? RETURNING version`, [rc.tenantId!, id, version])).length === 1;
    if (deleted) await this.totals.add(rc, schema.id, -1);
    return deleted;
  }

  /**
   * One page (limit + 1 rows, to know whether more follow) and, unless count=false, the total
   * (CONTRACT.md 12.5): unfiltered from the tenant's counter, filtered by counting through the indexes,
   * and with count=estimated on PostgreSQL the planner's estimate once it is above ESTIMATE_ABOVE.
   * `embeds` are expansions read in the same statement (engines with `dialect.embedding`): `referenced`
   * holds, for each, the records the page refers to through it (in no order).
   */
  async list(
    rc: RequestContext, schema: CompiledSchema, query: ListQuery, embeds: readonly EmbeddedExpansion[] = [],
  ): Promise<{ rows: ListedRow[]; referenced: ListedRow[][]; total: number | null; totalEstimated: boolean }> {
    const started = performance.now();
    const { where, bindings, filters } = this.page(rc, schema, query);
    // The document as JSON text on both engines: the data API splices it into the response as it is.
    const d = this.db.dialect;
    let rows: Promise<{ rows: ListedRow[]; referenced: ListedRow[][] }>;
    if (!embeds.length) {
      rows = this.db.sql(rc).rows<ListedRow>(`SELECT ${listedColumns(d)} ${where}`, bindings)
        .then((found) => ({ rows: found, referenced: [] }));
    } else {
      if (!d.embedding) throw new Error('list: this engine reads expansions with queries of their own');
      // The page once (a CTE read twice is materialised), then for each expansion the records its rows
      // refer to, told apart by `k` (0: the page). UNION ALL without ORDER BY gives its branches' rows in
      // turn, and the page's in the CTE's order: nothing here can run in parallel (a CTE scan cannot).
      const referenced = embeds.map((e, i) => ` UNION ALL SELECT ${i + 1}, ${listedColumns(d, 'e')} FROM ${e.table} AS e `
        + `WHERE e.tenant_id = ? AND ${d.embedding!.referencedBy('e.id', 'page', e.field, e.many)}`);
      const text = `WITH page AS MATERIALIZED (SELECT id, data, version, created_at, updated_at ${where}) `
        + `SELECT 0 AS k, ${listedColumns(d, 'page')} FROM page${referenced.join('')}`;
      rows = this.db.sql(rc).rows<ListedRow & { k: number }>(text, [...bindings, ...embeds.map(() => rc.tenantId!)]).then((found) => {
        const split = { rows: [] as ListedRow[], referenced: embeds.map((): ListedRow[] => []) };
        for (const row of found) (row.k === 0 ? split.rows : split.referenced[row.k - 1]).push(row);
        return split;
      });
    }
    const total = query.count ? this.total(rc, schema, query, filters) : Promise.resolve({ total: null, estimated: false });
    const [found, counted] = await Promise.all([rows, total]);
    this.adviseIfSlow(rc, schema, query, started);
    return { ...found, total: counted.total, totalEstimated: counted.estimated };
  }

  /**
   * One page of an export (limit + 1 rows, as `list`), each row handed to `onRow` as soon as the driver reads
   * it, nothing collected (Database.eachRow). Resolves with the number of rows.
   */
  async eachListedRow(rc: RequestContext, schema: CompiledSchema, query: ListQuery, onRow: (row: ListedRow) => void): Promise<number> {
    const started = performance.now();
    const { where, bindings } = this.page(rc, schema, query);
    const count = await this.db.eachRow(rc, `SELECT ${listedColumns(this.db.dialect)} ${where}`, bindings, ([id, data, version, created, updated]) => {
      onRow({ id: id as string, data, version: version as number, created_at: created as string, updated_at: updated as string });
    });
    this.adviseIfSlow(rc, schema, query, started);
    return count;
  }

  /** Logs a list slower than SLOW_LIST_MS with the index that would serve it. */
  private adviseIfSlow(rc: RequestContext, schema: CompiledSchema, query: ListQuery, started: number): void {
    const ms = performance.now() - started;
    if (ms < SLOW_LIST_MS) return;
    const advice = slowListAdvice(schema, query, ms);
    if (advice) rc.logger?.warn(advice.log, advice.message);
  }

  /** A list page's FROM ... LIMIT clause and its bindings, and the filters alone (for the total). */
  private page(rc: RequestContext, schema: CompiledSchema, query: ListQuery): { where: string; bindings: unknown[]; filters: SqlParts } {
    const sql = new SqlListQuery(this.db.dialect, schema.types, schema.plainFields);
    const filters = new SqlParts();
    sql.applyAll(filters, query);
    const page = new SqlParts();
    sql.applyAll(page, query);
    if (query.cursor) sql.applyCursor(page, query.sort, query.cursor);
    sql.applySort(page, query.sort);
    const limit = pageLimit(query, filters.wheres.length > 0 && this.db.dialect.name === 'postgres');
    const where = `FROM ${schema.tableName} WHERE tenant_id = ${this.db.dialect.fixedParameter}${page.andWhere()}${page.orderBy()}${limit.sql}`;
    return { where, bindings: [rc.tenantId!, ...page.bindings, ...limit.bindings], filters };
  }

  private async total(rc: RequestContext, schema: CompiledSchema, query: ListQuery, filters: SqlParts): Promise<{ total: number; estimated: boolean }> {
    const where = `FROM ${schema.tableName} WHERE tenant_id = ${this.db.dialect.fixedParameter}${filters.andWhere()}`;
    const bindings = [rc.tenantId!, ...filters.bindings];
    if (query.estimated) {
      const estimate = await this.db.estimateRows(rc, `SELECT 1 ${where}`, bindings);
      if (estimate !== null && estimate > ESTIMATE_ABOVE) return { total: Math.round(estimate), estimated: true };
    }
    if (!filters.wheres.length) {
      const exact = () => this.totals.exact(rc, schema.id);
      return { total: await this.remembered(rc, schema.tableName, `total\u0000${rc.tenantId}`, exact, () => this.db.externalChangeToken(rc)), estimated: false };
    }
    const sql = `SELECT count(*) AS n ${where}`;
    const count = async () => Number((await this.db.sql(rc).rows<{ n: number | string }>(sql, bindings))[0].n);
    const what = `${sql}\u0000${JSON.stringify(bindings)}`;
    return { total: await this.remembered(rc, schema.tableName, what, count, () => this.db.snapshotToken(rc)), estimated: false };
  }

  /**
   * A row as the record's JSON text, without parsing the document: `{"id":..., <document fields>,
   * "createdAt":..., "updatedAt":..., "version":...}`, the same text JSON.stringify(toRecord(row)) gives.
   */
  toRecordJson(row: Omit<RecordRow, 'tenant_id'>): string {
    return recordJson(row);
  }

  /** A row as the record's JSON text with its document as stored (`$locales` included: exports). */
  toStoredJson(row: Omit<RecordRow, 'tenant_id'>): string {
    const data = documentJson(row);
    return recordJsonOf(row, membersOf(data));
  }

  /** A total of a table (`what` names which), remembered while nothing can have changed it (see `counted`). */
  private async remembered(
    rc: RequestContext, table: string, what: string, run: () => Promise<number>, changeToken: () => Promise<number | string | null>,
  ): Promise<number> {
    // Inside a transaction the count may see uncommitted writes: never remember it.
    if (rc.trx) return run();
    const generation = this.generations.get(table) ?? 0;
    // Read before the count: a count that saw a commit after this token is stored under a token that no
    // later read gets again (each commit changes it), so it is never reused.
    const token = await changeToken();
    if (token === null) return run();
    const key = `${table}\u0000${what}`;
    const known = this.counted.get(key);
    if (known && known.generation === generation && known.token === token) return known.total;
    const total = await run();
    // Remembered only if no write to the table began meanwhile.
    if ((this.generations.get(table) ?? 0) === generation) {
      if (this.counted.size >= 1000) this.counted.delete(this.counted.keys().next().value!);
      this.counted.set(key, { generation, token, total });
    }
    return total;
  }
}
