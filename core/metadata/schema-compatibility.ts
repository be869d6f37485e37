/**
 * Whether every document valid under `old` is valid under `next`, judged from the two schemas alone, for the
 * changes CONTRACT.md 12.1 calls compatible: an optional property added (where unknown properties were
 * refused), a property no longer required, an enum value added, a limit widened, a type added, annotations
 * changed. Anything else answers false, and the change is checked against every stored record instead.
 */
export function isWidening(old: unknown, next: unknown): boolean {
  if (sameJson(old, next)) return true;
  if (!isObject(old) || !isObject(next)) return false;
  for (const keyword of new Set([...Object.keys(old), ...Object.keys(next)])) {
    const a = old[keyword];
    const b = next[keyword];
    if (sameJson(a, b) || ANNOTATIONS.has(keyword)) continue;
    if (!widens(keyword, a, b, old, next)) return false;
  }
  return true;
}

const ANNOTATIONS = new Set(['title', 'description', 'default', 'examples', '$comment', 'deprecated', 'readOnly', 'writeOnly', 'x-on-delete',
  'x-money', 'x-percent-basis-points', 'x-display-field', 'x-list-columns']);
const UPPER = new Set(['maxLength', 'maximum', 'exclusiveMaximum', 'maxItems', 'maxProperties']);
const LOWER = new Set(['minLength', 'minimum', 'exclusiveMinimum', 'minItems', 'minProperties']);

function widens(keyword: string, a: unknown, b: unknown, old: Record<string, unknown>, next: Record<string, unknown>): boolean {
  if (UPPER.has(keyword)) return b === undefined || (typeof a === 'number' && typeof b === 'number' && b >= a);
  if (LOWER.has(keyword)) return b === undefined || (typeof a === 'number' && typeof b === 'number' && b <= a);
  switch (keyword) {
    case 'required':
      return b === undefined || (Array.isArray(a) && Array.isArray(b) && b.every((f) => a.includes(f)));
    case 'enum':
      return b === undefined || (Array.isArray(a) && Array.isArray(b) && a.every((v) => b.some((w) => sameJson(v, w))));
    case 'type': {
      if (b === undefined) return true;
      const before = Array.isArray(a) ? a : [a];
      const after = Array.isArray(b) ? b : [b];
      return before.every((t) => after.includes(t) || (t === 'integer' && after.includes('number')));
    }
    case 'items':
      return b === undefined || isWidening(a, b);
    case 'additionalProperties':
      // Unknown properties were refused: nothing stored has one.
      if (a === false) return true;
      return b === undefined || b === true || (isObject(a) && isWidening(a, b));
    case 'properties': {
      const before = (a ?? {}) as Record<string, unknown>;
      const after = (b ?? {}) as Record<string, unknown>;
      for (const [name, schema] of Object.entries(before)) {
        if (!(name in after)) return old.additionalProperties !== false && next.additionalProperties === undefined;
        if (!isWidening(schema, after[name])) return false;
      }
      // A property declared anew constrains values that records may hold unless unknown ones were refused.
      return Object.keys(after).every((name) => name in before || old.additionalProperties === false);
    }
    default:
      return false;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return !!value && typeof value === 'object' && !Array.isArray(value);
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
