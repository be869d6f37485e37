import { ValidationFailed, type ErrorDetail } from '../base/errors.js';
import type { CompiledSchema } from '../metadata/schema-registry.js';
import type { TenantLocales } from '../tenants/tenant-locales.js';
import { isPlainObject } from './merge-patch.js';

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
  if (!text.includes(QUOTED_KEY)) return text;
  const member = topLevelMember(text, QUOTED_KEY);
  return member ? cut(text, member) : text;
}

const QUOTED_KEY = `"${LOCALES_KEY}"`;
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

/** A top-level member of an object's JSON text: where it starts (its key's quote), its value's start and end (exclusive). */
interface Member { start: number; value: number; end: number }

/**
 * The top-level member `quotedKey` (a key as JSON.stringify writes it) of an object's JSON text, as SQLite keeps it
 * or as PostgreSQL writes jsonb (with spaces); null when the object has none (a key found by `includes` may be a
 * nested one, or a string value) or the text is no object's JSON.
 */
function topLevelMember(text: string, quotedKey: string): Member | null {
  let depth = 0;
  let found: Member | null = null;
  let inValue = false;
  for (let i = text.indexOf('{') + 1; i > 0 && i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const close = closingQuote(text, i);
      if (close < 0) return null;
      if (depth === 0 && !inValue) {
        let next = close + 1;
        while (isSpace(text.charCodeAt(next))) next++;
        if (text.charCodeAt(next) !== COLON) return null;
        if (close - i + 1 === quotedKey.length && text.startsWith(quotedKey, i)) found = { start: i, value: next + 1, end: -1 };
        inValue = true;
        i = next;
        continue;
      }
      i = close;
    } else if (c === 123 || c === 91) depth++;
    else if (depth === 0 && (c === 125 || c === COMMA)) {
      if (found) {
        found.end = i;
        return found;
      }
      if (c === 125) return null;
      inValue = false;
    } else if (c === 125 || c === 93) depth--;
  }
  return null;
}

/** The text without the member (its comma too). */
function cut(text: string, { start, end }: Member): string {
  if (text.charCodeAt(end) === COMMA) return text.slice(0, start) + text.slice(end + 1);
  // The last member: the comma before it goes with it (none: it was the only one).
  let before = start - 1;
  while (isSpace(text.charCodeAt(before))) before--;
  return text.charCodeAt(before) === COMMA ? text.slice(0, before) + text.slice(end) : text.slice(0, start) + text.slice(end);
}

/**
 * `localize` of a stored document's JSON text into a locale (not `*`), without parsing it: the locale's values of
 * the localised fields (their text within `$locales`), or null without fallback, are spliced in place of the
 * default locale's, and `$locales` is cut out.
 */
export function localizedJson(text: string, fields: readonly string[], choice: LocaleChoice): string {
  const stored = text.includes(QUOTED_KEY) ? topLevelMember(text, QUOTED_KEY) : null;
  if (!stored && choice.fallback) return text;
  let own: string | null = null;
  if (stored) {
    const translations = text.slice(stored.value, stored.end);
    const locale = topLevelMember(translations, JSON.stringify(choice.locale));
    if (locale) own = translations.slice(locale.value, locale.end);
  }
  let out = stored ? cut(text, stored) : text;
  for (const field of fields) {
    const key = JSON.stringify(field);
    const value = own !== null && own.includes(key) ? topLevelMember(own, key) : null;
    if (!value && choice.fallback) continue;
    const json = value ? own!.slice(value.value, value.end) : 'null';
    const member = topLevelMember(out, key);
    if (member) out = `${out.slice(0, member.value)}${json}${out.slice(member.end)}`;
    else {
      const close = out.lastIndexOf('}');
      out = `${out.slice(0, close)}${/\{\s*$/.test(out.slice(0, close)) ? '' : ','}${key}:${json}}`;
    }
  }
  return out;
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
