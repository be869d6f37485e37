import type { JsonSchema } from '../http/route.js';

/**
 * JSON Schema 2020-12 → an OpenAPI 3.1 Schema Object. OpenAPI 3.1 speaks 2020-12 natively, so the
 * work is about placement: a schema moved into `components.schemas` loses its `$id` and `$schema`
 * (which would change how its references resolve) and its local references (`#/$defs/x`, `#`) are
 * re-pointed at where it now lives in the document.
 */
export function toOpenApiSchema(schema: JsonSchema, pointer: string): JsonSchema {
  return rewrite(schema, pointer) as JsonSchema;
}

/** Whether a schema must live in components (it has an `$id` or refers to itself locally). */
export function needsComponent(schema: JsonSchema): boolean {
  return typeof schema.$id === 'string' || hasLocalRef(schema);
}

/** A components.schemas key (letters, digits, `.`, `-`, `_`) for a free-form name such as an `$id`. */
export function componentName(name: string): string {
  const cleaned = name.replace(/^[a-z]+:\/\//i, '').replace(/[^A-Za-z0-9._-]+/g, '_').replace(/^_+|_+$/g, '');
  return cleaned || 'schema';
}

export function componentRef(name: string): string {
  return `#/components/schemas/${name}`;
}

/**
 * What `format: email` admits in the service (ajv-formats' full email, case-insensitive, a local part of at most 64
 * characters: core/base/ajv.ts), written beside the format:
 * formats differ between validators (another one takes `a@localhost`), a pattern reads the same everywhere.
 */
export const EMAIL_PATTERN = "^(?=[^@]{1,64}@)[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?\\.)+[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?$";

const REF_KEYS = new Set(['$ref', '$dynamicRef']);
/** Keywords whose value is a map of name → schema. */
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);
/** Keywords whose value is a list of schemas. */
const SCHEMA_LISTS = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems']);
/** Keywords whose value is one schema. */
const SCHEMA_ONE = new Set([
  'items', 'not', 'if', 'then', 'else', 'additionalProperties', 'contains', 'propertyNames',
  'unevaluatedItems', 'unevaluatedProperties', 'contentSchema',
]);

function rewrite(schema: unknown, pointer: string): unknown {
  if (!schema || typeof schema !== 'object' || Array.isArray(schema)) return schema;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(schema as Record<string, unknown>)) {
    if (key === '$schema' || key === '$id') continue;
    if (REF_KEYS.has(key) && typeof inner === 'string' && inner.startsWith('#')) {
      out[key] = inner === '#' ? pointer : `${pointer}${inner.slice(1)}`;
    } else if (SCHEMA_MAPS.has(key) && inner && typeof inner === 'object') {
      out[key] = Object.fromEntries(Object.entries(inner).map(([name, s]) => [name, rewrite(s, pointer)]));
    } else if (SCHEMA_LISTS.has(key) && Array.isArray(inner)) {
      out[key] = inner.map((s) => rewrite(s, pointer));
    } else if (SCHEMA_ONE.has(key)) {
      out[key] = rewrite(inner, pointer);
    } else {
      out[key] = inner;
    }
  }
  if (out.type === 'array' && out.items === undefined && out.prefixItems === undefined) out.items = {};
  if (out.format === 'email' && out.pattern === undefined) out.pattern = EMAIL_PATTERN;
  return out;
}

function hasLocalRef(schema: unknown): boolean {
  if (!schema || typeof schema !== 'object') return false;
  if (Array.isArray(schema)) return schema.some(hasLocalRef);
  for (const [key, inner] of Object.entries(schema as Record<string, unknown>)) {
    if (REF_KEYS.has(key) && typeof inner === 'string' && inner.startsWith('#')) return true;
    if (SCHEMA_MAPS.has(key) && inner && typeof inner === 'object' && Object.values(inner).some(hasLocalRef)) return true;
    if ((SCHEMA_LISTS.has(key) || SCHEMA_ONE.has(key)) && hasLocalRef(inner)) return true;
  }
  return false;
}
