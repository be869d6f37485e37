import type { JsonSchema } from '../api/schemas.js';

/** What the console reads from a JSON Schema property, shared by its tables, filters and forms. */

export const typeOf = (s: JsonSchema): string => (Array.isArray(s.type) ? s.type.find((t) => t !== 'null') ?? 'string' : s.type ?? 'string');
export const choices = (values: unknown[]) => values.map((v) => ({ id: v as string, name: String(v) }));

const SPECIAL: Record<string, string> = { id: 'ID', createdAt: 'Created', updatedAt: 'Updated', version: 'Version' };

/**
 * A field name as a person reads it: `priceCents` → "Price", `taxRateBasisPoints` → "Tax rate",
 * `createdAt` → "Created", `contact_email` → "Contact email" (the unit goes: the cell or input shows it).
 */
export function humanise(name: string): string {
  if (SPECIAL[name]) return SPECIAL[name];
  const base = name.replace(/(Cents|BasisPoints|At)$/, '') || name;
  const words = base.replace(/([a-z0-9])([A-Z])/g, '$1 $2').replace(/[_-]+/g, ' ').trim().toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** A property's label: its JSON Schema `title`, else its humanised name. */
export const labelOf = (name: string, s: JsonSchema | undefined) => (typeof s?.title === 'string' && s.title) || humanise(name);

/** An integer amount in cents of the record's `currency` (CONTRACT 3, `x-money`). */
export const isMoney = (s: JsonSchema) => s['x-money'] === true;
/** An integer in basis points shown as a percentage (`x-percent-basis-points`). */
export const isBasisPoints = (s: JsonSchema) => s['x-percent-basis-points'] === true;

/** A property holding one value per locale of the site (CONTRACT 17.2, `x-localized`). */
export const isLocalized = (s: JsonSchema) => s['x-localized'] === true;

/** Properties shown as table columns and filters: scalar ones. */
export const isScalar = (s: JsonSchema) => ['string', 'integer', 'number', 'boolean'].includes(typeOf(s));
