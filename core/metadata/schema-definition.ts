import type { JsonScalarType } from '../db/dialects/dialect.js';
import type { ErrorDetail } from '../base/errors.js';
import type { RequestContext } from '../base/request-context.js';
import { workflowOptionSchema, type WorkflowOption } from './workflow-option.js';

export const IDENTIFIER = /^[a-z][a-z0-9_]{0,39}$/;
export const SERVER_FIELDS = ['id', 'createdAt', 'updatedAt', 'version'] as const;
export const PLATFORM_SCOPE = '_platform';

/** Columns of every record table, by API name. */
const SERVER_COLUMNS: Record<string, { column: string; type: JsonScalarType }> = {
  id: { column: 'id', type: 'string' },
  createdAt: { column: 'created_at', type: 'string' },
  updatedAt: { column: 'updated_at', type: 'string' },
  version: { column: 'version', type: 'integer' },
};

/** The server column of an API field name; own keys only, so `constructor` or `toString` are plain fields. */
export function serverColumn(field: string): { column: string; type: JsonScalarType } | undefined {
  return Object.hasOwn(SERVER_COLUMNS, field) ? SERVER_COLUMNS[field] : undefined;
}

/** The body of POST /metadata/schemas, and what packs register at boot. */
export interface SchemaInput {
  namespace: string;
  name: string;
  title?: string;
  description?: string;
  schema: Record<string, any>;
  indexes?: string[][];
  unique?: string[][];
  /** The content workflow (CONTRACT.md 17): `{ "drafts": true, "locales"?: true }`. */
  workflow?: WorkflowOption | null;
}

/** The workflow a schema declares (see WorkflowOption). */
export type SchemaWorkflow = WorkflowOption;

export type FieldType = JsonScalarType | 'object' | 'array' | 'null' | 'any';

/** A registered schema, as the registry and the record store use it. */
export interface RegisteredSchema {
  id: number;
  /** Owning tenant; null for platform schemas (from packs). */
  tenantId: string | null;
  namespace: string;
  name: string;
  version: number;
  scope: 'platform' | 'tenant';
  title: string;
  description: string;
  schema: Record<string, any>;
  indexes: string[][];
  unique: string[][];
  /** The content workflow the schema asked for (CONTRACT.md 17), or null. */
  workflow: WorkflowOption | null;
  tableName: string;
  createdAt: string;
  updatedAt: string;
}

/**
 * The public shape of a schema in responses (CONTRACT.md section 3). `sealed`: only its pack writes its records
 * (the registry's `sealedBy`); the data API, bulk, import and MCP answer writes with 403, and the console shows
 * it read-only.
 */
export function toSchemaItem(s: RegisteredSchema, sealed: boolean) {
  return {
    namespace: s.namespace,
    name: s.name,
    version: s.version,
    scope: s.scope,
    title: s.title,
    description: s.description,
    schema: s.schema,
    indexes: s.indexes,
    unique: s.unique,
    workflow: s.workflow,
    sealed,
    createdAt: s.createdAt,
    updatedAt: s.updatedAt,
  };
}

/** The schema item's JSON Schema (the OpenAPI document and the MCP tool's output). */
export const schemaItemResponse = {
  type: 'object',
  required: ['namespace', 'name', 'version', 'scope', 'title', 'description', 'schema', 'indexes', 'unique', 'sealed', 'createdAt', 'updatedAt'],
  properties: {
    namespace: { type: 'string' },
    name: { type: 'string' },
    version: { type: 'integer', minimum: 1 },
    scope: { type: 'string', enum: ['platform', 'tenant'] },
    title: { type: 'string' },
    description: { type: 'string' },
    schema: { type: 'object' },
    indexes: { type: 'array', items: { type: 'array', items: { type: 'string' } } },
    unique: { type: 'array', items: { type: 'array', items: { type: 'string' } } },
    workflow: { anyOf: [workflowOptionSchema, { type: 'null' }], description: 'The content workflow: drafts (and locales) of its records' },
    sealed: { type: 'boolean', description: 'Only its pack writes its records: writes through /data, bulk, import and MCP answer 403' },
    createdAt: { type: 'string', format: 'date-time' },
    updatedAt: { type: 'string', format: 'date-time' },
  },
};

/** The JSON type of each top-level property, for filters, sorts and index expressions. */
export function fieldTypes(schema: Record<string, any>): Map<string, FieldType> {
  const types = new Map<string, FieldType>();
  const props = (schema.properties ?? {}) as Record<string, any>;
  for (const [name, prop] of Object.entries(props)) types.set(name, typeOfProperty(prop));
  return types;
}

/** Top-level properties declared with exactly one scalar JSON type (or it and null): `{ "type": "string" }`. */
export function plainScalarFields(schema: Record<string, any>): Set<string> {
  const plain = new Set<string>();
  for (const [name, prop] of Object.entries((schema.properties ?? {}) as Record<string, any>)) {
    const declared = Array.isArray(prop?.type) ? prop.type.filter((t: unknown) => t !== 'null') : [prop?.type];
    if (declared.length === 1 && isScalar(declared[0])) plain.add(name);
  }
  return plain;
}

function typeOfProperty(prop: any): FieldType {
  if (!prop || typeof prop !== 'object') return 'any';
  let t = prop.type;
  if (Array.isArray(t)) t = t.filter((x: string) => x !== 'null')[0] ?? 'null';
  if (t === undefined && Array.isArray(prop.enum) && prop.enum.length > 0) {
    const kinds = new Set(prop.enum.filter((v: unknown) => v !== null).map((v: unknown) => typeof v));
    if (kinds.size === 1) t = kinds.has('string') ? 'string' : kinds.has('number') ? 'number' : kinds.has('boolean') ? 'boolean' : undefined;
  }
  if (t === undefined && prop.const !== undefined) t = typeof prop.const === 'string' ? 'string' : typeof prop.const;
  switch (t) {
    case 'string': case 'number': case 'integer': case 'boolean': case 'object': case 'array': case 'null':
      return t;
    default:
      return 'any';
  }
}

export function isScalar(type: FieldType | undefined): type is JsonScalarType {
  return type === 'string' || type === 'number' || type === 'integer' || type === 'boolean';
}

/** A namespace a pack declares (see definePack): who owns it and what it holds. */
export interface NamespaceDeclaration {
  name: string;
  /** Whether tenants may register their own schemas in this namespace (cms: yes; crm, erp: no). */
  open: boolean;
  /** Platform schemas loaded from schemas/<namespace>/<name>.schema.json at boot. */
  schemas?: string[];
  /** Registration hook: may add to a schema a tenant registers in this namespace (cms adds slug and status). */
  onRegister?: (input: SchemaInput) => SchemaInput;
  /**
   * Schemas whose records the pack writes only through its own endpoints (support tickets: numbered, with
   * a status machine). The data API still reads them, and answers writes with 403 forbidden.
   */
  sealed?: string[];
}

/** Hooks that relations (core/data/relations.ts) add to schema changes and deletions. */
export interface SchemaChangeGuard {
  /** Checks a schema document's own declarations (e.g. x-ref), at registration and every new version; throws InvalidSchema. */
  checkDocument?(schema: Record<string, unknown>): void;
  /** Checks a new version's declarations (e.g. x-ref targets) before anything is done. */
  checkDefinition?(rc: RequestContext, next: RegisteredSchema): Promise<void>;
  /** Throws when the schema may not be deleted (another schema references it). */
  checkDeletion?(rc: RequestContext, s: RegisteredSchema): Promise<void>;
  /** Checks stored records against the new version beyond JSON Schema (e.g. references), inside the switch. */
  checkRecords?(rc: RequestContext, next: RegisteredSchema, previous: RegisteredSchema): Promise<ErrorDetail[]>;
}
