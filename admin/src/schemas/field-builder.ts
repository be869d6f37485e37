import type { JsonSchema } from '../api/schemas.js';

/** One row of the visual field builder; it maps to one property of the JSON Schema and back. */
export interface FieldRow {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'object';
  /** An array of `type`. */
  array: boolean;
  required: boolean;
  /** Comma-separated allowed values. */
  enum: string;
  min: string;
  max: string;
  format: string;
}

export const FIELD_TYPES: FieldRow['type'][] = ['string', 'integer', 'number', 'boolean', 'object'];
export const FORMATS = ['', 'email', 'uri', 'date', 'date-time', 'uuid'];

export const emptyRow = (): FieldRow => ({ name: '', type: 'string', array: false, required: false, enum: '', min: '', max: '', format: '' });

function propertyOf(row: FieldRow): JsonSchema {
  const s: JsonSchema = { type: row.type };
  const numeric = row.type === 'integer' || row.type === 'number';
  if (row.enum.trim()) {
    s.enum = row.enum.split(',').map((v) => v.trim()).filter(Boolean).map((v) => (numeric ? Number(v) : v));
  }
  if (row.min !== '') s[numeric ? 'minimum' : 'minLength'] = Number(row.min);
  if (row.max !== '') s[numeric ? 'maximum' : 'maxLength'] = Number(row.max);
  if (row.format && row.type === 'string') s.format = row.format;
  return row.array ? { type: 'array', items: s } : s;
}

/** The builder's rows as a JSON Schema (type object, closed). */
export function schemaOf(rows: FieldRow[]): JsonSchema {
  const named = rows.filter((r) => r.name.trim());
  const schema: JsonSchema = {
    type: 'object',
    additionalProperties: false,
    properties: Object.fromEntries(named.map((r) => [r.name.trim(), propertyOf(r)])),
  };
  const required = named.filter((r) => r.required).map((r) => r.name.trim());
  if (required.length) schema.required = required;
  return schema;
}

/** A JSON Schema back into rows, as far as the builder can say it; null when it cannot (edit the JSON then). */
export function rowsOf(schema: JsonSchema): FieldRow[] | null {
  if (schema.type !== 'object' || typeof schema.properties !== 'object') return null;
  const rows: FieldRow[] = [];
  for (const [name, raw] of Object.entries(schema.properties)) {
    const array = raw.type === 'array';
    const s = array ? raw.items ?? {} : raw;
    const type = s.type as FieldRow['type'];
    if (!FIELD_TYPES.includes(type)) return null;
    const numeric = type === 'integer' || type === 'number';
    const min = numeric ? s.minimum : s.minLength;
    const max = numeric ? s.maximum : s.maxLength;
    rows.push({
      name, type, array, required: (schema.required ?? []).includes(name),
      enum: Array.isArray(s.enum) ? s.enum.join(', ') : '', min: min === undefined ? '' : String(min), max: max === undefined ? '' : String(max),
      format: typeof s.format === 'string' ? s.format : '',
    });
  }
  return rows;
}

/** `sku; status, createdAt` → [["sku"], ["status", "createdAt"]]. */
export const parseFieldLists = (text: string): string[][] =>
  text.split(';').map((group) => group.split(',').map((f) => f.trim()).filter(Boolean)).filter((g) => g.length);

/** A TypeScript type for the records of a schema (what `npm run types` writes for the whole tenant). */
export function typeScriptOf(typeName: string, schema: JsonSchema): string {
  const body = Object.entries(schema.properties ?? {})
    .map(([name, s]) => `  ${/^[A-Za-z_$][\w$]*$/.test(name) ? name : JSON.stringify(name)}${(schema.required ?? []).includes(name) ? '' : '?'}: ${tsType(s, '  ')};`);
  const server = ['  id: string;', '  createdAt: string;', '  updatedAt: string;', '  version: number;'];
  return `export interface ${typeName} {\n${[...server, ...body].join('\n')}\n}\n`;
}

function tsType(s: JsonSchema, indent: string): string {
  if (Array.isArray(s.enum)) return s.enum.map((v) => JSON.stringify(v)).join(' | ');
  const type = Array.isArray(s.type) ? s.type : [s.type];
  const parts = type.map((t) => {
    switch (t) {
      case 'string': return 'string';
      case 'integer': case 'number': return 'number';
      case 'boolean': return 'boolean';
      case 'null': return 'null';
      case 'array': return `Array<${s.items ? tsType(s.items, indent) : 'unknown'}>`;
      case 'object': {
        if (!s.properties) return 'Record<string, unknown>';
        const inner = Object.entries(s.properties)
          .map(([n, c]) => `${indent}  ${n}${(s.required ?? []).includes(n) ? '' : '?'}: ${tsType(c, `${indent}  `)};`);
        return `{\n${inner.join('\n')}\n${indent}}`;
      }
      default: return 'unknown';
    }
  });
  return parts.join(' | ');
}

export const pascal = (text: string) => text.split(/[^A-Za-z0-9]+/).filter(Boolean).map((w) => w[0].toUpperCase() + w.slice(1)).join('');
