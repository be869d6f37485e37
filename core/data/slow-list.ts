import { isScalar } from '../metadata/schema-definition.js';
import type { CompiledSchema } from '../metadata/schema-registry.js';
import type { ListQuery } from './list-query.js';
import { serverColumn } from '../metadata/schema-definition.js';

/** The same advice is logged at most once a minute per schema and field list. */
const ADVICE_EVERY_MS = 60_000;
const advised = new Map<string, number>();

/**
 * For a slow list: the index that would serve it, when its filters or its sort name fields that no declared
 * index leads with (on SQLite such a list reads every document of the tenant; on PostgreSQL equality is
 * served by the document index, ranges and sorts are not). Declaring it is a schema change (PUT
 * /metadata/schemas/{ns}/{name} with the field in `indexes`). Null when an index exists or it was said lately.
 * Only scalar fields can be declared: an array (a many-relation's "contains") is never suggested.
 */
export function slowListAdvice(schema: CompiledSchema, query: ListQuery, ms: number): { log: object; message: string } | null {
  const leads = new Set(schema.indexes.map((fields) => fields[0]).concat(schema.unique.map((fields) => fields[0])));
  const uncovered = (field: string) => !serverColumn(field) && !leads.has(field) && isScalar(schema.types.get(field));
  const fields = [...new Set(query.filters.map((f) => f.field).filter(uncovered))];
  const sortField = query.sort[0]?.field;
  if (!fields.length && sortField && uncovered(sortField)) fields.push(sortField);
  if (!fields.length) return null;
  const index = fields.slice(0, 4);
  const key = `${schema.id}|${index.join(',')}`;
  const now = Date.now();
  if ((advised.get(key) ?? 0) > now - ADVICE_EVERY_MS) return null;
  if (advised.size >= 1000) advised.clear();
  advised.set(key, now);
  return {
    log: { schema: `${schema.namespace}.${schema.name}`, ms: Math.round(ms), suggestedIndex: index },
    message: `slow list of ${schema.namespace}.${schema.name} (${Math.round(ms)} ms): no index serves ${index.join(', ')}; `
      + `add ${JSON.stringify(index)} to the schema's "indexes" (PUT /api/v1/metadata/schemas/${schema.namespace}/${schema.name})`,
  };
}
