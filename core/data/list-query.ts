import type { Dialect, JsonScalarType } from '../db/dialects/dialect.js';
import { SAFE_FIELD } from '../db/dialects/dialect.js';
import { AppError, InvalidCursor, InvalidFilter } from '../base/errors.js';
import { isScalar, serverColumn, type FieldType } from '../metadata/schema-definition.js';
import { LIST_LIMITS } from '../http/response-schemas.js';

/**
 * The kernel's query language (CONTRACT.md section 3), parsed from the query string and translated into
 * parameterised SQL through the dialect. User text never becomes an identifier: field names are checked
 * against the schema and SAFE_FIELD before they reach an expression.
 */

export const OPERATORS = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'nin', 'like', 'exists'] as const;
/**
 * The operators of a RecordQuery: the query string's, and `contains` (a case-insensitive substring, taken
 * literally), which packs use in code (a storefront's search) and the query string does not offer.
 */
export type Operator = (typeof OPERATORS)[number] | 'contains';
const QUERY_OPERATORS: readonly Operator[] = [...OPERATORS, 'contains'];


export interface Filter {
  field: string;
  op: Operator;
  value: unknown;
}

export interface SortKey {
  field: string;
  desc: boolean;
}

export interface ListQuery {
  limit: number;
  offset: number;
  cursor: unknown[] | null;
  sort: SortKey[];
  filters: Filter[];
  /** Filters of which at least one must hold (RecordQuery.anyOf). */
  anyOf?: Filter[];
  /**
   * The caller's role policies (CONTRACT.md 16.1, core/data/record-policies.ts): at least one of these lists of
   * filters must hold whole. Set by the records service, never from a query.
   */
  policy?: Filter[][];
  fields: string[] | null;
  count: boolean;
  /** count=estimated: the planner's estimate may stand in for a large total (CONTRACT.md 12.5). */
  estimated: boolean;
}


type RawQuery = Record<string, string | string[] | undefined>;

/**
 * A records query as code writes it (packs, MCP tools): the query language of CONTRACT.md section 3 as an
 * object. `records.list(rc, ns, schema, { filter: [{ field: 'dealId', op: 'eq', value: id }], limit: 1 })`.
 * Filter values are typed (a number for a number field, an array for `in`/`nin`, a boolean for `exists`);
 * strings are converted for number and boolean fields, as the query string's are.
 */
export interface RecordQuery {
  filter?: Array<{ field: string; op?: Operator; value: unknown }>;
  /** Conditions of which at least one must hold (beside every `filter`): a pack's search over several fields. */
  anyOf?: Array<{ field: string; op?: Operator; value: unknown }>;
  /** Default `-createdAt`; the id is always added last to break ties. */
  sort?: Array<{ field: string; desc?: boolean }>;
  /** 1 to 200, default 50. */
  limit?: number;
  offset?: number;
  /** The `nextCursor` of the previous page. */
  cursor?: string;
  /** Project the items to these fields. */
  fields?: string[];
  /**
   * Whether to count the total (default true); `'estimated'`: on PostgreSQL the planner's estimate may stand
   * in for a large total (CONTRACT.md 12.5).
   */
  count?: boolean | 'estimated';
  /** Referenced records in place of their ids (CONTRACT.md 12.2): relation paths, `'customer'` or `'order.customer'`. */
  expand?: string[];
}

function single(name: string, value: string | string[] | undefined): string | undefined {
  if (Array.isArray(value)) throw InvalidFilter(`The parameter ${name} was given more than once`);
  return value;
}

function rangeError(name: string, min: number, max: number): AppError {
  return new AppError('validation_failed', 400, `${name} must be an integer from ${min} to ${max}`, [{ path: `query/${name}`, message: `must be an integer from ${min} to ${max}` }]);
}

function parseInteger(name: string, raw: string | undefined, min: number, max: number): number | undefined {
  if (raw === undefined) return undefined;
  // An empty value (`?offset=`) is no integer: 400, as the document's integer type says, not the default.
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) throw rangeError(name, min, max);
  return Number(raw);
}

function checkInteger(name: string, value: number | undefined, min: number, max: number, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < min || value > max) throw rangeError(name, min, max);
  return value;
}

/** The type of a field for filtering and sorting, or undefined when the schema lacks it. */
export function typeOfField(field: string, types: Map<string, FieldType>): FieldType | undefined {
  return serverColumn(field)?.type ?? types.get(field);
}

function convert(field: string, type: FieldType, value: unknown): unknown {
  if (typeof value !== 'string') {
    const ok = (type === 'integer' && Number.isInteger(value)) || (type === 'number' && Number.isFinite(value))
      || (type === 'boolean' && typeof value === 'boolean');
    if (!ok) throw InvalidFilter(`The value ${JSON.stringify(value)?.slice(0, 40)} for ${field} is not a ${type}`);
    return value;
  }
  const raw = value;
  switch (type) {
    case 'integer':
    case 'number': {
      const n = Number(raw);
      if (raw.trim() === '' || !Number.isFinite(n) || (type === 'integer' && !Number.isInteger(n))) {
        throw InvalidFilter(`The value "${raw.slice(0, 40)}" for ${field} is not a${type === 'integer' ? 'n integer' : ' number'}`);
      }
      return n;
    }
    case 'boolean':
      if (raw === 'true') return true;
      if (raw === 'false') return false;
      throw InvalidFilter(`The value "${raw.slice(0, 40)}" for ${field} is not true or false`);
    default:
      return raw;
  }
}

/** The list query's own parameters; `filter[...]` comes on top. Anything else is refused (400), never ignored. */
export const LIST_PARAMETERS = ['limit', 'offset', 'cursor', 'sort', 'fields', 'count', 'expand'];

/**
 * Reads the query language from a query string (`filter[stage]=won&sort=-createdAt&limit=10`) into a
 * RecordQuery. Only routes call this; code builds RecordQuery objects.
 */
/**
 * A query string's `locale` and `fallback` (CONTRACT.md 17.2; records.chooseLocale checks them) and its other
 * parameters (for queryFromString).
 */
export function splitLocale(query: RawQuery): { locale: { locale?: unknown; fallback?: unknown }; rest: RawQuery } {
  const { locale, fallback, ...rest } = query;
  return { locale: { locale, fallback }, rest };
}

export function queryFromString(query: RawQuery): RecordQuery {
  const unknown = Object.keys(query).filter((key) => !LIST_PARAMETERS.includes(key) && !key.startsWith('filter'));
  if (unknown.length) {
    throw new AppError('validation_failed', 400, `Unknown query parameter ${unknown.map((k) => `"${k.slice(0, 64)}"`).join(', ')}`,
      unknown.map((key) => ({ path: `query/${key.slice(0, 64)}`, message: 'is not a parameter of this list' })));
  }
  const out: RecordQuery = {};
  const limit = parseInteger('limit', single('limit', query.limit), 1, LIST_LIMITS.maxLimit);
  if (limit !== undefined) out.limit = limit;
  const offset = parseInteger('offset', single('offset', query.offset), 0, LIST_LIMITS.maxOffset);
  if (offset !== undefined) out.offset = offset;
  const countRaw = single('count', query.count);
  if (countRaw !== undefined && countRaw !== 'true' && countRaw !== 'false' && countRaw !== 'estimated') {
    throw InvalidFilter('count must be true, false or estimated');
  }
  if (countRaw !== undefined) out.count = countRaw === 'estimated' ? 'estimated' : countRaw === 'true';

  const sortRaw = single('sort', query.sort);
  if (sortRaw !== undefined) {
    out.sort = sortRaw.split(',').map((s) => s.trim()).filter(Boolean).map((part) => {
      const desc = part.startsWith('-');
      return { field: desc ? part.slice(1) : part.replace(/^\+/, ''), desc };
    });
  }

  const filter: NonNullable<RecordQuery['filter']> = [];
  for (const [key, rawValue] of Object.entries(query)) {
    if (!key.startsWith('filter')) continue;
    const match = /^filter\[([^\][]+)\](?:\[([a-z]+)\])?$/.exec(key);
    if (!match) throw InvalidFilter(`Malformed filter parameter "${key.slice(0, 64)}"; use filter[field]=v or filter[field][op]=v`);
    const [, field, opRaw] = match;
    const op = (opRaw ?? 'eq') as (typeof OPERATORS)[number];
    if (!OPERATORS.includes(op)) throw InvalidFilter(`Unknown operator "${opRaw}"; use one of ${OPERATORS.join(', ')}`);
    const values = Array.isArray(rawValue) ? rawValue : [rawValue ?? ''];
    for (const raw of values) filter.push({ field, op, value: op === 'in' || op === 'nin' ? raw.split(',') : raw });
  }
  if (filter.length) out.filter = filter;

  const fieldsRaw = single('fields', query.fields);
  if (fieldsRaw !== undefined) out.fields = fieldsRaw.split(',').map((f) => f.trim()).filter(Boolean);
  const cursorRaw = single('cursor', query.cursor);
  if (cursorRaw) out.cursor = cursorRaw;
  const expandRaw = single('expand', query.expand);
  if (expandRaw) out.expand = expandRaw.split(',').map((p) => p.trim()).filter(Boolean);
  return out;
}

const RECORD_QUERY_KEYS = new Set(['filter', 'anyOf', 'sort', 'limit', 'offset', 'cursor', 'fields', 'count', 'expand']);

/**
 * Checks a RecordQuery against the schema's fields and makes it the ListQuery the repository runs (its
 * `expand` is checked by the relations). `manyRefs`: array fields that hold references (12.2), where an
 * `eq` filter on the field means "contains".
 */
export function checkQuery(query: RecordQuery, types: Map<string, FieldType>, manyRefs: ReadonlySet<string> = new Set()): ListQuery {
  // A query string object handed over as is would be ignored silently: refuse it.
  const unknown = Object.keys(query).find((k) => !RECORD_QUERY_KEYS.has(k));
  if (unknown) throw InvalidFilter(`Unknown query key "${unknown.slice(0, 64)}" (a query string is read with queryFromString)`);
  const limit = checkInteger('limit', query.limit, 1, LIST_LIMITS.maxLimit, LIST_LIMITS.defaultLimit);
  const offset = checkInteger('offset', query.offset, 0, LIST_LIMITS.maxOffset, 0);

  const sort: SortKey[] = [];
  for (const { field, desc = false } of query.sort ?? []) {
    const type = typeOfField(field, types);
    if (!SAFE_FIELD.test(field) || !isScalar(type)) throw InvalidFilter(`Cannot sort by "${field.slice(0, 64)}": the schema has no such scalar field`);
    if (sort.some((s) => s.field === field)) throw InvalidFilter(`The sort names "${field}" twice`);
    sort.push({ field, desc });
  }
  if (sort.length === 0) sort.push({ field: 'createdAt', desc: true });
  if (sort.length > 4) throw InvalidFilter('At most 4 sort fields are allowed');
  // The id breaks ties, so that every order is total and keyset paging never skips or repeats a record.
  if (!sort.some((s) => s.field === 'id')) sort.push({ field: 'id', desc: sort[sort.length - 1].desc });

  const filters = checkFilters(query.filter ?? [], types, manyRefs);
  const anyOf = query.anyOf?.length ? checkFilters(query.anyOf, types, manyRefs) : undefined;

  const fields = query.fields ?? null;
  for (const field of fields ?? []) {
    if (typeOfField(field, types) === undefined) throw InvalidFilter(`Unknown field "${field.slice(0, 64)}" in fields`);
  }

  return {
    limit,
    offset: query.cursor ? 0 : offset,
    cursor: query.cursor ? decodeCursor(query.cursor, sort) : null,
    sort,
    filters,
    ...(anyOf ? { anyOf } : {}),
    fields,
    count: query.count !== false,
    estimated: query.count === 'estimated',
  };
}

/** Filters checked against the schema's fields, their values read as the fields' types. */
function checkFilters(list: NonNullable<RecordQuery['filter']>, types: Map<string, FieldType>, manyRefs: ReadonlySet<string>): Filter[] {
  const filters: Filter[] = [];
  for (const { field, op = 'eq', value } of list) {
    if (!QUERY_OPERATORS.includes(op)) throw InvalidFilter(`Unknown operator "${String(op).slice(0, 20)}"; use one of ${OPERATORS.join(', ')}`);
    const type = typeOfField(field, types);
    if (!SAFE_FIELD.test(field) || type === undefined) throw InvalidFilter(`Cannot filter on "${field.slice(0, 64)}": the schema has no such field`);
    const contains = op === 'eq' && manyRefs.has(field);
    filters.push({ field, op, value: contains ? String(value) : filterValue(field, type, op, value) });
  }
  return filters;
}

/** The query string's query language, checked against the schema (queryFromString, then checkQuery). */
export function parseListQuery(query: RawQuery, types: Map<string, FieldType>, manyRefs: ReadonlySet<string> = new Set()): ListQuery {
  return checkQuery(queryFromString(query), types, manyRefs);
}

function filterValue(field: string, type: FieldType, op: Operator, value: unknown): unknown {
  if (op === 'exists') {
    if (value === true || value === 'true') return true;
    if (value === false || value === 'false') return false;
    throw InvalidFilter(`filter[${field}][exists] takes true or false`);
  }
  if (!isScalar(type)) throw InvalidFilter(`The operator ${op} does not apply to the ${type} field "${field}"; only exists does`);
  if (op === 'like' || op === 'contains') {
    if (type !== 'string' || typeof value !== 'string') throw InvalidFilter(`like applies to string fields only, not to "${field}"`);
    return value;
  }
  if ((op === 'gt' || op === 'gte' || op === 'lt' || op === 'lte') && type === 'boolean') {
    throw InvalidFilter(`${op} does not apply to the boolean field "${field}"`);
  }
  if (op === 'in' || op === 'nin') {
    const parts = Array.isArray(value) ? value : [value];
    if (parts.length > LIST_LIMITS.maxInValues) throw InvalidFilter(`At most ${LIST_LIMITS.maxInValues} values in ${op}`);
    return parts.map((p) => convert(field, type, p));
  }
  return convert(field, type, value);
}

export function encodeCursor(values: unknown[]): string {
  return Buffer.from(JSON.stringify(values)).toString('base64url');
}

function decodeCursor(raw: string, sort: SortKey[]): unknown[] {
  let values: unknown;
  try {
    values = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
  } catch {
    throw InvalidCursor('The cursor is malformed');
  }
  if (!Array.isArray(values) || values.length !== sort.length) throw InvalidCursor('The cursor does not belong to this sort order');
  for (const v of values) {
    if (v !== null && typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') throw InvalidCursor('The cursor is malformed');
  }
  return values;
}

/** Where the translated clauses go: a knex builder, or SqlParts to assemble the statement text directly. */
export interface SqlSink {
  whereRaw(sql: string, bindings?: readonly unknown[]): unknown;
  orderByRaw(sql: string): unknown;
}

/** Collects WHERE and ORDER BY clauses with their bindings, in order. */
export class SqlParts implements SqlSink {
  readonly wheres: string[] = [];
  readonly orders: string[] = [];
  readonly bindings: unknown[] = [];

  whereRaw(sql: string, bindings: readonly unknown[] = []): this {
    this.wheres.push(sql);
    this.bindings.push(...bindings);
    return this;
  }

  orderByRaw(sql: string): this {
    this.orders.push(sql);
    return this;
  }

  /** ` AND (a) AND (b)` or an empty string. */
  andWhere(): string {
    return this.wheres.map((w) => ` AND (${w})`).join('');
  }

  orderBy(): string {
    return this.orders.length ? ` ORDER BY ${this.orders.join(', ')}` : '';
  }
}

/** Translates a parsed query into SQL clauses. */
export class SqlListQuery {
  /**
   * `plainFields`: fields whose stored values have exactly the filter's type (one JSON type, or it and
   * null) and that lead no declared index, for which equality may also be asked of the document index
   * (PostgreSQL's GIN index; see CompiledSchema.plainFields).
   */
  constructor(private readonly dialect: Dialect, private readonly types: Map<string, FieldType>, private readonly plainFields: ReadonlySet<string> = new Set()) {}

  /** SQL expression for a field: a column for server fields, a typed JSON extraction otherwise. */
  expression(field: string): { sql: string; nullable: boolean; type: JsonScalarType } {
    const server = serverColumn(field);
    if (server) return { sql: server.column, nullable: false, type: server.type };
    const type = this.types.get(field);
    const scalar: JsonScalarType = isScalar(type) ? type : 'string';
    return { sql: this.dialect.jsonField(field, scalar), nullable: true, type: scalar };
  }

  private bind(value: unknown): any {
    if (typeof value === 'boolean' && this.dialect.name === 'sqlite') return value ? 1 : 0;
    return value;
  }

  /** `filters` and, when given, the one condition that at least one of `anyOf` holds. */
  applyAll(builder: SqlSink, query: Pick<ListQuery, 'filters' | 'anyOf' | 'policy'>): void {
    this.applyFilters(builder, query.filters);
    if (query.policy) this.applyPolicy(builder, query.policy);
    if (!query.anyOf?.length) return;
    const any = new SqlParts();
    this.applyFilters(any, query.anyOf);
    builder.whereRaw(any.wheres.map((w) => `(${w})`).join(' OR '), any.bindings);
  }

  /** One of the lists of filters holds whole (a role's read policies); none given: no row. */
  private applyPolicy(builder: SqlSink, policy: Filter[][]): void {
    if (!policy.length) {
      builder.whereRaw('1 = 0');
      return;
    }
    const alternatives = policy.map((filters) => {
      const parts = new SqlParts();
      this.applyFilters(parts, filters);
      return parts;
    });
    if (alternatives.some((a) => !a.wheres.length)) return;
    builder.whereRaw(alternatives.map((a) => `(${a.wheres.join(' AND ')})`).join(' OR '), alternatives.flatMap((a) => a.bindings));
  }

  applyFilters(builder: SqlSink, filters: Filter[]): void {
    for (const { field, op, value } of filters) {
      const { sql } = this.expression(field);
      const v = this.bind(value);
      switch (op) {
        case 'eq': {
          if (this.types.get(field) === 'array') {
            // A many-relation: the array holds the id (parseListQuery lets eq through only for those).
            const refers = this.dialect.refersTo(field, true, String(value));
            builder.whereRaw(refers.sql, refers.bindings);
            break;
          }
          builder.whereRaw(`${sql} = ?`, [v]);
          const served = this.plainFields.has(field) ? this.dialect.documentEquals(field, value as string | number | boolean) : null;
          if (served) builder.whereRaw(served.sql, served.bindings);
          break;
        }
        case 'ne': builder.whereRaw(`(${sql} IS NULL OR ${sql} <> ?)`, [v]); break;
        case 'gt': builder.whereRaw(`${sql} > ?`, [v]); break;
        case 'gte': builder.whereRaw(`${sql} >= ?`, [v]); break;
        case 'lt': builder.whereRaw(`${sql} < ?`, [v]); break;
        case 'lte': builder.whereRaw(`${sql} <= ?`, [v]); break;
        case 'in': {
          const list = (value as unknown[]).map((x) => this.bind(x));
          builder.whereRaw(`${sql} IN (${list.map(() => '?').join(', ')})`, list);
          break;
        }
        case 'nin': {
          const list = (value as unknown[]).map((x) => this.bind(x));
          builder.whereRaw(`(${sql} IS NULL OR ${sql} NOT IN (${list.map(() => '?').join(', ')}))`, list);
          break;
        }
        case 'like': {
          // `%` is the wildcard; `_` and `\` are taken literally.
          const pattern = String(value).replace(/[\\_]/g, (c) => `\\${c}`);
          builder.whereRaw(`${sql} ${this.dialect.likeOperator} ? ESCAPE '\\'`, [pattern]);
          break;
        }
        case 'contains': {
          const pattern = `%${String(value).replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
          builder.whereRaw(`${sql} ${this.dialect.likeOperator} ? ESCAPE '\\'`, [pattern]);
          break;
        }
        case 'exists': builder.whereRaw(value ? `${sql} IS NOT NULL` : `${sql} IS NULL`); break;
      }
    }
  }

  /** NULLs sort as the smallest value on both engines. */
  applySort(builder: SqlSink, sort: SortKey[]): void {
    for (const { field, desc } of sort) {
      const { sql, nullable } = this.expression(field);
      const nulls = nullable && this.dialect.name === 'postgres' ? (desc ? ' NULLS LAST' : ' NULLS FIRST') : '';
      builder.orderByRaw(`${sql} ${desc ? 'DESC' : 'ASC'}${nulls}`);
    }
  }

  /** Rows strictly after the cursor in the sort order (keyset paging), NULL-aware. */
  applyCursor(builder: SqlSink, sort: SortKey[], cursor: unknown[]): void {
    const exprs = sort.map((s) => this.expression(s.field));
    const sameDirection = sort.every((s) => s.desc === sort[0].desc);
    if (sameDirection && exprs.every((e) => !e.nullable) && cursor.every((v) => v !== null)) {
      // Row values let both engines walk the (tenant_id, created_at, id) index straight to the page.
      builder.whereRaw(`(${exprs.map((e) => e.sql).join(', ')}) ${sort[0].desc ? '<' : '>'} (${exprs.map(() => '?').join(', ')})`, cursor.map((v) => this.bind(v)));
      return;
    }
    const clauses: string[] = [];
    const bindings: unknown[] = [];
    sort.forEach((key, i) => {
      const parts: string[] = [];
      for (let j = 0; j < i; j++) {
        if (cursor[j] === null) parts.push(`${exprs[j].sql} IS NULL`);
        else { parts.push(`${exprs[j].sql} = ?`); bindings.push(this.bind(cursor[j])); }
      }
      const v = cursor[i];
      const e = exprs[i].sql;
      if (!key.desc) {
        if (v === null) parts.push(`${e} IS NOT NULL`);
        else { parts.push(`${e} > ?`); bindings.push(this.bind(v)); }
      } else {
        if (v === null) parts.push('1 = 0');
        else { parts.push(`(${e} < ?${exprs[i].nullable ? ` OR ${e} IS NULL` : ''})`); bindings.push(this.bind(v)); }
      }
      clauses.push(`(${parts.join(' AND ')})`);
    });
    builder.whereRaw(`(${clauses.join(' OR ')})`, bindings);
  }
}
