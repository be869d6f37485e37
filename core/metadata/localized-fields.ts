import { InvalidSchema } from '../base/errors.js';
import type { SchemaWorkflow } from './schema-definition.js';

/** The keyword that marks a top-level property as localised (CONTRACT.md 17.2). */
export const LOCALIZED_KEYWORD = 'x-localized';

/**
 * The schema's localised fields: the top-level properties marked `"x-localized": true`, when the workflow takes
 * locales (else none). Computed once per schema version (SchemaRegistry.remember); reads and writes use the list.
 */
export function localizedFields(schema: Record<string, any>, workflow: SchemaWorkflow | null): readonly string[] {
  if (!workflow?.locales) return [];
  return Object.entries((schema.properties ?? {}) as Record<string, any>).filter(([, p]) => p?.[LOCALIZED_KEYWORD] === true).map(([name]) => name);
}

/**
 * Checks `x-localized` where it is declared: true or false, on a top-level property that is a string or an object
 * of strings; anywhere else, or on a schema whose workflow does not take locales, InvalidSchema.
 */
export function checkLocalizedKeyword(schema: Record<string, any>, workflow: SchemaWorkflow | null): void {
  const properties = (schema.properties ?? {}) as Record<string, any>;
  for (const [name, prop] of Object.entries(properties)) {
    const flag = prop?.[LOCALIZED_KEYWORD];
    if (flag === undefined) continue;
    if (flag !== true && flag !== false) throw InvalidSchema(`"${LOCALIZED_KEYWORD}" at /properties/${name} must be true or false`);
    if (flag && !workflow?.locales) throw InvalidSchema(`"${LOCALIZED_KEYWORD}" at /properties/${name} needs "workflow": { "locales": true }`);
    if (flag && !isText(prop) && !isObjectOfText(prop)) {
      throw InvalidSchema(`"${LOCALIZED_KEYWORD}" at /properties/${name} may only be declared on a string or an object of strings`);
    }
  }
  if (nestedLocalized(schema, '', true)) throw InvalidSchema(`"${LOCALIZED_KEYWORD}" may only be declared on a top-level property`);
}

const types = (prop: Record<string, any>): unknown[] => (Array.isArray(prop.type) ? prop.type.filter((t: unknown) => t !== 'null') : [prop.type]);

function isText(prop: Record<string, any>): boolean {
  const declared = types(prop);
  return declared.length === 1 && declared[0] === 'string';
}

function isObjectOfText(prop: Record<string, any>): boolean {
  const declared = types(prop);
  if (declared.length !== 1 || declared[0] !== 'object') return false;
  const inner = Object.values((prop.properties ?? {}) as Record<string, any>);
  return inner.length > 0 && inner.every((p) => p && typeof p === 'object' && isText(p)) && prop.additionalProperties === false;
}

/** Whether `x-localized` appears below the top-level properties. */
function nestedLocalized(node: unknown, path: string, root: boolean): boolean {
  if (!node || typeof node !== 'object') return false;
  if (Array.isArray(node)) return node.some((child) => nestedLocalized(child, path, false));
  const s = node as Record<string, unknown>;
  if (!root && path.split('/').length !== 3 && Object.hasOwn(s, LOCALIZED_KEYWORD)) return true;
  return Object.entries(s).some(([key, child]) => key !== 'enum' && key !== 'const' && key !== 'default' && key !== 'examples' && nestedLocalized(child, `${path}/${key}`, false));
}
