import type { JsonSchema } from '../api/schemas.js';

/** What the console reads from a JSON Schema property, shared by its tables, filters and forms. */

export const typeOf = (s: JsonSchema): string => (Array.isArray(s.type) ? s.type.find((t) => t !== 'null') ?? 'string' : s.type ?? 'string');
export const choices = (values: unknown[]) => values.map((v) => ({ id: v as string, name: String(v) }));
export const labelOf = (name: string, s: JsonSchema) => s.title ?? name;

/** Properties shown as table columns and filters: scalar ones. */
export const isScalar = (s: JsonSchema) => ['string', 'integer', 'number', 'boolean'].includes(typeOf(s));

