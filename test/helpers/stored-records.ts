import type supertest from 'supertest';
import { newId } from '../../core/base/ids.js';
import { systemContext } from '../../core/base/request-context.js';
import type { TestApp } from './test-app.js';
import { as } from './tokens.js';

/**
 * Stores `count` records of ns.name for the tenant straight through the repository (many records in a few
 * seconds): titles `r<i>`, qty i, written a minute ago at version 1. Returns that time.
 */
export async function storeRecords(t: TestApp, tenant: string, ns: string, name: string, count: number): Promise<string> {
  const kernel = t.app.kernel;
  const rc = systemContext(tenant);
  const schema = await kernel.schemas.resolve(rc, ns, name);
  const at = new Date(Date.now() - 60_000).toISOString();
  const records = Array.from({ length: count }, (_, i) => ({ id: newId(), title: `r${i}`, qty: i, createdAt: at, updatedAt: at, version: 1 }));
  await kernel.db.transaction(rc, (trx) => kernel.records.repository.bulkInsert(trx, schema, records));
  return at;
}

/** Every record of ns.name the tenant's viewer lists (GET /data, page by page), by id. */
export async function listEvery(http: ReturnType<typeof supertest>, tenant: string, ns: string, name: string): Promise<Map<string, any>> {
  const found = new Map<string, any>();
  let cursor: string | null = null;
  do {
    const page: any = (await http.get(`/api/v1/data/${ns}/${name}`).query({ limit: 200, count: 'false', ...(cursor ? { cursor } : {}) })
      .set(as(tenant, 'viewer')).expect(200)).body.data;
    for (const item of page.items) found.set(item.id, item);
    cursor = page.pagination.nextCursor;
  } while (cursor);
  return found;
}
