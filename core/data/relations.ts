import { SAFE_FIELD } from '../db/dialects/dialect.js';
import { Conflict, InvalidFilter, InvalidSchema, ValidationFailed, type ErrorDetail } from '../base/errors.js';
import type { RequestContext } from '../base/request-context.js';
import type { Filter } from './list-query.js';
import type { RegisteredSchema } from '../metadata/schema-definition.js';
import type { CompiledSchema, SchemaRegistry } from '../metadata/schema-registry.js';
import type { SchemaChangeGuard } from './schema-evolution.js';
import { takeMembers } from './json-members.js';
import { isPlainObject } from './merge-patch.js';
import { withoutLocalesJson } from './locales.js';
import { documentJson, recordJson, recordJsonOf, type DataRecord, type EmbeddedExpansion, type ListedRow } from './records.repository.js';
import { RelationsRepository } from './relations.repository.js';

export type OnDelete = 'restrict' | 'set_null' | 'cascade';

/** A property that refers to records of another schema (CONTRACT.md 12.2). */
export interface Relation {
  field: string;
  /** `<ns>.<name>` of the referenced schema. */
  target: string;
  many: boolean;
  onDelete: OnDelete;
}

/** A relation seen from the referenced schema: records of `source` refer to it through `field`. */
export interface BackReference {
  source: string;
  field: string;
  many: boolean;
  onDelete: OnDelete;
}

export const EXPAND_LIMITS = { maxPaths: 5, maxDepth: 2 };
const ON_DELETE: readonly OnDelete[] = ['restrict', 'set_null', 'cascade'];
/** Records named in a 409 over references, at most. */
const MAX_NAMED = 20;
/** Stored records checked per batch when a new version adds a relation. */
const CHECK_BATCH = 1000;

/** Relations by JSON Schema document: a registered schema's document is never changed, only replaced. */
const declared = new WeakMap<object, Relation[]>();

/**
 * The relations a JSON Schema declares: `x-ref` on a top-level string property, or on an array of strings
 * (on the array or on its `items`: both mean a many-relation).
 */
export function relationsOf(schema: Record<string, any>): Relation[] {
  let relations = declared.get(schema);
  if (!relations) declared.set(schema, (relations = parseRelations(schema)));
  return relations;
}

const RELATION_KEYWORDS = ['x-ref', 'x-on-delete'] as const;

function parseRelations(schema: Record<string, any>): Relation[] {
  const relations: Relation[] = [];
  for (const [field, prop] of Object.entries((schema.properties ?? {}) as Record<string, Record<string, any>>)) {
    if (!isPlainObject(prop)) continue;
    const items: Record<string, any> = isPlainObject(prop.items) ? prop.items : {};
    // Declared on the array or on its items; the two places, when both are used, must agree.
    const [target, onDelete = 'restrict'] = RELATION_KEYWORDS.map((keyword) => {
      if (prop[keyword] !== undefined && items[keyword] !== undefined && prop[keyword] !== items[keyword]) {
        throw InvalidSchema(`"${keyword}" of ${field} and of its items differ; declare it once`);
      }
      return prop[keyword] ?? items[keyword];
    });
    if (target === undefined) continue;
    if (typeof target !== 'string' || !/^[a-z][a-z0-9_]{0,39}\.[a-z][a-z0-9_]{0,39}$/.test(target)) {
      throw InvalidSchema(`"x-ref" of ${field} must name a schema as "<namespace>.<name>"`);
    }
    if (!ON_DELETE.includes(onDelete)) throw InvalidSchema(`"x-on-delete" of ${field} must be one of ${ON_DELETE.join(', ')}`);
    const types = (t: unknown) => (Array.isArray(t) ? t : [t]).filter((x) => x !== 'null');
    const one = types(prop.type).length === 1 && types(prop.type)[0] === 'string' && items['x-ref'] === undefined;
    const many = types(prop.type).length === 1 && types(prop.type)[0] === 'array' && types(items.type)[0] === 'string';
    if (!one && !many) throw InvalidSchema(`"x-ref" of ${field} needs a string property or an array of strings`);
    relations.push({ field, target, many, onDelete });
  }
  for (const r of relations) {
    if (r.onDelete === 'set_null' && !r.many && (schema.required ?? []).includes(r.field)) {
      throw InvalidSchema(`${r.field} is required, so "x-on-delete": "set_null" cannot clear it`);
    }
  }
  return relations;
}

/**
 * What relationsOf lets pass in stored schemas but a new registration or version may not declare: relation
 * keywords where nothing reads them, `x-on-delete` without `x-ref`, and `set_null` on a many-relation that
 * must keep a number of items.
 */
function declarationIssue(schema: Record<string, any>): string | null {
  const stray = strayRelationKeyword(schema, '', 0);
  if (stray) return `"x-ref" and "x-on-delete" are read on a top-level property or its items only, not at ${stray.slice(0, 120)}`;
  const relations = relationsOf(schema);
  for (const [field, prop] of Object.entries((schema.properties ?? {}) as Record<string, any>)) {
    const r = relations.find((x) => x.field === field);
    if (!r && isPlainObject(prop) && (prop['x-on-delete'] !== undefined || (isPlainObject(prop.items) && prop.items['x-on-delete'] !== undefined))) {
      return `"x-on-delete" of ${field} needs an "x-ref" beside it`;
    }
    if (r?.many && r.onDelete === 'set_null' && Number(prop.minItems) > 0) {
      return `${field} needs at least ${prop.minItems} items, so "x-on-delete": "set_null" cannot take an id out of it`;
    }
  }
  return null;
}

/** Keywords whose value is a subschema, a list of subschemas, or a map of them (JSON Schema 2020-12). */
const SUBSCHEMA = new Set(['additionalProperties', 'items', 'contains', 'not', 'if', 'then', 'else', 'propertyNames', 'unevaluatedItems', 'unevaluatedProperties']);
const SUBSCHEMA_LISTS = new Set(['prefixItems', 'allOf', 'anyOf', 'oneOf']);
const SUBSCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);

/**
 * Relation keywords anywhere but on a top-level property or its items (nested objects, `$defs`, `allOf`,
 * items of items): nothing would read them, so they are refused instead of ignored.
 */
function strayRelationKeyword(schema: unknown, path: string, depth: number): string | null {
  if (!isPlainObject(schema)) return null;
  // Root: 0; a top-level property: 1; its items: 2 (the only places relations are read); anything else: 3.
  if ((depth === 0 || depth === 3) && RELATION_KEYWORDS.some((k) => schema[k] !== undefined)) return path || '/';
  for (const [keyword, value] of Object.entries(schema)) {
    const nested: Array<[string, unknown]> = SUBSCHEMA.has(keyword) ? [[`${path}/${keyword}`, value]]
      : SUBSCHEMA_LISTS.has(keyword) && Array.isArray(value) ? value.map((v, i) => [`${path}/${keyword}/${i}`, v])
        : SUBSCHEMA_MAPS.has(keyword) && isPlainObject(value) ? Object.entries(value).map(([k, v]) => [`${path}/${keyword}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`, v])
          : [];
    for (const [at, sub] of nested) {
      // Only a top-level property (root /properties/<p>) and its items keep the count that allows them.
      const next = depth === 0 && keyword === 'properties' ? 1 : depth === 1 && keyword === 'items' ? 2 : 3;
      const found = strayRelationKeyword(sub, at, next);
      if (found) return found;
    }
  }
  return null;
}

/**
 * How the caller's policies narrow its reads of a schema's records (CONTRACT.md 16.1): `rows`, the read policies'
 * row condition (any of these lists of filters; null: every record), compiled into the statement that reads the
 * referenced records; `narrow`, a readable record with only the fields the caller may read in it.
 */
export interface NarrowedRead {
  rows: Filter[][] | null;
  narrow(record: Record<string, unknown>): Record<string, unknown> | null;
}

/**
 * Whether the caller may read the records of a schema (the data API's read check, as a function): none (false),
 * all of them whole (true), or some of them, narrowed by its policies.
 */
export type ReadAccess = (rc: RequestContext, schema: RegisteredSchema) => Promise<boolean | NarrowedRead>;

/** The rows a policy lets the caller read, each with its readable fields only. */
function narrowRows(rows: readonly ListedRow[], access: NarrowedRead): ListedRow[] {
  const out: ListedRow[] = [];
  for (const row of rows) {
    const data = JSON.parse(documentJson(row)) as Record<string, unknown>;
    const shown = access.narrow({ ...data, id: row.id, createdAt: row.created_at, updatedAt: row.updated_at, version: row.version });
    if (!shown) continue;
    const { id: _id, createdAt: _c, updatedAt: _u, version: _v, ...kept } = shown;
    out.push({ ...row, data: kept });
  }
  return out;
}

/**
 * Expansion paths as a tree: `expand=category.parent,tags` is { category: { parent: {} }, tags: {} }, each
 * field with the relation and the schema it refers to, as parseExpand resolved them for the request.
 */
export type ExpandTree = Map<string, ExpandStep>;

export interface ExpandStep {
  relation: Relation;
  target: CompiledSchema;
  next: ExpandTree;
}

/** A relation field's value as JSON text, with the embedded records' texts in place of their ids (null: not found or unreadable). */
function embed(value: unknown, found: ReadonlyMap<string, string>): string {
  if (typeof value === 'string') return found.get(value) ?? 'null';
  if (!Array.isArray(value)) return JSON.stringify(value);
  // Appended, not mapped and joined: a join copies the embedded records' texts into a string of its own per
  // record, which the page's join then copies again.
  let text = '[';
  for (let i = 0; i < value.length; i++) {
    const v: unknown = value[i];
    if (i > 0) text += ',';
    text += typeof v === 'string' ? found.get(v) ?? 'null' : JSON.stringify(v);
  }
  return `${text}]`;
}

/** Where a record holds its `i`-th id of a relation: `/category`, or `/tags/2` on a many-relation. */
function referencePath(r: Relation, i: number): string {
  return r.many ? `/${r.field}/${i}` : `/${r.field}`;
}

function dangling(r: Relation, id: string): string {
  return `refers to ${r.target} "${id.slice(0, 40)}", which does not exist`;
}

/** The ids a record holds in a relation field with their places (an array's nulls keep theirs). */
function placedIds(value: unknown): Array<{ id: string; i: number }> {
  if (typeof value === 'string') return [{ id: value, i: 0 }];
  if (!Array.isArray(value)) return [];
  const placed: Array<{ id: string; i: number }> = [];
  value.forEach((v, i) => {
    if (typeof v === 'string') placed.push({ id: v, i });
  });
  return placed;
}

/** Ids a record holds in a relation field. */
function idsIn(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === 'string');
  return [];
}

/**
 * Relations between schemas: references checked in the write transaction, on-delete behaviour, expansion
 * in a fixed number of queries, and what the schema endpoint shows. The record service calls it; schema
 * changes and deletions consult it as a guard.
 */
export class Relations implements SchemaChangeGuard {
  readonly repository: RelationsRepository;

  constructor(repository: RelationsRepository, private readonly schemas: SchemaRegistry, private readonly canRead?: ReadAccess) {
    this.repository = repository;
  }

  /** The document's x-ref declarations are well formed (InvalidSchema otherwise). */
  checkDocument(schema: Record<string, unknown>): void {
    const issue = declarationIssue(schema);
    if (issue) throw InvalidSchema(issue);
  }

  /** A new version's relations name schemas the tenant sees. */
  async checkDefinition(rc: RequestContext, next: RegisteredSchema): Promise<void> {
    for (const r of relationsOf(next.schema)) {
      if (r.target !== `${next.namespace}.${next.name}`) await this.target(rc, r, next);
    }
  }

  /** A schema that another schema refers to may not be deleted. */
  async checkDeletion(rc: RequestContext, s: RegisteredSchema): Promise<void> {
    const refs = (await this.referencedBy(rc, s)).filter((b) => b.source !== `${s.namespace}.${s.name}`);
    if (refs.length) {
      throw Conflict(`${s.namespace}.${s.name} is referenced by ${refs.map((b) => `${b.source}.${b.field}`).join(', ')}; remove those relations first`);
    }
  }

  /** Stored records of a new version's new relations refer to existing records. */
  async checkRecords(rc: RequestContext, next: RegisteredSchema, previous: RegisteredSchema): Promise<ErrorDetail[]> {
    const before = relationsOf(previous.schema);
    const added = relationsOf(next.schema).filter((r) => !before.some((b) => b.field === r.field && b.target === r.target));
    const details: ErrorDetail[] = [];
    for (const r of added) {
      const target = await this.target(rc, r, next);
      let after: [string, string] = ['', ''];
      for (;;) {
        const batch = await this.repository.withField(rc, previous, r.field, after, CHECK_BATCH);
        const byTenant = new Map<string, typeof batch>();
        for (const row of batch) {
          const rows = byTenant.get(row.tenantId);
          if (rows) rows.push(row);
          else byTenant.set(row.tenantId, [row]);
        }
        for (const [tenantId, rows] of byTenant) {
          const found = await this.repository.existing({ ...rc, tenantId }, target, [...new Set(rows.flatMap((row) => idsIn(row.value)))]);
          for (const row of rows) {
            for (const { id, i } of placedIds(row.value)) {
              if (!found.has(id)) details.push({ id: row.id, path: referencePath(r, i), message: dangling(r, id) });
            }
          }
        }
        if (details.length >= MAX_NAMED || batch.length < CHECK_BATCH) break;
        after = [batch[batch.length - 1].tenantId, batch[batch.length - 1].id];
      }
    }
    return details.slice(0, MAX_NAMED);
  }

  /** Every reference a record's document makes exists in the same tenant (400 validation_failed naming the path). */
  async checkReferences(rc: RequestContext, schema: CompiledSchema, data: Record<string, unknown>, previous: Record<string, unknown> | null): Promise<void> {
    const [issues] = await this.referenceIssues(rc, schema, [{ data, previous }]);
    if (issues.length) throw ValidationFailed('The record refers to records that do not exist', issues);
  }

  /**
   * The references of many writes of one schema checked together, one query per relation whatever their
   * number (bulk writes): for each write, in order, its dangling references (empty when none).
   */
  async referenceIssues(
    rc: RequestContext, schema: CompiledSchema, writes: Array<{ data: Record<string, unknown>; previous: Record<string, unknown> | null }>,
  ): Promise<ErrorDetail[][]> {
    const issues = writes.map((): ErrorDetail[] => []);
    for (const r of relationsOf(schema.schema)) {
      // Per write, the ids it names that its previous version did not (those are checked already).
      const named = writes.map(({ data, previous }) => {
        const known = new Set(previous ? idsIn(previous[r.field]) : []);
        return placedIds(data[r.field]).filter(({ id }) => !known.has(id));
      });
      const fresh = [...new Set(named.flatMap((ids) => ids.map(({ id }) => id)))];
      if (!fresh.length) continue;
      const found = await this.repository.existing(rc, await this.target(rc, r, schema), fresh);
      named.forEach((ids, n) => {
        for (const { id, i } of ids) {
          if (!found.has(id)) issues[n].push({ path: referencePath(r, i), message: dangling(r, id) });
        }
      });
    }
    return issues;
  }

  async referencedBy(rc: RequestContext, s: Pick<RegisteredSchema, 'namespace' | 'name'>): Promise<BackReference[]> {
    const name = `${s.namespace}.${s.name}`;
    const found: BackReference[] = [];
    for (const other of await this.schemas.list(rc)) {
      for (const r of safeRelations(other.schema)) {
        if (r.target === name) found.push({ source: `${other.namespace}.${other.name}`, field: r.field, many: r.many, onDelete: r.onDelete });
      }
    }
    return found;
  }

  /**
   * What deleting record `id` of `s` does to the records that refer to it: throws 409 conflict for a
   * `restrict` relation that has some (naming them); returns the records to clear (`set_null`) and to
   * delete (`cascade`). Called inside the deleting transaction, after the record is gone.
   */
  async onDelete(rc: RequestContext, s: CompiledSchema, id: string): Promise<Array<{ schema: CompiledSchema; relation: BackReference; ids: string[] }>> {
    const work: Array<{ schema: CompiledSchema; relation: BackReference; ids: string[] }> = [];
    for (const ref of await this.referencedBy(rc, s)) {
      const [ns, name] = ref.source.split('.');
      const source = await this.schemas.resolve(rc, ns, name);
      const limit = ref.onDelete === 'restrict' ? MAX_NAMED : Number.MAX_SAFE_INTEGER;
      const ids = (await this.repository.referring(rc, source, ref.field, ref.many, id, limit)).filter((x) => !(source.id === s.id && x === id));
      if (!ids.length) continue;
      if (ref.onDelete === 'restrict') {
        throw Conflict(`The record is referenced by ${ref.source} records through ${ref.field}`, ids.map((rid) => ({ id: rid, path: `/${ref.field}`, message: `refers to ${s.namespace}.${s.name} "${id}"` })));
      }
      work.push({ schema: source, relation: ref, ids });
    }
    return work;
  }

  /** Parses `expand=a,b.c` against the schema: at most 2 levels and 5 paths, each step a relation (else 400 invalid_filter). */
  async parseExpand(rc: RequestContext, schema: CompiledSchema, raw: unknown): Promise<ExpandTree | null> {
    if (raw === undefined || raw === '') return null;
    if (typeof raw !== 'string') throw InvalidFilter('expand was given more than once');
    const paths = raw.split(',').map((p) => p.trim()).filter(Boolean).map((p) => p.split('.'));
    if (paths.length > EXPAND_LIMITS.maxPaths) throw InvalidFilter(`At most ${EXPAND_LIMITS.maxPaths} expand paths are allowed`);
    const tree: ExpandTree = new Map();
    for (const path of paths) {
      if (path.length > EXPAND_LIMITS.maxDepth) throw InvalidFilter(`expand goes at most ${EXPAND_LIMITS.maxDepth} levels deep, not "${path.join('.').slice(0, 80)}"`);
      let at: CompiledSchema = schema;
      let level = tree;
      for (const field of path) {
        let step = level.get(field);
        if (!step) {
          const r = relationsOf(at.schema).find((x) => x.field === field);
          // A relation whose name SQL cannot carry is never expanded (the stored schema predates the check).
          if (!r || !SAFE_FIELD.test(field)) throw InvalidFilter(`Cannot expand "${field.slice(0, 64)}": it is not a relation of ${at.namespace}.${at.name}`);
          level.set(field, (step = { relation: r, target: await this.target(rc, r, at), next: new Map() }));
        }
        at = step.target;
        level = step.next;
      }
    }
    return tree.size ? tree : null;
  }

  /**
   * The expansions of `tree` whose first level a list reads in its own statement, with no query of its
   * own (RecordsRepository.list's `embeds`, on engines where that pays): each top-level path whose target
   * the caller may read (an unreadable one needs no query: its records expand to null).
   */
  async embeddable(rc: RequestContext, tree: ExpandTree): Promise<EmbeddedExpansion[]> {
    const embeds: EmbeddedExpansion[] = [];
    if (!this.repository.embedsInList) return embeds;
    for (const [field, { relation, target }] of tree) {
      if ((await this.readable(rc, target)) === true) embeds.push({ field, table: target.tableName, many: relation.many });
    }
    return embeds;
  }

  /**
   * The records of `rows` as JSON text with the referenced records in place of their ids, in one query per
   * distinct path prefix whatever the number of records (none for a first level whose records `read`
   * holds already, by field: see `embeddable`). Only a document that holds an expanded field is parsed
   * (to take the ids out); the referenced records' documents go from the database into the text as they
   * are, except where a deeper level replaces their own ids. A referenced record that does not exist, or
   * whose schema the caller may not read (ReadAccess: its licensed module is off for the tenant, or the
   * caller's role is below the read role), becomes null.
   */
  async expandJson(
    rc: RequestContext, rows: ReadonlyArray<ListedRow>, tree: ExpandTree, read: ReadonlyMap<string, readonly ListedRow[]> = new Map(),
  ): Promise<string[]> {
    const fields = [...tree.keys()];
    const quoted = fields.map((field) => JSON.stringify(field));
    const taken = rows.map((row) => takeMembers(withoutLocalesJson(documentJson(row)), fields, quoted));
    const embedded: Array<Map<string, string>> = [];
    for (const [i, field] of fields.entries()) {
      const { target, next: deeper } = tree.get(field)!;
      // Records read with the page are of a target the caller may read whole (see embeddable).
      let found = read.get(field);
      if (!found) {
        const access = await this.readable(rc, target);
        if (!access) {
          embedded.push(new Map());
          continue;
        }
        const ids = new Set<string>();
        for (const cut of taken) if (cut) for (const id of idsIn(cut.values[i])) ids.add(id);
        // Under a policy, the statement reads only the records the caller may read; each shows its readable fields.
        found = await this.repository.byIds(rc, target, [...ids], access === true ? null : access.rows);
        if (access !== true) found = narrowRows(found, access);
      }
      const texts = deeper.size ? await this.expandJson(rc, found, deeper) : found.map((row) => recordJson(row));
      embedded.push(new Map(found.map((row, k) => [row.id, flat(texts[k])])));
    }
    const keys = quoted.map((key) => `,${key}:`);
    return rows.map((row, n) => {
      const cut = taken[n];
      if (!cut) return recordJson(row);
      let extra = '';
      for (let i = 0; i < keys.length; i++) if (cut.values[i] !== undefined) extra += keys[i] + embed(cut.values[i], embedded[i]);
      return recordJsonOf(row, cut.members, extra);
    });
  }

  /** `expandJson` for records already read as objects (a single read): the same records, parsed. */
  async expandRecords(rc: RequestContext, records: readonly DataRecord[], tree: ExpandTree): Promise<DataRecord[]> {
    const rows = records.map(({ id, createdAt, updatedAt, version, ...data }) => ({ id, created_at: createdAt, updated_at: updatedAt, version, data }));
    return (await this.expandJson(rc, rows, tree)).map((text) => JSON.parse(text) as DataRecord);
  }

  /** Whether and how the caller may read `target`'s records (see ReadAccess); true when no check is configured. */
  private readable(rc: RequestContext, target: CompiledSchema): Promise<boolean | NarrowedRead> | boolean {
    return this.canRead ? this.canRead(rc, target) : true;
  }

  /** Whether a field is a many-relation (filter[a]=<id> then means "contains"). */
  manyFields(schema: RegisteredSchema): Set<string> {
    return new Set(safeRelations(schema.schema).filter((r) => r.many).map((r) => r.field));
  }

  private async target(rc: RequestContext, r: Relation, from: Pick<RegisteredSchema, 'namespace' | 'name'>): Promise<CompiledSchema> {
    const [ns, name] = r.target.split('.');
    try {
      return await this.schemas.resolve(rc, ns, name);
    } catch (err) {
      if ((err as { code?: string }).code === 'schema_not_found') {
        throw InvalidSchema(`${from.namespace}.${from.name}.${r.field} refers to ${r.target}, which is not a schema you can see`);
      }
      throw err;
    }
  }
}

/** Relations of a stored schema; a schema stored before relations existed may declare them loosely. */
export function safeRelations(schema: Record<string, any>): Relation[] {
  try {
    return relationsOf(schema);
  } catch {
    return [];
  }
}

/**
 * `text` as one sequential string. A text built by `+` and templates is a tree of its pieces, which V8 walks
 * piece by piece each time it copies it: an embedded record is copied once per reference (a list's page
 * refers to the same few records many times), then with the page. Slicing flattens the tree once (V8
 * flattens a string before it slices it), and each reference is then one piece.
 */
function flat(text: string): string {
  return ` ${text}`.slice(1);
}
