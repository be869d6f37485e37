import type { RolePolicy, RoleRecord } from '../access/roles.repository.js';
import type { PolicyCheck, RolesService } from '../access/roles.service.js';
import { AppError, ValidationFailed, type ErrorDetail } from '../base/errors.js';
import { ROLE_RANK, type RequestContext } from '../base/request-context.js';
import { SERVER_FIELDS, serverColumn } from '../metadata/schema-definition.js';
import type { CompiledSchema, SchemaRegistry } from '../metadata/schema-registry.js';
import { checkQuery, OPERATORS, typeOfField, type Filter } from './list-query.js';
import type { NarrowedRead } from './relations.js';

/**
 * Custom roles' policies (CONTRACT.md 16.1) as the records service applies them: a policy's `filter` is the list
 * API's filter language (checked and compiled by `checkQuery`, the list's own compiler, into the same `Filter`s that
 * `SqlListQuery` turns into SQL), with `$user.sub` and `$user.email` put in per request.
 */

export type PolicyAction = 'read' | 'create' | 'update' | 'delete';
const USER_VALUES = new Set(['$user.sub', '$user.email']);
/** Callers whose compiled access is kept (then all are forgotten at once). */
const MAX_COMPILED = 10_000;
const ALWAYS_READABLE: readonly string[] = SERVER_FIELDS;

/** One policy as it applies to one schema in one request. */
export interface SchemaPolicy {
  actions: ReadonlySet<PolicyAction>;
  /** Null: every record; an empty list never happens (a filter that cannot hold is `matchesNothing`). */
  filters: Filter[] | null;
  /** The filter names a user value that is null, a field the schema no longer has, or a value of another type. */
  matchesNothing: boolean;
  /** Null: every field. */
  readFields: ReadonlySet<string> | null;
  writeFields: ReadonlySet<string> | null;
}

/** What a caller may do with one schema's records in one request (null from `RecordPolicies.forSchema`: anything). */
export interface SchemaAccess {
  /** Reads are not restricted (a built-in role of the caller reads everything). */
  readAll: boolean;
  /** Some record may be read: else the schema is absent for the caller (404 schema_not_found). */
  readable: boolean;
  /** The read policies' row condition for SQL: any of these lists of filters (null: every record). */
  rows: Filter[][] | null;
  /** The fields some record may show (null: all). */
  everReadable: ReadonlySet<string> | null;
  /** Whether the fields a record shows depend on the policy it matches (else `everReadable` for all). */
  fieldsPerRecord: boolean;
  reads: SchemaPolicy[];
  writeAll: boolean;
  writes: SchemaPolicy[];
}

/** Whether the caller holds custom roles that narrow what it reads or writes. */
export function restricted(rc: RequestContext): boolean {
  const p = rc.principal;
  return Boolean(p && !p.isSuperadmin && p.customRoles && (p.onlyCustomRoles || ROLE_RANK[p.role] < ROLE_RANK.editor));
}

/**
 * The policies of the caller's custom roles, per schema: resolved from the role store (ROLE_KNOWN_FOR_MS) and
 * compiled for each schema the request touches. Also the roles service's policy check.
 */
export class RecordPolicies implements PolicyCheck {
  /**
   * Compiled access by caller (tenant, user values, roles held) and schema version, while the role store answers
   * with the same role objects (it reads them again at most every ROLE_KNOWN_FOR_MS): a list under a policy costs
   * a map lookup, not a compilation.
   */
  private readonly compiled = new Map<string, { roles: RoleRecord[]; bySchema: WeakMap<CompiledSchema, SchemaAccess> }>();

  constructor(
    private readonly roles: RolesService,
    private readonly schemas: SchemaRegistry,
    private readonly manyFields: (schema: CompiledSchema) => ReadonlySet<string>,
  ) {}

  /** Null when the caller's access to the schema is not narrowed by any policy. */
  async forSchema(rc: RequestContext, schema: CompiledSchema): Promise<SchemaAccess | null> {
    if (!restricted(rc)) return null;
    const p = rc.principal!;
    const roles = this.roles.resolveKept(rc.tenantId ?? '', p.customRoles!) ?? (await this.roles.resolve(rc.tenantId ?? '', p.customRoles!));
    const key = [rc.tenantId, p.userId, p.via === 'api_token' ? '' : p.email ?? '', p.onlyCustomRoles ? 1 : 0, ...p.customRoles!].join('\u0000');
    let entry = this.compiled.get(key);
    if (!entry || entry.roles.length !== roles.length || entry.roles.some((r, i) => r !== roles[i])) {
      if (this.compiled.size >= MAX_COMPILED) this.compiled.clear();
      entry = { roles, bySchema: new WeakMap() };
      this.compiled.set(key, entry);
    }
    let access = entry.bySchema.get(schema);
    if (!access) {
      access = this.compile(rc, schema, roles);
      entry.bySchema.set(schema, access);
    }
    return access;
  }

  /**
   * The schema as the caller may see it in `/metadata/schemas` (CONTRACT.md 16.1): null when it can read none of its
   * records, else with only the properties it can read in some record.
   */
  async visibleSchema<T extends { namespace: string; name: string; schema: Record<string, unknown> }>(rc: RequestContext, item: T): Promise<T | null> {
    if (!restricted(rc)) return item;
    const access = await this.forSchema(rc, await this.schemas.resolve(rc, item.namespace, item.name));
    if (!access?.readable) return access ? null : item;
    const readable = access.everReadable;
    if (!readable) return item;
    const properties = Object.fromEntries(Object.entries((item.schema.properties ?? {}) as Record<string, unknown>).filter(([k]) => readable.has(k)));
    const required = Array.isArray(item.schema.required) ? (item.schema.required as string[]).filter((k) => readable.has(k)) : undefined;
    return { ...item, schema: { ...item.schema, properties, ...(required ? { required } : {}) } };
  }

  /** The actions the caller's custom roles allow on any schema (null: no policy narrows the caller): what MCP offers it. */
  async actionsOf(rc: RequestContext): Promise<ReadonlySet<PolicyAction> | null> {
    if (!restricted(rc)) return null;
    const roles = await this.roles.resolve(rc.tenantId ?? '', rc.principal!.customRoles!);
    return new Set(roles.flatMap((r) => r.policies.flatMap((p) => p.actions)));
  }

  /**
   * How an expansion shows the schema's records (CONTRACT.md 16.1): whole (true), none (false: each is null), or
   * those the read policies match (their row condition goes into the statement), each with its readable fields.
   */
  async expansionAccess(rc: RequestContext, namespace: string, name: string): Promise<boolean | NarrowedRead> {
    if (!restricted(rc)) return true;
    const access = await this.forSchema(rc, await this.schemas.resolve(rc, namespace, name));
    if (!access || access.readAll || (access.readable && access.rows === null && access.everReadable === null)) return true;
    if (!access.readable) return false;
    return { rows: access.rows, narrow: (record) => readableRecord(access, record) };
  }

  private compile(rc: RequestContext, schema: CompiledSchema, roles: RoleRecord[]): SchemaAccess {
    const p = rc.principal!;
    const readAll = !p.onlyCustomRoles;
    const policies = roles.flatMap((r) => r.policies).filter((policy) => covers(policy.resource, schema));
    const compiled = policies.map((policy) => this.compilePolicy(rc, schema, policy));
    const reads = compiled.filter((c) => c.actions.has('read'));
    const live = reads.filter((c) => !c.matchesNothing);
    const everyRow = live.some((c) => c.filters === null);
    let everReadable: Set<string> | null = new Set(ALWAYS_READABLE);
    for (const c of live) {
      if (!c.readFields) { everReadable = null; break; }
      for (const f of c.readFields) everReadable.add(f);
    }
    const fieldSets = new Set(live.map((c) => (c.readFields ? [...c.readFields].sort().join(',') : '*')));
    return {
      readAll,
      readable: readAll || reads.length > 0,
      rows: readAll || everyRow ? null : live.map((c) => c.filters!),
      everReadable: readAll ? null : everReadable,
      fieldsPerRecord: !readAll && fieldSets.size > 1,
      reads,
      writeAll: false,
      writes: compiled,
    };
  }

  private compilePolicy(rc: RequestContext, schema: CompiledSchema, policy: RolePolicy): SchemaPolicy {
    const p = rc.principal!;
    const user = { '$user.sub': p.userId, '$user.email': p.via === 'api_token' ? null : p.email } as Record<string, string | null>;
    let filters: Filter[] | null = null;
    let matchesNothing = false;
    if (policy.filter) {
      const entries = filterEntries(policy.filter);
      const put = (v: unknown) => (typeof v === 'string' && USER_VALUES.has(v) ? user[v] : v);
      const list = entries.map((e) => ({ ...e, value: Array.isArray(e.value) ? e.value.map(put) : put(e.value) }));
      if (list.some((e) => e.value === null || (Array.isArray(e.value) && e.value.includes(null)))) matchesNothing = true;
      else {
        try {
          filters = checkQuery({ filter: list }, schema.types, this.manyFields(schema)).filters;
        } catch {
          matchesNothing = true;
        }
      }
    }
    const fields = (names: string[] | undefined) => (names ? new Set([...names, ...ALWAYS_READABLE]) : null);
    return {
      actions: new Set(policy.actions), filters, matchesNothing,
      readFields: fields(policy.fields?.read), writeFields: policy.fields?.write ? new Set(policy.fields.write) : null,
    };
  }

  /** PolicyCheck: a policy's resource, filter and fields against the tenant's schemas; 400 validation_failed naming the path. */
  async check(rc: RequestContext, policies: RolePolicy[]): Promise<void> {
    const issues: ErrorDetail[] = [];
    for (const [i, policy] of policies.entries()) {
      const at = `/policies/${i}`;
      const [ns, name] = policy.resource.split('.');
      const single = policy.resource !== '*' && name !== '*';
      if (!single) {
        if (policy.filter) issues.push({ path: `${at}/filter`, message: 'is allowed only with a single-schema resource (<ns>.<schema>)' });
        if (policy.fields) issues.push({ path: `${at}/fields`, message: 'is allowed only with a single-schema resource (<ns>.<schema>)' });
        if (policy.resource !== '*' && !(await this.schemas.list(rc, ns)).length) issues.push({ path: `${at}/resource`, message: `the tenant has no schema in the namespace ${ns}` });
        continue;
      }
      let schema: CompiledSchema;
      try {
        schema = await this.schemas.resolve(rc, ns, name);
      } catch {
        issues.push({ path: `${at}/resource`, message: `the tenant has no schema ${policy.resource}` });
        continue;
      }
      for (const [key, names] of Object.entries(policy.fields ?? {})) {
        for (const [j, field] of (names ?? []).entries()) {
          if (typeOfField(field, schema.types) === undefined) issues.push({ path: `${at}/fields/${key}/${j}`, message: `${policy.resource} has no field "${field}"` });
          else if (key === 'write' && serverColumn(field)) issues.push({ path: `${at}/fields/${key}/${j}`, message: `"${field}" is managed by the server` });
        }
      }
      issues.push(...this.checkFilter(at, schema, policy.filter ?? {}));
    }
    if (issues.length) throw ValidationFailed('The policies are invalid', issues);
  }

  private checkFilter(at: string, schema: CompiledSchema, filter: Record<string, unknown>): ErrorDetail[] {
    const issues: ErrorDetail[] = [];
    for (const [field, given] of Object.entries(filter)) {
      const path = `${at}/filter/${field}`;
      if (typeOfField(field, schema.types) === undefined) {
        issues.push({ path, message: `${schema.namespace}.${schema.name} has no field "${field}"` });
        continue;
      }
      const ops = isOperatorObject(given) ? Object.entries(given) : [['eq', given] as [string, unknown]];
      for (const [op, value] of ops) {
        const opPath = isOperatorObject(given) ? `${path}/${op}` : path;
        if (!(OPERATORS as readonly string[]).includes(op)) {
          issues.push({ path: opPath, message: `unknown operator "${op}"; use one of ${OPERATORS.join(', ')}` });
          continue;
        }
        if ((op === 'in' || op === 'nin') !== Array.isArray(value)) {
          issues.push({ path: opPath, message: op === 'in' || op === 'nin' ? 'must be an array' : 'must be a single value' });
          continue;
        }
        // A user value stands for any single value; the others are checked as the list checks a filter's.
        const typed = Array.isArray(value) ? value.filter((v) => !USER_VALUES.has(v as string)) : USER_VALUES.has(value as string) ? null : value;
        if (typed === null || (Array.isArray(typed) && !typed.length)) continue;
        try {
          checkQuery({ filter: [{ field, op: op as Filter['op'], value: typed }] }, schema.types, this.manyFields(schema));
        } catch (err) {
          issues.push({ path: opPath, message: err instanceof AppError ? err.message : 'is not a value of the field\'s type' });
        }
      }
    }
    return issues;
  }
}

/** Whether a policy's resource (`*`, `<ns>.*`, `<ns>.<schema>`) covers the schema. */
function covers(resource: string, schema: CompiledSchema): boolean {
  return resource === '*' || resource === `${schema.namespace}.*` || resource === `${schema.namespace}.${schema.name}`;
}

function isOperatorObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A policy's `filter` object as the list query's filter entries. */
function filterEntries(filter: Record<string, unknown>): Array<{ field: string; op: Filter['op']; value: unknown }> {
  return Object.entries(filter).flatMap(([field, given]) => (isOperatorObject(given)
    ? Object.entries(given).map(([op, value]) => ({ field, op: op as Filter['op'], value }))
    : [{ field, op: 'eq' as const, value: given }]));
}

/**
 * Whether a record meets checked filters, with the meaning SqlListQuery gives them in SQL (a null value meets only
 * `ne`, `nin` and `exists: false`): for one record in memory (a read by id, a write's before and after).
 */
export function meets(record: Record<string, unknown>, filters: readonly Filter[]): boolean {
  return filters.every(({ field, op, value }) => {
    const v = record[field];
    const absent = v === undefined || v === null;
    switch (op) {
      case 'eq': return Array.isArray(v) ? v.includes(value) : v === value;
      case 'ne': return absent || v !== value;
      case 'gt': return !absent && typeof v === typeof value && (v as number) > (value as number);
      case 'gte': return !absent && typeof v === typeof value && (v as number) >= (value as number);
      case 'lt': return !absent && typeof v === typeof value && (v as number) < (value as number);
      case 'lte': return !absent && typeof v === typeof value && (v as number) <= (value as number);
      case 'in': return !absent && (value as unknown[]).includes(v);
      case 'nin': return absent || !(value as unknown[]).includes(v);
      case 'like': return typeof v === 'string' && likePattern(String(value)).test(v);
      case 'contains': return typeof v === 'string' && v.toLowerCase().includes(String(value).toLowerCase());
      case 'exists': return value ? !absent : absent;
    }
  });
}

function likePattern(pattern: string): RegExp {
  return new RegExp(`^${pattern.split('%').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`, 'is');
}

/** Whether a record is one the policy applies to. */
export function policyMatches(policy: SchemaPolicy, record: Record<string, unknown>): boolean {
  return !policy.matchesNothing && (policy.filters === null || meets(record, policy.filters));
}

/**
 * Whether every record the caller may read shows all its fields: reads are not restricted, or every policy that
 * lets it read shows every field (then which records it reads is the SQL's row condition, `rows`, alone).
 */
export function showsWholeRecords(access: SchemaAccess): boolean {
  return access.readAll || (access.everReadable === null && !access.fieldsPerRecord);
}

/** The record as the caller may read it: null when no read policy matches it, else its readable fields only. */
export function readableRecord<T extends Record<string, unknown>>(access: SchemaAccess, record: T): T | null {
  if (access.readAll) return record;
  const matched = access.reads.filter((c) => policyMatches(c, record));
  if (!matched.length) return null;
  if (matched.some((c) => c.readFields === null)) return record;
  const out: Record<string, unknown> = {};
  for (const c of matched) for (const f of c.readFields!) if (Object.hasOwn(record, f)) out[f] = record[f];
  return out as T;
}

/**
 * Refuses a write the policies do not allow (403 forbidden naming the path): one policy with the action that matches
 * the record before (`before`, update and delete) and after (`after`, create and update) and lists every field the
 * body sets (`keys`) in its `fields.write`.
 */
export function assertMayWrite(
  access: SchemaAccess, action: Exclude<PolicyAction, 'read'>, before: Record<string, unknown> | null, after: Record<string, unknown> | null, keys: readonly string[],
): void {
  const allowed = access.writes.filter((c) => c.actions.has(action));
  const label = `${action} this record`;
  if (!allowed.length) throw forbidden(`Your role may not ${label}`, '/');
  const fieldsOk = allowed.filter((c) => !c.writeFields || keys.every((k) => c.writeFields!.has(k)));
  if (!fieldsOk.length) {
    const outside = keys.find((k) => !allowed[0].writeFields!.has(k))!;
    throw forbidden(`Your role may not set "${outside}"`, `/${outside}`);
  }
  const ok = fieldsOk.some((c) => (!before || policyMatches(c, before)) && (!after || policyMatches(c, after)));
  if (!ok) throw forbidden(`Your role may not ${label}`, '/');
}

/**
 * On create, the fields the first create policy that allows the body's fields fixes with an equality, filled
 * from it where the body leaves them out (CONTRACT.md 16.1).
 */
export function fillFixedFields(access: SchemaAccess, body: Record<string, unknown>): Record<string, unknown> {
  const keys = Object.keys(body);
  const policy = access.writes.find((c) => c.actions.has('create') && !c.matchesNothing && (!c.writeFields || keys.every((k) => c.writeFields!.has(k))));
  if (!policy?.filters) return body;
  const filled = { ...body };
  for (const f of policy.filters) if (f.op === 'eq' && !Object.hasOwn(filled, f.field) && !serverColumn(f.field)) filled[f.field] = f.value;
  return filled;
}

function forbidden(message: string, path: string): AppError {
  return new AppError('forbidden', 403, message, [{ path, message }]);
}

/** 400 invalid_filter unless every named field is one the caller can read in some record. */
export function assertReadableFields(access: SchemaAccess, names: Iterable<string>): void {
  if (!access.everReadable) return;
  for (const name of names) {
    if (!access.everReadable.has(name)) throw new AppError('invalid_filter', 400, `Cannot use "${name.slice(0, 64)}": your role cannot read it`);
  }
}
