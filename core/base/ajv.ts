import { Ajv2020 } from 'ajv/dist/2020.js';
import type { Options } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { RE2JS } from 're2js';

// ajv-formats is CommonJS: under NodeNext its default import is the module object (ajv-validator/ajv#2132).
const addFormats = ((addFormatsModule as any).default ?? addFormatsModule) as (ajv: Ajv2020) => Ajv2020;

/**
 * `pattern` and `patternProperties` run on RE2 semantics (re2js, linear time), so a hostile pattern
 * such as `^(a+)+$` cannot hang the process. Patterns RE2 does not support (back-references,
 * look-around) are refused as invalid schemas.
 */
const re2Engine = Object.assign(
  (pattern: string, flags: string) => {
    const re = RE2JS.compile(pattern, flags.includes('i') ? RE2JS.CASE_INSENSITIVE : 0);
    // ajv caches compiled patterns by toString(): without a distinct one every pattern would share the first.
    // `test` finds a match anywhere, as RegExp.test and Matcher.find do, without building a Matcher (the DFA path).
    return { test: (input: string) => re.test(input), toString: () => `/${pattern}/${flags}` } as unknown as RegExp;
  },
  { code: 'require("re2js").RE2JS' },
);

/** The longest local part (before the @) of an e-mail address, RFC 5321 4.5.3.1.1. */
export const MAX_EMAIL_LOCAL_PART = 64;

export interface AjvFactoryOptions {
  /** Only for the query-string instance: read "5" as 5 and "true" as true. */
  coerceTypes?: boolean;
  /** Fill in `default` values while validating (record documents). */
  useDefaults?: boolean;
}

/** The one ajv factory: JSON Schema 2020-12, formats, every error listed, no $data, RE2 patterns. */
export function createAjv(options: AjvFactoryOptions = {}): Ajv2020 {
  const opts: Options = {
    allErrors: true,
    $data: false,
    strict: true,
    strictTypes: false,
    strictRequired: false,
    strictTuples: false,
    allowUnionTypes: true,
    coerceTypes: options.coerceTypes ? 'array' : false,
    useDefaults: options.useDefaults ?? false,
    validateFormats: true,
    code: { regExp: re2Engine as any },
    loadSchema: undefined,
  };
  const ajv = new Ajv2020(opts);
  addFormats(ajv);
  // An address whose local part is over 64 characters (RFC 5321 4.5.3.1.1) is no address, whatever ajv-formats says;
  // the OpenAPI documents write the same rule beside the format (core/openapi/openapi-schema.ts, EMAIL_PATTERN).
  const email = ajv.formats.email as RegExp;
  ajv.addFormat('email', (value: string) => value.indexOf('@') <= MAX_EMAIL_LOCAL_PART && email.test(value));
  // Relations (CONTRACT.md 12.2) are annotations to ajv; core/data/relations.ts reads them.
  ajv.addVocabulary(['x-ref', 'x-on-delete']);
  // A route's own error code for a value that fails its pattern (core/http/route.ts), an annotation to ajv.
  ajv.addVocabulary(['x-error']);
  // Display keywords (CONTRACT.md 3) are annotations too; metadata/display-keywords.ts checks their form.
  ajv.addVocabulary(['x-money', 'x-percent-basis-points', 'x-storage-key', 'x-display-field', 'x-list-columns']);
  // Localised properties (CONTRACT.md 17.2), an annotation too; metadata/localized-fields.ts checks its form.
  ajv.addVocabulary(['x-localized']);
  // Which locales a `?locale=` parameter takes (core/openapi/data-paths.ts, narrowLocales), an annotation too.
  ajv.addVocabulary(['x-locale']);
  return ajv;
}

export interface ValidationIssue {
  path: string;
  message: string;
}

/** Maps ajv errors to the contract's `{ path, message }` list. */
export function toIssues(errors: Array<{ instancePath: string; message?: string; keyword: string; params: any }> | null | undefined): ValidationIssue[] {
  // An `if` error only says its `then` or `else` failed, whose own errors are listed: left out.
  return (errors ?? []).filter((e) => e.keyword !== 'if').map((e) => {
    if (e.keyword === 'required') return { path: `${e.instancePath}/${e.params.missingProperty}`, message: 'is required' };
    if (e.keyword === 'enum' && Array.isArray(e.params.allowedValues) && e.params.allowedValues.length <= 20) {
      return { path: e.instancePath || '/', message: `must be one of: ${e.params.allowedValues.join(', ')}` };
    }
    if (e.keyword === 'additionalProperties') {
      return { path: `${e.instancePath}/${e.params.additionalProperty}`, message: 'is not allowed' };
    }
    return { path: e.instancePath || '/', message: e.message ?? 'is invalid' };
  });
}
