import { API } from './client.js';
import type { JsonSchema } from './schemas.js';
import { session } from './session.js';

/**
 * The tenant's OpenAPI document (GET /openapi.json with the session's token and tenant: the same one an
 * integrator reads), for screens over pack routes that no registered schema describes (coupons, cart recovery,
 * a new ticket): their forms and columns come from the operations' request and response schemas.
 * Read once per session and tenant.
 */
let cached: { key: string; doc: Promise<any> } | null = null;

function openApi(): Promise<any> {
  const key = `${session.token}|${session.tenant}`;
  if (cached?.key !== key) {
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (session.token) headers.Authorization = `Bearer ${session.token}`;
    if (session.tenant) headers['X-Tenant-Id'] = session.tenant;
    const doc = fetch(`${API}/openapi.json`, { headers, credentials: 'omit' }).then((res) => {
      if (!res.ok) throw new Error(`The API description could not be read (HTTP ${res.status})`);
      return res.json();
    });
    doc.catch(() => { if (cached?.doc === doc) cached = null; });
    cached = { key, doc };
  }
  return cached.doc;
}

/** Local `$ref`s (`#/components/...`) replaced by what they point at. */
function resolve(doc: any, schema: any, depth = 0): any {
  if (!schema || typeof schema !== 'object' || depth > 20) return schema;
  if (Array.isArray(schema)) return schema.map((s) => resolve(doc, s, depth + 1));
  if (typeof schema.$ref === 'string' && schema.$ref.startsWith('#/')) {
    const target = schema.$ref.slice(2).split('/').reduce((node: any, part: string) => node?.[part.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
    return resolve(doc, target, depth + 1);
  }
  return Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, resolve(doc, v, depth + 1)]));
}

export interface Operation {
  /** The JSON body's schema, if the operation takes one. */
  body: JsonSchema | null;
  /** What the answer's `data` holds: for a page, one item's schema. */
  item: JsonSchema | null;
  summary: string;
}

/** An operation of the document: `operation('post', '/shop/orders')` (paths without /api/v1). */
export async function operation(method: string, path: string): Promise<Operation> {
  const doc = await openApi();
  const op = doc.paths?.[`${API}${path}`]?.[method.toLowerCase()];
  if (!op) throw new Error(`The API has no ${method.toUpperCase()} ${path} for this tenant (is its module enabled?)`);
  const body = resolve(doc, op.requestBody?.content?.['application/json']?.schema) ?? null;
  const ok = op.responses?.['200'] ?? op.responses?.['201'];
  const data = resolve(doc, ok?.content?.['application/json']?.schema)?.properties?.data ?? null;
  const item = data?.properties?.items?.type === 'array' ? data.properties.items.items : data;
  return { body, item, summary: op.summary ?? '' };
}
