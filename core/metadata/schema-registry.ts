import type { ValidateFunction } from 'ajv';
import { LRUCache } from 'lru-cache';
import type { Database } from '../db/database.js';
import { SAFE_FIELD } from '../db/dialects/dialect.js';
import { nowIso } from '../base/ids.js';
import { rememberUniqueIndex } from '../db/translate-error.js';
import type { RequestContext } from '../base/request-context.js';
import { InvalidIdentifier, InvalidSchema, ReservedNamespace, SchemaExists, SchemaNotFound, ValidationFailed } from '../base/errors.js';
import { createAjv } from '../base/ajv.js';
import {
  fieldTypes, IDENTIFIER, isScalar, plainScalarFields, SERVER_FIELDS, type FieldType, type NamespaceDeclaration, type RegisteredSchema, type SchemaChangeGuard, type SchemaInput,
} from './schema-definition.js';
import { SchemasRepository } from './schemas.repository.js';
import { SchemaGates } from './schema-gates.js';
import { checkDisplayKeywords } from './display-keywords.js';
import { checkWorkflowOption, type WorkflowOption } from './workflow-option.js';
import { checkLocalizedKeyword, localizedFields } from './localized-fields.js';

/** Change feed topic: a schema changed or was deleted (key: its cache key); every process forgets it. */
const SCHEMA_TOPIC = 'schema';
const TOKEN_READ_EVERY_MS = 10;

/** A registered schema with its compiled validator and field types. */
export interface CompiledSchema extends RegisteredSchema {
  validate: ValidateFunction;
  types: Map<string, FieldType>;
  /**
   * Fields of exactly one scalar type (see plainScalarFields) that no declared index or unique set leads:
   * equality on them may also be asked of the document index. A field that leads one has its own
   * expression index; asking the document index as well would add JSON work per row to counts and
   * mislead the planner (its estimate of the two conditions together is far too low).
   */
  plainFields: Set<string>;
  /** The localised top-level fields (CONTRACT.md 17.2), empty unless the workflow takes locales. */
  localized: readonly string[];
}

interface NamespaceOwner {
  pack: string;
  open: boolean;
  licensed: string | null;
  onRegister?: (input: SchemaInput) => SchemaInput;
  sealed: Set<string>;
}

export const SCHEMA_LIMITS = {
  /** Serialised JSON Schema size. */
  maxBytes: 128 * 1024,
  /** Nesting depth of the JSON Schema document. */
  maxDepth: 32,
  maxIndexes: 16,
  maxFieldsPerIndex: 4,
  /** `uniqueItems` over arbitrary values compares every pair: it needs a `maxItems` at most this large. */
  maxUniqueItems: 1000,
};

/** Compiled schemas kept in memory at most (the least recently used go first); see scripts/bench/schema-cache.ts. */
export const SCHEMA_CACHE_MAX = 2_000;

/**
 * The schema registry: platform schemas from packs and tenant schemas from integrators, each compiled
 * once (ajv 2020-12) and cached by scope, namespace, name and version, up to `cacheMax` schemas (LRU: with
 * many tenants each registering schemas, memory stays bounded; an evicted schema is read and compiled
 * again on its next use). A cache miss reads the database, so a schema registered through another process
 * is usable at once.
 */
export class SchemaRegistry {
  readonly repository: SchemasRepository;
  private ajv = createAjv({ useDefaults: true });
  /** Schemas the current ajv instance compiled (see compile). */
  private compiledByAjv = 0;
  private readonly cache: LRUCache<string, CompiledSchema>;
  private readonly namespaces = new Map<string, NamespaceOwner>();
  /** Checks of other modules on new definitions, changes and deletions (relations). */
  readonly guards: SchemaChangeGuard[] = [];
  /** Writes wait at a schema's gate while it migrates (CONTRACT.md 12.1). */
  readonly gates: SchemaGates;
  /** Grows with every change heard, so that a read that raced a change is not cached. */
  private generation = 0;
  private seenToken: number | null = null;
  private tokenReadAt = 0;

  /** `writeWaitMs`: how long a write waits for a migration of its schema (SCHEMA_WRITE_WAIT_MS; SchemaGates). */
  constructor(private readonly db: Database, private readonly cacheMax = SCHEMA_CACHE_MAX, writeWaitMs?: number) {
    this.repository = new SchemasRepository(db);
    this.cache = new LRUCache({ max: cacheMax });
    this.gates = new SchemaGates(db.changes, writeWaitMs);
    db.changes.subscribe(SCHEMA_TOPIC, (changed) => {
      this.generation++;
      if (changed === null) this.cache.clear();
      else this.cache.delete(changed);
    });
  }

  guard(guard: SchemaChangeGuard): void {
    this.guards.push(guard);
  }

  /** The cache (and gate) key of a schema. */
  keyOf(s: Pick<RegisteredSchema, 'tenantId' | 'namespace' | 'name'>): string {
    return key(s.tenantId, s.namespace, s.name);
  }

  /** Tells every process that the schema changed or is gone, once rc's transaction commits. */
  async changed(rc: RequestContext, s: RegisteredSchema): Promise<void> {
    await this.db.changes.notify(rc, SCHEMA_TOPIC, this.keyOf(s));
  }

  /**
   * Runs a write of a record of ns.name with the schema current once the write may go: while the schema
   * migrates the write waits (at most 30 s, then 503 unavailable), then validates against the new version.
   * Inside a transaction the gate is held until the transaction ends, so a migration waits for the whole
   * transaction (none of its writes commits after the switch having validated against the old version), and
   * the transaction's further writes of the schema pass at once (they would otherwise wait for a migration
   * that waits for them).
   */
  async writing<T>(rc: RequestContext, namespace: string, name: string, write: (schema: CompiledSchema) => Promise<T>): Promise<T> {
    let schema = await this.resolve(rc, namespace, name);
    const gate = this.keyOf(schema);
    const held = rc.trx && rc.whenDone ? rc.heldGates : undefined;
    if (held?.has(gate)) return write(schema);
    if (await this.gates.enter(gate)) {
      try {
        schema = await this.resolve(rc, namespace, name);
      } catch (err) {
        this.gates.leave(gate);
        throw err;
      }
    }
    if (held) {
      held.add(gate);
      rc.whenDone!(() => this.gates.leave(gate));
      return write(schema);
    }
    try {
      return await write(schema);
    } finally {
      this.gates.leave(gate);
    }
  }

  /** The schema a tenant sees under ns.name, read from the database (not the cache); 404 schema_not_found. */
  async resolveStored(rc: RequestContext, namespace: string, name: string): Promise<RegisteredSchema> {
    assertIdentifier('namespace', namespace);
    assertIdentifier('schema', name);
    const found = await this.repository.findVisible(rc, rc.tenantId, namespace, name);
    if (!found) throw SchemaNotFound({ ns: namespace, name });
    return found;
  }

  /** The registration of a tenant's new schema version, checked as at registration (compiles, indexes). */
  prepare(input: SchemaInput): { input: SchemaInput; validate: ValidateFunction; indexes: string[][]; unique: string[][]; workflow: WorkflowOption | null } {
    const owner = this.namespaces.get(input.namespace);
    const prepared = owner?.onRegister ? owner.onRegister(structuredClone(input)) : input;
    return { input: prepared, ...this.check(prepared) };
  }

  /** How many compiled schemas are in memory. */
  get cachedCount(): number {
    return this.cache.size;
  }

  declareNamespace(pack: string, licensed: string | null, decl: NamespaceDeclaration): void {
    const owner = this.namespaces.get(decl.name);
    if (owner) throw new Error(`Namespace "${decl.name}" is declared by both ${owner.pack} and ${pack}`);
    this.namespaces.set(decl.name, { pack, open: decl.open, licensed, onRegister: decl.onRegister, sealed: new Set(decl.sealed ?? []) });
  }

  /** The pack that writes the records of `namespace.name` only through its own endpoints, if it is sealed. */
  sealedBy(namespace: string, name: string): string | null {
    const owner = this.namespaces.get(namespace);
    return owner?.sealed.has(name) ? owner.pack : null;
  }

  /** The licensed module gating a namespace, if a licensed pack owns it. */
  moduleOf(namespace: string): string | null {
    return this.namespaces.get(namespace)?.licensed ?? null;
  }

  /** Registers a tenant's schema (POST /metadata/schemas). */
  async registerForTenant(rc: RequestContext, input: SchemaInput): Promise<CompiledSchema> {
    assertIdentifier('namespace', input.namespace);
    assertIdentifier('name', input.name);
    const owner = this.namespaces.get(input.namespace);
    if (owner && !owner.open) throw ReservedNamespace(input.namespace);
    const prepared = owner?.onRegister ? owner.onRegister(structuredClone(input)) : input;
    const checked = this.check(prepared);
    const now = nowIso();
    return this.db.transaction(rc, async (rc) => {
      if (await this.repository.findVisible(rc, rc.tenantId, input.namespace, input.name)) {
        throw SchemaExists({ ns: input.namespace, name: input.name });
      }
      const candidate = { tenantId: rc.tenantId, namespace: input.namespace, name: input.name, schema: prepared.schema } as RegisteredSchema;
      for (const g of this.guards) await g.checkDefinition?.(rc, candidate);
      const registered = await this.repository.insert(rc, {
        tenantId: rc.tenantId,
        namespace: input.namespace,
        name: input.name,
        version: 1,
        scope: 'tenant',
        title: prepared.title ?? '',
        description: prepared.description ?? '',
        schema: prepared.schema,
        indexes: checked.indexes,
        unique: checked.unique,
        workflow: checked.workflow,
        createdAt: now,
        updatedAt: now,
      });
      return this.remember(rc, registered, checked.validate);
    });
  }

  /** Registers or updates a pack's platform schema at boot; a changed definition gets a new version. */
  async registerPlatform(rc: RequestContext, input: SchemaInput): Promise<CompiledSchema> {
    assertIdentifier('namespace', input.namespace);
    assertIdentifier('name', input.name);
    const checked = this.check(input);
    const now = nowIso();
    return this.db.transaction(rc, async (rc) => {
      const existing = await this.repository.findVisible(rc, null, input.namespace, input.name);
      if (!existing) {
        const registered = await this.repository.insert(rc, {
          tenantId: null, namespace: input.namespace, name: input.name, version: 1, scope: 'platform',
          title: input.title ?? '', description: input.description ?? '', schema: input.schema,
          indexes: checked.indexes, unique: checked.unique, workflow: checked.workflow, createdAt: now, updatedAt: now,
        });
        return this.remember(rc, registered, checked.validate);
      }
      const same = JSON.stringify([existing.schema, existing.indexes, existing.unique, existing.workflow, existing.title, existing.description])
        === JSON.stringify([input.schema, checked.indexes, checked.unique, checked.workflow, input.title ?? '', input.description ?? '']);
      if (same) return this.remember(rc, existing, checked.validate);
      const updated = await this.repository.updateDefinition(rc, existing, {
        schema: input.schema, indexes: checked.indexes, unique: checked.unique, workflow: checked.workflow, title: input.title ?? '',
        description: input.description ?? '', version: existing.version + 1, updatedAt: now,
      });
      return this.remember(rc, updated, checked.validate);
    });
  }

  /**
   * `resolve`'s answer without a promise when it is at hand: the schema kept in this process, its change token read
   * less than TOKEN_READ_EVERY_MS ago and the change feed live; else undefined (then `resolve`). For the hottest
   * reads (a storefront's look-up by sku), where an async layer per call was a tenth of what they allocate.
   */
  known(rc: RequestContext, namespace: string, name: string): CompiledSchema | undefined {
    if (Date.now() - this.tokenReadAt >= TOKEN_READ_EVERY_MS || !this.db.changes.live) return undefined;
    assertIdentifier('namespace', namespace);
    assertIdentifier('schema', name);
    return this.kept(rc, namespace, name);
  }

  /** The schema this process keeps for ns.name as the tenant sees it (its own, else the platform's). */
  private kept(rc: RequestContext, namespace: string, name: string): CompiledSchema | undefined {
    return (rc.tenantId && this.cache.get(key(rc.tenantId, namespace, name))) || this.cache.get(key(null, namespace, name)) || undefined;
  }

  /** The schema a tenant sees under ns.name (its own, else the platform's); 404 schema_not_found. */
  async resolve(rc: RequestContext, namespace: string, name: string): Promise<CompiledSchema> {
    assertIdentifier('namespace', namespace);
    assertIdentifier('schema', name);
    if (Date.now() - this.tokenReadAt >= TOKEN_READ_EVERY_MS) await this.forgetOnExternalChange(rc);
    const cached = this.kept(rc, namespace, name);
    // While the change feed is down, changes made by other processes go unheard: the stored version decides.
    if (cached && this.db.changes.live) return cached;
    const generation = this.generation;
    // Through the caller's transaction: a schema registered earlier in it is visible, and on SQLite (one
    // pooled connection) a read through the pool would wait for the transaction that holds it.
    const found = await this.repository.findVisible(rc, rc.tenantId, namespace, name);
    if (!found) throw SchemaNotFound({ ns: namespace, name });
    if (cached && cached.id === found.id && cached.version === found.version) return cached;
    const compiled = this.remember(rc, found, this.compile(found.schema), generation);
    return compiled;
  }

  /**
   * SQLite: another process on the same file (rare; they hear no notifications) changed something; its
   * data_version is read at most every 10 ms (resolve calls this once they passed), as tenant lookups do. PostgreSQL gives no token (null).
   */
  private async forgetOnExternalChange(rc: RequestContext): Promise<void> {
    this.tokenReadAt = Date.now();
    // Through rc's transaction when there is one: SQLite's pool has one connection, which it holds.
    const token = await this.db.externalChangeToken(rc);
    if (token === null || token === this.seenToken) return;
    if (this.seenToken !== null) {
      this.generation++;
      this.cache.clear();
    }
    this.seenToken = token;
  }

  async list(rc: RequestContext, namespace?: string): Promise<RegisteredSchema[]> {
    return this.repository.listVisible(rc, rc.tenantId, namespace);
  }

  /** Caches a compiled schema; inside a transaction only once it commits, so a rollback leaves no ghost behind. */
  private remember(rc: RequestContext, schema: RegisteredSchema, validate: ValidateFunction, generation = this.generation): CompiledSchema {
    const compiled: CompiledSchema = {
      ...schema, validate, types: fieldTypes(schema.schema), plainFields: documentServedFields(schema), localized: localizedFields(schema.schema, schema.workflow),
    };
    // So that a unique violation on its table names the fields (core/db/translate-error.ts).
    for (const fields of schema.unique) rememberUniqueIndex(this.repository.uniqueIndexName(schema.tableName, fields), fields);
    const store = () => {
      // Not when a change was heard since the schema was read: it may be older than that change.
      if (this.generation === generation) this.cache.set(key(schema.tenantId, schema.namespace, schema.name), compiled);
    };
    if (rc.trx && rc.afterCommit) rc.afterCommit(store);
    else store();
    return compiled;
  }

  /** Validates a registration: a bounded, compilable JSON Schema of type object, and sane index declarations. */
  private check(input: SchemaInput): { validate: ValidateFunction; indexes: string[][]; unique: string[][]; workflow: WorkflowOption | null } {
    const schema = input.schema;
    if (!schema || typeof schema !== 'object' || Array.isArray(schema)) throw InvalidSchema('schema must be a JSON Schema object');
    if (schema.type !== 'object') throw InvalidSchema('The schema must have "type": "object" at its root');
    const size = Buffer.byteLength(JSON.stringify(schema));
    if (size > SCHEMA_LIMITS.maxBytes) throw InvalidSchema(`The schema is ${size} bytes; at most ${SCHEMA_LIMITS.maxBytes} are allowed`);
    if (depthOf(schema) > SCHEMA_LIMITS.maxDepth) throw InvalidSchema(`The schema nests deeper than ${SCHEMA_LIMITS.maxDepth} levels`);
    if (schema.$schema !== undefined && schema.$schema !== 'https://json-schema.org/draft/2020-12/schema') {
      throw InvalidSchema('Only JSON Schema 2020-12 is supported ($schema https://json-schema.org/draft/2020-12/schema)');
    }
    const hostile = findHostileKeyword(schema);
    if (hostile) throw InvalidSchema(hostile);
    for (const field of SERVER_FIELDS) {
      if (schema.properties && Object.hasOwn(schema.properties, field)) {
        throw InvalidSchema(`"${field}" is managed by the server and may not be declared`);
      }
    }
    const validate = this.compile(schema);
    checkDisplayKeywords(schema);
    const workflow = checkWorkflowOption(input.workflow, (schema.properties ?? {}) as Record<string, unknown>);
    checkLocalizedKeyword(schema, workflow);
    for (const g of this.guards) g.checkDocument?.(schema);
    const types = fieldTypes(schema);
    const checkSets = (label: 'indexes' | 'unique', sets: unknown): string[][] => {
      if (sets === undefined) return [];
      if (!Array.isArray(sets) || sets.length > SCHEMA_LIMITS.maxIndexes) {
        throw ValidationFailed(`Invalid ${label}`, [{ path: `/${label}`, message: `must be an array of at most ${SCHEMA_LIMITS.maxIndexes} field lists` }]);
      }
      return sets.map((fields, i) => {
        if (!Array.isArray(fields) || fields.length === 0 || fields.length > SCHEMA_LIMITS.maxFieldsPerIndex) {
          throw ValidationFailed(`Invalid ${label}`, [{ path: `/${label}/${i}`, message: `must list 1 to ${SCHEMA_LIMITS.maxFieldsPerIndex} fields` }]);
        }
        fields.forEach((field, j) => {
          const serverField = (SERVER_FIELDS as readonly string[]).includes(field);
          if (typeof field !== 'string' || !SAFE_FIELD.test(field) || (!serverField && !isScalar(types.get(field)))) {
            throw ValidationFailed(`Invalid ${label}`, [{ path: `/${label}/${i}/${j}`, message: 'must name a top-level string, number, integer or boolean property' }]);
          }
        });
        return fields as string[];
      });
    };
    return { validate, indexes: checkSets('indexes', input.indexes), unique: checkSets('unique', input.unique), workflow };
  }

  private compile(schema: Record<string, any>): ValidateFunction {
    // An ajv instance keeps what it compiled for its whole life (its code scope only grows, ajv-validator/ajv#1413),
    // so a new one takes over after cacheMax compilations: the old one goes once its validators have left the cache.
    if (++this.compiledByAjv > this.cacheMax) {
      this.ajv = createAjv({ useDefaults: true });
      this.compiledByAjv = 1;
    }
    // $id is dropped so that two tenants may register schemas with the same $id.
    const { $id: _ignored, ...copy } = structuredClone(schema);
    try {
      return this.ajv.compile(copy);
    } catch (err) {
      throw InvalidSchema(`The JSON Schema is invalid: ${(err as Error).message}`);
    }
  }
}

function key(tenantId: string | null, namespace: string, name: string): string {
  return `${tenantId ?? ''}|${namespace}|${name}`;
}

export function assertIdentifier(name: string, value: unknown): asserts value is string {
  if (typeof value !== 'string' || !IDENTIFIER.test(value)) throw InvalidIdentifier({ name, value: String(value) });
}

const SCALAR_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'null']);

/**
 * Keywords that would let one registration slow every write down: `$data` references, and `uniqueItems`
 * over values that ajv can only compare pair by pair (quadratic in the array length) without a bound.
 */
function findHostileKeyword(node: unknown, path = ''): string | null {
  if (!node || typeof node !== 'object') return null;
  if (Array.isArray(node)) {
    for (let i = 0; i < node.length; i++) {
      const found = findHostileKeyword(node[i], `${path}/${i}`);
      if (found) return found;
    }
    return null;
  }
  const obj = node as Record<string, unknown>;
  if (Object.hasOwn(obj, '$data')) return `$data references are not supported (at ${path || '/'})`;
  if (obj.uniqueItems === true) {
    const items = obj.items as { type?: unknown } | undefined;
    const scalarItems = typeof items?.type === 'string' && SCALAR_TYPES.has(items.type);
    const bounded = typeof obj.maxItems === 'number' && obj.maxItems <= SCHEMA_LIMITS.maxUniqueItems;
    if (!scalarItems && !bounded) {
      return `uniqueItems needs scalar "items" or "maxItems" of at most ${SCHEMA_LIMITS.maxUniqueItems} (at ${path || '/'})`;
    }
  }
  for (const [key, value] of Object.entries(obj)) {
    const found = findHostileKeyword(value, `${path}/${key}`);
    if (found) return found;
  }
  return null;
}

function depthOf(value: unknown, depth = 0): number {
  if (depth > SCHEMA_LIMITS.maxDepth) return depth;
  if (!value || typeof value !== 'object') return depth;
  let max = depth;
  for (const inner of Object.values(value)) max = Math.max(max, depthOf(inner, depth + 1));
  return max;
}

/** The plain scalar fields that lead no declared index or unique set (CompiledSchema.plainFields). */
function documentServedFields(schema: RegisteredSchema): Set<string> {
  const plain = plainScalarFields(schema.schema);
  for (const fields of [...schema.indexes, ...schema.unique]) plain.delete(fields[0]);
  return plain;
}
