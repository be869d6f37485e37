import { ValidationFailed, type ErrorDetail } from '../base/errors.js';
import type { CompiledSchema } from '../metadata/schema-registry.js';
import type { TenantLocales } from '../tenants/tenant-locales.js';
import { isPlainObject } from './merge-patch.js';
import { membersOf } from './json-members.js';

/**
 * Localised fields (CONTRACT.md 17.2). A record of a schema whose workflow takes locales keeps, in each localised
 * field, the default locale's value (where it always was: filters, sorts, indexes and every reader that knows
 * nothing of locales see it), and the other locales' values under one member of its document:
 * `"$locales": { "es": { "title": "Hola", "seo": { ... } } }`. Reads never show `$locales`: without a locale they
 * answer the default locale's values, with one that locale's (falling back to the default's), with `*` every
 * locale's as `{ "<locale>": value }`. Revisions, record events, exports and drafts carry the stored document.
 */
export const LOCALES_KEY = '$locales';

/** `locale` of a read or write: `*` (reads only) for every locale. */
export interface LocaleChoice {
  locale: string;
  /** Reads: a locale without a value of its own answers the default locale's (false: null). */
  fallback: boolean;
  tenant: TenantLocales;
}

type Translations = Record<string, Record<string, unknown>>;

/**
 * The `locale` and `fallback` query parameters, checked against the tenant's locales: null when they ask for the
 * default locale (a plain read or write). An unknown locale: 400 validation_failed at `/locale`.
 */
export function chooseLocale(tenant: TenantLocales, raw: { locale?: unknown; fallback?: unknown }, options: { all?: boolean } = {}): LocaleChoice | null {
  const fallback = raw.fallback;
  if (fallback !== undefined && fallback !== 'true' && fallback !== 'false' && typeof fallback !== 'boolean') {
    throw ValidationFailed('fallback must be true or false', [{ path: '/fallback', message: 'must be true or false' }]);
  }
  const locale = raw.locale;
  if (locale === undefined || locale === '') return null;
  const all = options.all !== false && locale === '*';
  if (typeof locale !== 'string' || (!all && !tenant.locales.includes(locale))) {
    const known = [...tenant.locales, ...(options.all === false ? [] : ['*'])].join(', ');
    throw ValidationFailed(`The tenant has no locale "${String(locale).slice(0, 40)}"`, [{ path: '/locale', message: `must be one of the tenant's locales: ${known}` }]);
  }
  if (locale === tenant.defaultLocale) return null;
  return { locale, fallback: fallback !== false && fallback !== 'false', tenant };
}

/**
 * The record as reads answer it (a copy when it changes): without `$locales`, and with a locale, each localised field in it. The
 * fields are the schema version's list (CompiledSchema.localized), so no record is walked against its schema.
 */
export function localize<T extends Record<string, unknown>>(record: T, fields: readonly string[], choice: LocaleChoice | null): T {
  // Most reads: nothing to take out, nothing to put in (a schema without locales never stores `$locales`).
  if ((!choice || !fields.length) && !Object.hasOwn(record, LOCALES_KEY)) return record;
  const { [LOCALES_KEY]: stored, ...out } = record as Record<string, unknown>;
  if (!choice || !fields.length) return out as T;
  const translations = (isPlainObject(stored) ? stored : {}) as Translations;
  if (choice.locale === '*') {
    const { defaultLocale, locales } = choice.tenant;
    for (const field of fields) {
      const all: Record<string, unknown> = {};
      for (const locale of locales) all[locale] = (locale === defaultLocale ? out[field] : translations[locale]?.[field]) ?? null;
      out[field] = all;
    }
    return out as T;
  }
  const own = translations[choice.locale];
  for (const field of fields) {
    const value = own?.[field];
    if (value !== undefined) out[field] = value;
    else if (!choice.fallback) out[field] = null;
  }
  return out as T;
}

/**
 * A stored document's JSON text without `$locales` (reads without a locale): the member is cut out of the text,
 * which is not parsed (parsing and serialising every translated record was a quarter of a list's CPU time).
 */
export function withoutLocalesJson(text: string): string {
  if (!text.includes(QUOTED_KEY) || scanMembers(text, text.indexOf('{'), LOCALES_ONLY, storedSpot) < 0 || storedSpot[0] < 0) return text;
  const { from, to } = cutRange(text, storedSpot[0], storedSpot[2]);
  return text.slice(0, from) + text.slice(to);
}

const QUOTED_KEY = `"${LOCALES_KEY}"`;
const LOCALES_ONLY = [QUOTED_KEY];
/** withoutLocalesJson's scratch space (see scanMembers). */
const storedSpot = new Int32Array(3);
const QUOTE = 34;
const BACKSLASH = 92;
const COMMA = 44;
const COLON = 58;
const isSpace = (c: number) => c === 32 || c === 10 || c === 13 || c === 9;

/** The index of the quote that closes the string opened at `open` (-1: none, not JSON). */
function closingQuote(text: string, open: number): number {
  let at = text.indexOf('"', open + 1);
  for (;;) {
    if (at < 0) return -1;
    let slashes = 0;
    while (text.charCodeAt(at - 1 - slashes) === BACKSLASH) slashes++;
    if (slashes % 2 === 0) return at;
    at = text.indexOf('"', at + 1);
  }
}

/**
 * One scan of the object whose `{` is at `open`: for each of `keys` (as JSON.stringify writes them) its top-level
 * member's start, value start and end (exclusive: the comma or brace after it) in `spots` (a start of -1: none).
 * Stops once each is found. -1 when the text is no object's JSON. As SQLite keeps JSON or as PostgreSQL writes jsonb (with spaces);
 * a key found by `includes` may be a nested one, or a string value: only a top-level member counts.
 */
function scanMembers(text: string, open: number, keys: readonly string[], spots: Int32Array): number {
  for (let k = 0; k < keys.length; k++) spots[3 * k] = -1;
  if (open < 0) return -1;
  let wanted = keys.length;
  let current = -1;
  let depth = 0;
  let inValue = false;
  for (let i = open + 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const close = closingQuote(text, i);
      if (close < 0) return -1;
      if (depth === 0 && !inValue) {
        let next = close + 1;
        while (isSpace(text.charCodeAt(next))) next++;
        if (text.charCodeAt(next) !== COLON) return -1;
        const length = close - i + 1;
        for (let k = 0; k < keys.length; k++) {
          if (spots[3 * k] < 0 && keys[k].length === length && text.startsWith(keys[k], i)) {
            spots[3 * k] = i;
            spots[3 * k + 1] = next + 1;
            current = k;
            break;
          }
        }
        inValue = true;
        i = next;
        continue;
      }
      i = close;
    } else if (c === 123 || c === 91) depth++;
    else if (depth === 0 && (c === 125 || c === COMMA)) {
      if (current >= 0) {
        spots[3 * current + 2] = i;
        current = -1;
        if (--wanted === 0) return i;
      }
      if (c === 125) return i;
      inValue = false;
    } else if (c === 125 || c === 93) depth--;
  }
  return -1;
}

/** The index of the `{` that opens the object value starting at `at` (after spaces), or -1. */
function objectAt(text: string, at: number): number {
  while (isSpace(text.charCodeAt(at))) at++;
  return text.charCodeAt(at) === 123 ? at : -1;
}

/** Where the member from `start` to `end` stands with its comma: the comma after it, or the one before it for the last member (none: the only one). */
function cutRange(text: string, start: number, end: number): { from: number; to: number } {
  if (text.charCodeAt(end) === COMMA) return { from: start, to: end + 1 };
  let before = start - 1;
  while (isSpace(text.charCodeAt(before))) before--;
  return text.charCodeAt(before) === COMMA ? { from: before, to: end } : { from: start, to: end };
}

/** What localizedMembers looks for, per list of localised fields and locale, with its scratch space (see scanMembers). */
interface LocalePlan {
  /** `"$locales"`, then the fields' keys as JSON.stringify writes them. */
  keys: string[];
  fieldKeys: string[];
  localeKey: string[];
  spots: Int32Array;
  ownSpots: Int32Array;
  localeSpots: Int32Array;
  edits: Int32Array;
}

const plans = new WeakMap<readonly string[], Map<string, LocalePlan>>();

function planOf(fields: readonly string[], locale: string): LocalePlan {
  let byLocale = plans.get(fields);
  if (!byLocale) plans.set(fields, (byLocale = new Map()));
  let plan = byLocale.get(locale);
  if (!plan) {
    const fieldKeys = fields.map((field) => JSON.stringify(field));
    byLocale.set(locale, plan = {
      keys: [QUOTED_KEY, ...fieldKeys], fieldKeys, localeKey: [JSON.stringify(locale)],
      spots: new Int32Array(3 * (fields.length + 1)), ownSpots: new Int32Array(3 * fields.length), localeSpots: new Int32Array(3),
      edits: new Int32Array(4 * (fields.length + 1)),
    });
  }
  return plan;
}

/**
 * `localize` of stored documents' JSON texts into a locale (not `*`), without parsing them: a function of a document's
 * text giving the members a record's JSON text takes (recordJsonOf: each led by a comma, '' for none): the locale's
 * values of the localised fields (their text within `$locales`), or null without fallback, are spliced in place of
 * the default locale's, and `$locales` is cut out. One scan of the document finds `$locales` and the fields, and the
 * answer is made of slices of the stored text (a copy of a document per record, then another of the page, was an
 * eighth of a list's CPU time on top of a list without a locale).
 */
export function localizedMembers(fields: readonly string[], choice: LocaleChoice): (text: string) => string {
  // What to look for is found once for a list's page, not once per document.
  const plan = planOf(fields, choice.locale);
  return (text) => membersIn(text, fields, choice, plan);
}

function membersIn(text: string, fields: readonly string[], choice: LocaleChoice, plan: LocalePlan): string {
  // Without translations, a fallback read is the document as it is.
  if (choice.fallback && !text.includes(QUOTED_KEY)) return membersOf(text);
  const open = text.indexOf('{');
  const close = text.lastIndexOf('}');
  const { spots, ownSpots, edits } = plan;
  if (scanMembers(text, open, plan.keys, spots) < 0 || (spots[0] < 0 && choice.fallback)) return membersOf(text);
  let own = false;
  if (spots[0] >= 0) {
    const translations = objectAt(text, spots[1]);
    if (translations >= 0 && scanMembers(text, translations, plan.localeKey, plan.localeSpots) >= 0 && plan.localeSpots[0] >= 0) {
      const values = objectAt(text, plan.localeSpots[1]);
      own = values >= 0 && scanMembers(text, values, plan.fieldKeys, ownSpots) >= 0;
    }
  }
  // Edits of the text as [from, to, replacement from, replacement to] (-1: null, -2: nothing), in the text's order.
  let n = 0;
  if (spots[0] >= 0) {
    const { from, to } = cutRange(text, spots[0], spots[2]);
    edits[0] = from;
    edits[1] = to;
    edits[2] = -2;
    edits[3] = -2;
    n = 1;
  }
  let added = '';
  for (let i = 0; i < fields.length; i++) {
    const found = own && ownSpots[3 * i] >= 0;
    if (!found && choice.fallback) continue;
    if (spots[3 * (i + 1)] < 0) {
      added += `${added ? ',' : ''}${plan.fieldKeys[i]}:${found ? text.slice(ownSpots[3 * i + 1], ownSpots[3 * i + 2]) : 'null'}`;
      continue;
    }
    let at = n;
    const from = spots[3 * (i + 1) + 1];
    // Insertion in the text's order (a handful of edits: four assignments, not a call into the runtime).
    while (at > 0 && edits[4 * (at - 1)] > from) {
      for (let k = 0; k < 4; k++) edits[4 * at + k] = edits[4 * (at - 1) + k];
      at--;
    }
    edits[4 * at] = from;
    edits[4 * at + 1] = spots[3 * (i + 1) + 2];
    edits[4 * at + 2] = found ? ownSpots[3 * i + 1] : -1;
    edits[4 * at + 3] = found ? ownSpots[3 * i + 2] : -1;
    n++;
  }
  let out = '';
  let at = open + 1;
  for (let e = 0; e < n; e++) {
    const r = edits[4 * e + 2];
    out += text.slice(at, edits[4 * e]) + (r >= 0 ? text.slice(r, edits[4 * e + 3]) : r === -1 ? 'null' : '');
    at = edits[4 * e + 1];
  }
  out += text.slice(at, close);
  if (added) out += out ? `,${added}` : added;
  return out ? `,${out}` : '';
}

/**
 * The body of a create or a merge patch as the stored document takes it: with a locale other than the default,
 * the localised fields it names go under `$locales.<locale>` (a merge patch's null there removes that locale's
 * value, which then falls back); a create also keeps them as the default locale's, the record's first values.
 * `$locales` itself is the server's: 400 at `/$locales`.
 */
export function storedInput(schema: CompiledSchema, input: unknown, choice: LocaleChoice | null, create: boolean): unknown {
  if (!isPlainObject(input) || !schema.localized.length) return input;
  if (Object.hasOwn(input, LOCALES_KEY)) {
    throw ValidationFailed('The body sets server-managed fields', [{ path: `/${LOCALES_KEY}`, message: 'is managed by the server; write a locale\'s values with ?locale=' }]);
  }
  if (!choice) return input;
  const own: Record<string, unknown> = {};
  const rest: Record<string, unknown> = { ...input };
  for (const field of schema.localized) {
    if (!Object.hasOwn(input, field)) continue;
    own[field] = input[field];
    if (!create) delete rest[field];
  }
  if (!Object.keys(own).length) return input;
  return { ...rest, [LOCALES_KEY]: { [choice.locale]: own } };
}

/**
 * Takes `$locales` out of a document about to be validated, without the locales left empty (a null or an empty
 * object), so that the schema sees the default locale's document; undefined when there is nothing to keep.
 */
export function takeTranslations(schema: CompiledSchema, data: Record<string, unknown>): Translations | undefined {
  if (!Object.hasOwn(data, LOCALES_KEY)) return undefined;
  const stored = data[LOCALES_KEY];
  delete data[LOCALES_KEY];
  if (!schema.localized.length) {
    throw ValidationFailed(`The record does not match ${schema.namespace}.${schema.name}`, [{ path: `/${LOCALES_KEY}`, message: 'the schema has no localised fields' }]);
  }
  if (!isPlainObject(stored)) throw ValidationFailed('Invalid translations', [{ path: `/${LOCALES_KEY}`, message: 'must be object' }]);
  const kept: Translations = {};
  for (const [locale, values] of Object.entries(stored)) {
    if (values === null) continue;
    if (!isPlainObject(values)) throw ValidationFailed('Invalid translations', [{ path: `/${LOCALES_KEY}/${locale.slice(0, 40)}`, message: 'must be object' }]);
    const own = Object.fromEntries(Object.entries(values).filter(([, v]) => v !== null));
    const unknown = Object.keys(own).find((field) => !schema.localized.includes(field));
    if (unknown !== undefined) {
      throw ValidationFailed('Invalid translations', [{ path: `/${unknown.slice(0, 64)}`, message: `is not a localised field (locale ${locale.slice(0, 40)})` }]);
    }
    if (Object.keys(own).length) kept[locale] = own;
  }
  return Object.keys(kept).length ? kept : undefined;
}

/**
 * Each locale's values validated as the schema validates a record: the default locale's document with that
 * locale's values in place. Issues name the field's path and the locale.
 */
export function checkTranslations(schema: CompiledSchema, data: Record<string, unknown>, translations: Translations): void {
  const issues: ErrorDetail[] = [];
  for (const [locale, values] of Object.entries(translations)) {
    const overlay = structuredClone({ ...data, ...values });
    if (schema.validate(overlay)) continue;
    for (const e of schema.validate.errors ?? []) {
      const field = e.instancePath.split('/')[1];
      if (field !== undefined && Object.hasOwn(values, field)) issues.push({ path: e.instancePath, message: `${e.message ?? 'is invalid'} (locale ${locale})` });
    }
  }
  if (issues.length) throw ValidationFailed(`The record does not match ${schema.namespace}.${schema.name}`, issues);
}
