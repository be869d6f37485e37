import Database from 'better-sqlite3';
import Koa from 'koa';
import pg from 'pg';
import { serveComparator } from './harness.js';
import { fixedTenant } from './twin-engine.js';
import { inValues } from '../../core/db/dialects/dialect.js';
import { sqliteDialect } from '../../core/db/dialects/sqlite.js';

/**
 * The expansion's hand-written twin (npm run bench:day-two, scenario `expand`): `GET /<name>?limit=50` lists the
 * newest records of the kernel's own `bench.<name>` table, and with `&expand=1` puts the referenced bench.category
 * records in place of their ids (bench.linked's `category`, bench.tagged's three `categories`), as a good engineer
 * would write it by hand: the page and the referenced records each by one prepared statement (better-sqlite3,
 * synchronous, the tenant and the ids bound as the service binds them; pg, named statements), the documents parsed
 * by JSON.parse, the field replaced in place, the answer serialised by JSON.stringify. The same items as the service's
 * list with `count=false` (on SQLite byte for byte; on PostgreSQL an expanded member keeps its place in jsonb's order,
 * where the service puts it last). No auth: the tenant comes from X-Tenant-Id. Env: BENCH_DATABASE_URL, PORT.
 */
interface Row { id: string; data: string; version: number; created_at: string; updated_at: string }
interface Store {
  /** The kernel's schemas table: each tenant's record tables. */
  schemas(): Promise<Array<Record<string, string>>>;
  page(table: string, tenantId: string, limit: number): Promise<Row[]>;
  byIds(table: string, tenantId: string, ids: string[]): Promise<Row[]>;
  close(): Promise<void>;
}

const COLUMNS = 'id, data, version, created_at, updated_at';
const SCHEMAS = 'SELECT tenant_id, namespace, name, table_name FROM schemas';
/** The relation each listed schema expands (bench-schema.ts). */
const RELATIONS: Record<string, { field: string; target: string }> = {
  linked: { field: 'category', target: 'category' },
  tagged: { field: 'categories', target: 'category' },
};

function sqliteStore(file: string): Store {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  const prepared = new Map<string, Database.Statement>();
  const statement = (sql: string) => {
    let s = prepared.get(sql);
    if (!s) prepared.set(sql, (s = db.prepare(fixedTenant(sql))));
    return s;
  };
  return {
    async schemas() { return db.prepare(SCHEMAS).all() as Array<Record<string, string>>; },
    async page(table, tenantId, limit) {
      return statement(`SELECT ${COLUMNS} FROM ${table} WHERE tenant_id = ? ORDER BY created_at DESC, id DESC LIMIT ?`).all(tenantId, limit) as Row[];
    },
    // The ids as the service binds them (inValues): a list of placeholders padded to a power of two, not json_each,
    // for which SQLite fills an ephemeral table at every run (docs/data-api.md, Relations).
    async byIds(table, tenantId, ids) {
      if (!ids.length) return [];
      const list = inValues(sqliteDialect, ids);
      return statement(`SELECT ${COLUMNS} FROM ${table} WHERE tenant_id = ? AND id IN ${list.sql}`).all(tenantId, ...list.bindings) as Row[];
    },
    async close() { db.close(); },
  };
}

function postgresStore(url: string): Store {
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  const columns = COLUMNS.replace('data', 'data::text AS data');
  const query = async (name: string, text: string, values: unknown[]) => (await pool.query({ name, text, values })).rows as Row[];
  return {
    schemas: async () => (await pool.query(SCHEMAS)).rows as Array<Record<string, string>>,
    page: (table, tenantId, limit) => query(`page_${table}`, `SELECT ${columns} FROM ${table} WHERE tenant_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2`, [tenantId, limit]),
    byIds: async (table, tenantId, ids) => (!ids.length ? [] : query(`ids_${table}`, `SELECT ${columns} FROM ${table} WHERE tenant_id = $1 AND id = ANY($2)`, [tenantId, ids])),
    async close() { await pool.end(); },
  };
}

const url = process.env.BENCH_DATABASE_URL!;
const store = url.startsWith('sqlite:') ? sqliteStore(url.slice('sqlite:'.length)) : postgresStore(url);
const tables = new Map((await store.schemas()).map((r) => [`${r.tenant_id}/${r.namespace}.${r.name}`, r.table_name]));
const record = (r: Row, data: Record<string, unknown>) => ({ id: r.id, ...data, createdAt: r.created_at, updatedAt: r.updated_at, version: r.version });

const app = new Koa();
app.use(async (ctx) => {
  const tenantId = ctx.get('X-Tenant-Id');
  const name = ctx.path.slice(1);
  const table = tables.get(`${tenantId}/bench.${name}`);
  if (!table) {
    ctx.status = tenantId ? 404 : 400;
    return;
  }
  const limit = Math.min(Number(ctx.query.limit ?? 50), 200);
  const rows = await store.page(table, tenantId, limit + 1);
  const page = rows.slice(0, limit);
  const documents = page.map((r) => JSON.parse(r.data) as Record<string, unknown>);
  const relation = ctx.query.expand ? RELATIONS[name] : undefined;
  if (relation) {
    const ids = new Set<string>();
    for (const d of documents) {
      const v = d[relation.field];
      if (Array.isArray(v)) for (const id of v) ids.add(id as string);
      else if (typeof v === 'string') ids.add(v);
    }
    const found = new Map<string, Record<string, unknown>>();
    const target = tables.get(`${tenantId}/bench.${relation.target}`)!;
    for (const r of await store.byIds(target, tenantId, [...ids])) found.set(r.id, record(r, JSON.parse(r.data) as Record<string, unknown>));
    for (const d of documents) {
      const v = d[relation.field];
      // Assigned in place: the member keeps its place in the document.
      d[relation.field] = Array.isArray(v) ? v.map((id) => found.get(id as string) ?? null) : found.get(v as string) ?? null;
    }
  }
  const items = page.map((r, i) => record(r, documents[i]));
  const hasMore = rows.length > limit;
  const last = items[items.length - 1];
  const nextCursor = hasMore && last ? Buffer.from(JSON.stringify([last.createdAt, last.id])).toString('base64url') : null;
  ctx.body = { status: 'success', data: { items, pagination: { limit, offset: 0, total: null, totalEstimated: false, hasMore, nextCursor } } };
});

serveComparator(app.callback(), () => store.close());
