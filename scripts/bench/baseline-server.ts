import Koa from 'koa';
import getRawBody from 'raw-body';
import { v7 as uuidv7 } from 'uuid';
import { createAjv } from '../../core/base/ajv.js';
import { eventBodySchema } from '../../packs/crm/events.service.js';
import { serveComparator } from './harness.js';
import { BENCH_SCHEMA } from './bench-schema.js';
import { openBaselineStore, type BaselineRow } from './baseline-store.js';

/**
 * The hand-written comparator: a minimal Koa endpoint doing the same insert and the same list with the
 * same ajv validation, straight on better-sqlite3 or pg. No auth: the tenant comes from X-Tenant-Id.
 * Env: BENCH_DATABASE_URL, PORT.
 */
const store = openBaselineStore(process.env.BENCH_DATABASE_URL!);
const validate = createAjv({ useDefaults: true }).compile(BENCH_SCHEMA.schema);
const validateEvent = createAjv().compile(eventBodySchema(false));
const app = new Koa();

const flat = (r: BaselineRow) => ({
  id: r.id, ...(typeof r.data === 'string' ? JSON.parse(r.data) : r.data), createdAt: r.created_at, updatedAt: r.updated_at, version: r.version,
});

app.use(async (ctx) => {
  const tenantId = ctx.get('X-Tenant-Id');
  if (!tenantId) ctx.throw(400);
  if (ctx.path === '/crm-events' && ctx.method === 'POST') {
    await recordEvent(ctx, tenantId);
    return;
  }
  if (ctx.path !== '/items') ctx.throw(404);
  if (ctx.method === 'POST') {
    if (!ctx.is('application/json')) ctx.throw(415);
    const data = JSON.parse(await getRawBody(ctx.req, { limit: 1024 * 1024, encoding: 'utf8' })) as Record<string, unknown>;
    if (!validate(data)) {
      ctx.status = 400;
      ctx.body = { status: 'fail', data: { code: 'validation_failed', errors: validate.errors } };
      return;
    }
    const id = uuidv7();
    const now = new Date().toISOString();
    await store.insert(tenantId, id, data, now);
    ctx.status = 201;
    ctx.set('ETag', '"1"');
    ctx.body = { status: 'success', data: { item: { id, ...data, createdAt: now, updatedAt: now, version: 1 } } };
    return;
  }
  const limit = Math.min(Number(ctx.query.limit ?? 50), 200);
  const category = ctx.query.category;
  const rows = typeof category === 'string'
    ? await store.newestInCategory(tenantId, category, limit + 1)
    : await store.newest(tenantId, limit + 1);
  const items = rows.slice(0, limit).map(flat);
  const hasMore = rows.length > limit;
  const last = items[items.length - 1];
  const nextCursor = hasMore && last ? Buffer.from(JSON.stringify([last.createdAt, last.id])).toString('base64url') : null;
  ctx.body = { status: 'success', data: { items, pagination: { limit, offset: 0, total: null, hasMore, nextCursor } } };
});

/** POST /crm/events by hand: the same body schema and checks, the same insert into crm_events. */
async function recordEvent(ctx: Koa.Context, tenantId: string): Promise<void> {
  if (!ctx.is('application/json')) ctx.throw(415);
  const body = JSON.parse(await getRawBody(ctx.req, { limit: 1024 * 1024, encoding: 'utf8' })) as Record<string, any>;
  const receivedAt = new Date().toISOString();
  const at = body.occurredAt ? Date.parse(body.occurredAt) : Date.now();
  if (!validateEvent(body) || body.customerRef.includes('@') || Buffer.byteLength(JSON.stringify(body.eventData ?? {})) > 16384
    || at > Date.now() + 300_000 || at < Date.now() - 30 * 86400_000) {
    ctx.status = 400;
    ctx.body = { status: 'error', data: null, message: 'invalid event', error: { code: 'validation_failed', details: validateEvent.errors ?? [] } };
    return;
  }
  const id = uuidv7();
  const inserted = await store.insertEvent(tenantId, {
    id, eventId: body.eventId ?? null, eventType: body.eventType, customerRef: body.customerRef, eventData: body.eventData ?? {},
    occurredAt: new Date(at).toISOString(), receivedAt,
  });
  ctx.status = inserted ? 201 : 200;
  ctx.body = { status: 'success', data: { id, duplicate: !inserted }, message: null, error: null };
}

serveComparator(app.callback(), () => store.close());
