import type { DataProvider, GetListParams, GetListResult, RaRecord } from 'react-admin';
import { api, call, query } from './client.js';
import { session } from './session.js';

/** Fields the server manages on every record; never sent back. */
export const SERVER_FIELDS = ['id', 'createdAt', 'updatedAt', 'version'];

/**
 * Cursor per page of a list: page n+1 of the same filter and sort is read with the `nextCursor` page n
 * answered (keyset paging, as fast on page 2,000 as on page 1); a page reached otherwise uses offset.
 */
const cursors = new Map<string, string>();
const cursorKey = (resource: string, params: GetListParams, page: number) =>
  JSON.stringify([session.tenant, resource, params.filter, params.sort, params.pagination?.perPage, page]);
/**
 * The exact total of a list (same filter and sort), counted when page 1 is read: a page turn with the cursor
 * asks for `count=false` and shows that total again (no COUNT over 100,000 rows per click). Page 1, a
 * refresh of it, or a new filter or sort counts again.
 */
const totals = new Map<string, number>();

function listQuery(params: GetListParams, cursor: string | undefined, count: boolean): Record<string, string | number> {
  const { page = 1, perPage = 25 } = params.pagination ?? {};
  const q: Record<string, string | number> = { limit: perPage };
  if (!count) q.count = 'false';
  if (cursor) q.cursor = cursor;
  else if (page > 1) q.offset = (page - 1) * perPage;
  if (params.sort?.field) q.sort = `${params.sort.order === 'DESC' ? '-' : ''}${params.sort.field}`;
  // A filter key is `field` (equals) or `field|op` with op of the query language.
  for (const [key, value] of Object.entries(params.filter ?? {})) {
    if (value === undefined || value === null || value === '') continue;
    const [field, op] = key.split('|');
    q[op ? `filter[${field}][${op}]` : `filter[${field}]`] = Array.isArray(value) ? value.join(',') : String(value);
  }
  return q;
}

interface Page { items: RaRecord[]; pagination: { total: number | null; hasMore: boolean; nextCursor: string | null } }

/** The records of `ns.name` through the universal data API (/data/{ns}/{name}). */
async function listRecords(resource: string, params: GetListParams): Promise<GetListResult> {
  const [ns, name] = resource.split('.');
  const page = params.pagination?.page ?? 1;
  const cursor = cursors.get(cursorKey(resource, params, page));
  const totalKey = cursorKey(resource, params, 0);
  const known = page > 1 && cursor ? totals.get(totalKey) : undefined;
  const data = await api<Page>(`/data/${ns}/${name}${query(listQuery(params, cursor, known === undefined))}`);
  if (data.pagination.nextCursor) cursors.set(cursorKey(resource, params, page + 1), data.pagination.nextCursor);
  const total = data.pagination.total ?? known ?? null;
  if (data.pagination.total !== null) totals.set(totalKey, data.pagination.total);
  return total === null
    ? { data: data.items, pageInfo: { hasNextPage: data.pagination.hasMore, hasPreviousPage: page > 1 } }
    : { data: data.items, total };
}

/** A JSON merge patch (RFC 7396) from the form's values: changed fields, removed ones as null. */
export function mergePatch(next: Record<string, unknown>, previous: Record<string, unknown>): Record<string, unknown> {
  const patch: Record<string, unknown> = {};
  for (const key of new Set([...Object.keys(next), ...Object.keys(previous)])) {
    if (SERVER_FIELDS.includes(key)) continue;
    const value = next[key] === undefined || next[key] === '' ? null : next[key];
    if (JSON.stringify(value) !== JSON.stringify(previous[key] ?? null)) patch[key] = value;
  }
  return patch;
}

/** Drops empty inputs so that optional fields are left out rather than sent as "" or null. */
export function compact(values: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(values).filter(([key, v]) => !SERVER_FIELDS.includes(key) && v !== undefined && v !== null && v !== ''));
}

interface Endpoint {
  list: (params: GetListParams) => Promise<GetListResult>;
  path: (id?: string | number) => string;
  /** The item of a one-record answer. */
  item?: (data: any) => RaRecord;
}

const bffList = (path: () => string) => async (params: GetListParams): Promise<GetListResult> => {
  const { page = 1, perPage = 25 } = params.pagination ?? {};
  const data = await api<{ items: RaRecord[]; pagination?: { total: number } } | RaRecord[]>(
    `${path()}${query({ limit: perPage, offset: (page - 1) * perPage })}`);
  const items = Array.isArray(data) ? data : data.items;
  return { data: items, total: Array.isArray(data) ? items.length : data.pagination?.total ?? items.length };
};

/** Resources that are not records of a schema, each over its own public endpoint. */
const ENDPOINTS: Record<string, Endpoint> = {
  schemas: {
    list: async () => {
      const data = await api<{ items: any[] }>('/metadata/schemas');
      const items = data.items.map((s) => ({ ...s, id: `${s.namespace}.${s.name}` }));
      return { data: items, total: items.length };
    },
    path: (id) => (id === undefined ? '/metadata/schemas' : `/metadata/schemas/${String(id).replace('.', '/')}`),
    item: (data) => ({ ...data.item, id: `${data.item.namespace}.${data.item.name}` }),
  },
  connectors: {
    list: bffList(() => '/connectors'),
    path: (id) => (id === undefined ? '/connectors' : `/connectors/${id}`),
  },
};

export const dataProvider: DataProvider = {
  async getList(resource, params) {
    const endpoint = ENDPOINTS[resource];
    return endpoint ? endpoint.list(params) : listRecords(resource, params);
  },
  async getOne(resource, params) {
    const endpoint = ENDPOINTS[resource];
    if (endpoint) {
      const data = await api(endpoint.path(params.id));
      return { data: endpoint.item ? endpoint.item(data) : data };
    }
    const [ns, name] = resource.split('.');
    // In a locale (the form's locale switcher): that locale's own values, empty where it has none.
    const inLocale = params.meta?.locale ? query({ locale: params.meta.locale, fallback: 'false' }) : '';
    return { data: (await api<{ item: RaRecord }>(`/data/${ns}/${name}/${params.id}${inLocale}`)).item };
  },
  async getMany(resource, params) {
    if (ENDPOINTS[resource]) {
      const results = await Promise.all(params.ids.map((id) => dataProvider.getOne(resource, { id })));
      return { data: results.map((r) => r.data) };
    }
    // Records: one request per 100 ids (`filter[id][in]`), however many references a page shows.
    const [ns, name] = resource.split('.');
    const ids = [...new Set(params.ids.map(String))];
    const pages = [];
    for (let i = 0; i < ids.length; i += 100) {
      const chunk = ids.slice(i, i + 100);
      pages.push(api<Page>(`/data/${ns}/${name}${query({ 'filter[id][in]': chunk.join(','), limit: chunk.length, count: 'false' })}`));
    }
    return { data: (await Promise.all(pages)).flatMap((p) => p.items) as any[] };
  },
  async getManyReference(resource, params) {
    return dataProvider.getList(resource, { ...params, filter: { ...params.filter, [params.target]: params.id } });
  },
  async create(resource, params) {
    const endpoint = ENDPOINTS[resource];
    if (endpoint) {
      const data = await api(endpoint.path(), { method: 'POST', body: params.data });
      return { data: endpoint.item ? endpoint.item(data) : data };
    }
    const [ns, name] = resource.split('.');
    return { data: (await api<{ item: RaRecord }>(`/data/${ns}/${name}`, { method: 'POST', body: compact(params.data) })).item } as any;
  },
  async update(resource, params) {
    const endpoint = ENDPOINTS[resource];
    if (endpoint) {
      const data = await api(endpoint.path(params.id), { method: 'PATCH', body: mergePatch(params.data, params.previousData) });
      return { data: endpoint.item ? endpoint.item(data) : data };
    }
    const [ns, name] = resource.split('.');
    // If-Match: the version the form was loaded with; a change made meanwhile answers 412.
    const inLocale = params.meta?.locale ? query({ locale: params.meta.locale, fallback: 'false' }) : '';
    const result = await call<{ item: RaRecord }>(`/data/${ns}/${name}/${params.id}${inLocale}`, {
      method: 'PATCH', body: mergePatch(params.data, params.previousData), headers: { 'If-Match': `"${params.previousData.version}"` },
    });
    return { data: result.data.item } as any;
  },
  async updateMany(resource, params) {
    for (const id of params.ids) {
      const { data } = await dataProvider.getOne(resource, { id });
      await dataProvider.update(resource, { id, data: { ...data, ...params.data }, previousData: data });
    }
    return { data: params.ids };
  },
  async delete(resource, params) {
    const endpoint = ENDPOINTS[resource];
    const [ns, name] = resource.split('.');
    await api(endpoint ? endpoint.path(params.id) : `/data/${ns}/${name}/${params.id}`, { method: 'DELETE' });
    return { data: params.previousData ?? ({ id: params.id } as any) };
  },
  async deleteMany(resource, params) {
    for (const id of params.ids) await dataProvider.delete(resource, { id });
    return { data: params.ids };
  },
};
