import { InvalidSchema } from '../base/errors.js';
import { SERVER_FIELDS } from './schema-definition.js';

/**
 * The display keywords of CONTRACT.md section 3, for the console and generated clients: ajv ignores them
 * (base/ajv.ts adds them as a vocabulary), and their form is checked here at registration and every new version.
 * On a property: `x-money: true` (an integer amount in cents) and `x-percent-basis-points: true` (an integer);
 * `x-storage-key: true | "public" | "private"` on a string (a storage key, docs/storage.md; the console uploads
 * with that visibility, `true` meaning private).
 * On the schema: `x-display-field` (a top-level property) and `x-list-columns` (top-level properties or server fields).
 */
const PROPERTY_FLAGS = ['x-money', 'x-percent-basis-points'] as const;
const SCHEMA_KEYWORDS = ['x-display-field', 'x-list-columns'] as const;

const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'dependentSchemas']);

const isInteger = (s: Record<string, unknown>) => s.type === 'integer' || (Array.isArray(s.type) && s.type.includes('integer') && s.type.every((t) => t === 'integer' || t === 'null'));

/** Throws InvalidSchema when a display keyword has the wrong form or sits where it means nothing. */
export function checkDisplayKeywords(schema: Record<string, any>): void {
  walk(schema, '', true);
  const properties: Record<string, unknown> = schema.properties ?? {};
  const known = (name: unknown) => typeof name === 'string' && (Object.hasOwn(properties, name) || (SERVER_FIELDS as readonly string[]).includes(name));
  const display = schema['x-display-field'];
  if (display !== undefined && !(typeof display === 'string' && Object.hasOwn(properties, display))) {
    throw InvalidSchema('"x-display-field" must name a top-level property of the schema');
  }
  const columns = schema['x-list-columns'];
  if (columns !== undefined && !(Array.isArray(columns) && columns.length > 0 && columns.length <= 20 && columns.every(known) && new Set(columns).size === columns.length)) {
    throw InvalidSchema('"x-list-columns" must list 1 to 20 distinct top-level properties or server fields (id, createdAt, updatedAt, version)');
  }
}

function walk(node: unknown, path: string, root: boolean): void {
  if (!node || typeof node !== 'object') return;
  if (Array.isArray(node)) {
    node.forEach((child, i) => walk(child, `${path}/${i}`, false));
    return;
  }
  const s = node as Record<string, unknown>;
  for (const flag of PROPERTY_FLAGS) {
    if (s[flag] === undefined) continue;
    if (s[flag] !== true && s[flag] !== false) throw InvalidSchema(`"${flag}" at ${path || '/'} must be true or false`);
    if (!isInteger(s)) throw InvalidSchema(`"${flag}" at ${path || '/'} may only be declared on an integer property`);
  }
  const storage = s['x-storage-key'];
  if (storage !== undefined) {
    if (![true, false, 'public', 'private'].includes(storage as never)) throw InvalidSchema(`"x-storage-key" at ${path || '/'} must be true, false, "public" or "private"`);
    if (s.type !== 'string') throw InvalidSchema(`"x-storage-key" at ${path || '/'} may only be declared on a string property (or an array's items)`);
  }
  if (!root) {
    for (const keyword of SCHEMA_KEYWORDS) {
      if (s[keyword] !== undefined) throw InvalidSchema(`"${keyword}" may only be declared at the schema's root (found at ${path})`);
    }
  }
  for (const [key, child] of Object.entries(s)) {
    if (SCHEMA_MAPS.has(key) && child && typeof child === 'object' && !Array.isArray(child)) {
      // Maps of named subschemas: their keys are names (a property may be called "default"), not keywords.
      for (const [name, sub] of Object.entries(child)) walk(sub, `${path}/${key}/${name}`, false);
      continue;
    }
    if (key === 'enum' || key === 'const' || key === 'default' || key === 'examples' || key === 'x-list-columns') continue;
    walk(child, `${path}/${key}`, false);
  }
}
