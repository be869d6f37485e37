import type { JsonSchema } from '../http/route.js';
import { listQuerySchema, LOCALE_QUERY_PROPERTIES, oneOfPattern } from '../http/response-schemas.js';
import { SAFE_FIELD } from '../db/dialects/dialect.js';
import { fieldTypes, isScalar } from '../metadata/schema-definition.js';

/**
 * The list query of a route that lists the records `record` describes (recordResponse): listQuerySchema with the
 * values `sort` and `fields` may take, as patterns of the record's fields (the service answers 400 for any other);
 * `locales`: also `locale` and `fallback` (splitLocale takes them apart).
 */
export function listQueryOf(record: JsonSchema, options: { locales?: boolean } = {}): JsonSchema {
  const types = fieldTypes(record);
  const sortable = oneOfPattern([...types.entries()].filter(([name, type]) => isScalar(type) && SAFE_FIELD.test(name)).map(([name]) => name));
  const all = oneOfPattern([...types.keys()]);
  const properties = listQuerySchema.properties as Record<string, JsonSchema>;
  return {
    ...listQuerySchema,
    properties: {
      ...properties,
      sort: { ...properties.sort, pattern: `^(?:[-+]?${sortable})?$` },
      fields: { ...properties.fields, pattern: `^(?:${all}(?:,${all})*)?$` },
      ...(options.locales ? LOCALE_QUERY_PROPERTIES : {}),
    },
  };
}

