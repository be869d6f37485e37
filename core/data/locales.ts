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

/** A stored document's JSON text without `$locales` (reads without a locale; parsed only when it holds one). */
export function withoutLocalesJson(text: string): string {
  if (!text.includes(`"${LOCALES_KEY}"`)) return text;
  const { [LOCALES_KEY]: _stored, ...rest } = JSON.parse(text) as Record<string, unknown>;
  return JSON.stringify(rest);
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
