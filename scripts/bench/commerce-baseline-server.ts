import { createHash } from 'node:crypto';
import Koa from 'koa';
import getRawBody from 'raw-body';
import { v7 as uuidv7 } from 'uuid';
import { createAjv } from '../../core/base/ajv.js';
import { placeOrderBody } from '../../packs/erp/orders.routes.js';
import { serveComparator } from './harness.js';
import { AUDIT_INSERT, countSql, fanoutSql, OUTBOX_INSERT, REVISION_INSERT, twinEngine } from './twin-engine.js';

/**
 * The hand-written commerce comparator: the same order transaction and the same storefront read as the ERP
 * pack, on the same record tables, straight on better-sqlite3 or pg, no framework beyond Koa. No auth: the
 * tenant comes from X-Tenant-Id. Env: BENCH_DATABASE_URL, PORT, PRODUCT_TABLE, ORDER_TABLE, ORDER_SCHEMA_IDS
 * (JSON: tenant id → its order schema's id).
 *
 *   POST /orders          validate, read the products, then one transaction: per line (in id order) a
 *                         conditional stock UPDATE ... RETURNING, its movement, the order number, the order
 *                         row, and the outbox rows (order created; per product updated and inventory updated),
 *                         each with its fan-out to the tenant's connectors; as the contract asks of every record
 *                         write (16.3, 16.4), a revision and an audit entry per product and for the order, the
 *                         co-purchase pairs and the order schema's record counter
 *                         (one shared row on SQLite, a row of its own on PostgreSQL, as the service keeps them)
 *   GET /products/:sku    the active product by sku, gross price, ETag, 304 on If-None-Match
 */
const URL_ = process.env.BENCH_DATABASE_URL!;
const PRODUCTS = process.env.PRODUCT_TABLE!;
const ORDERS = process.env.ORDER_TABLE!;
const sqlite = URL_.startsWith('sqlite:');

// The same body schema as the ERP pack's route.
const validate = createAjv().compile(placeOrderBody);

interface Product { id: string; number: number; sku: string; name: string; priceCents: number; currency: string; physicalStock: number; taxRateBasisPoints: number; status: string; version: number }

const engine = twinEngine(URL_);
const field = (f: string, t: 'integer' | 'string', col = 'data') => (sqlite ? `json_extract(${col}, '$.${f}')` : t === 'integer' ? `((${col}->>'${f}')::numeric)` : `(${col}->>'${f}')`);
const setStock = sqlite
  ? `json_set(data, '$.physicalStock', ${field('physicalStock', 'integer')} - ?)`
  : `jsonb_set(data, '{physicalStock}', to_jsonb((${field('physicalStock', 'integer')} - ?)::bigint))`;
// Each event's deliveries to the tenant's matching connectors, as the outbox queues them (none in the benchmark).
const FANOUT = fanoutSql(sqlite);
const REVISION = `${REVISION_INSERT} VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;
const AUDIT = `${AUDIT_INSERT} VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`;
// Each tenant's order schema id, for its record counter.
const ORDER_SCHEMA_IDS = JSON.parse(process.env.ORDER_SCHEMA_IDS ?? '{}') as Record<string, number>;
const parse = (data: unknown) => (typeof data === 'string' ? JSON.parse(data) : data) as Record<string, unknown>;
const half = (n: bigint, bp: bigint) => (n * bp + 5_000n) / 10_000n;

const app = new Koa();
app.use(async (ctx) => {
  const tenantId = ctx.get('X-Tenant-Id');
  if (!tenantId) ctx.throw(400);
  if (ctx.method === 'POST' && ctx.path === '/orders') {
    const body = JSON.parse(await getRawBody(ctx.req, { limit: 1024 * 1024, encoding: 'utf8' })) as { clientId: number; paymentMethod: string; items: Array<{ productId: number; quantity: number; unitPrice: number }> };
    if (!validate(body)) ctx.throw(400);
    const numbers = body.items.map((i) => i.productId);
    const found = await engine.query<{ id: string; data: unknown }>(
      `SELECT id, data FROM ${PRODUCTS} WHERE tenant_id = ? AND ${field('number', 'integer')} IN (${numbers.map(() => '?').join(',')})`, [tenantId, ...numbers]);
    const byNumber = new Map(found.map((r) => { const p = { id: r.id, ...parse(r.data) } as Product; return [p.number, p]; }));
    for (const item of body.items) {
      const p = byNumber.get(item.productId);
      if (!p || p.status !== 'active' || p.priceCents !== item.unitPrice) ctx.throw(409);
    }
    const orderId = uuidv7();
    const orderSchemaId = ORDER_SCHEMA_IDS[tenantId];
    const requestId = ctx.get('X-Request-Id') || uuidv7();
    const order = await engine.tx(async (q) => {
      const now = new Date().toISOString();
      const taken = new Map<string, Product>();
      const lines = body.items.map((i) => ({ ...i, product: byNumber.get(i.productId)! })).sort((a, b) => (a.product.id < b.product.id ? -1 : 1));
      const events: Array<[string, unknown]> = [];
      for (const line of lines) {
        const rows = await q<{ id: string; data: unknown; version: number; created_at: string; updated_at: string }>(
          `UPDATE ${PRODUCTS} SET data = ${setStock}, version = version + 1, updated_at = ? WHERE tenant_id = ? AND id = ? AND ${field('physicalStock', 'integer')} >= ? `
          + `AND ${field('status', 'string')} = 'active' AND ${field('priceCents', 'integer')} = ? RETURNING id, data, version, created_at, updated_at`,
          [line.quantity, now, tenantId, line.product.id, line.quantity, line.unitPrice]);
        if (!rows[0]) throw Object.assign(new Error('insufficient_stock'), { status: 409 });
        const p = { id: rows[0].id, ...parse(rows[0].data), version: Number(rows[0].version) } as Product;
        taken.set(p.id, p);
        await q(`INSERT INTO erp_stock_movements (tenant_id, id, product_id, delta, reason, order_id, note, stock_after, created_at) VALUES (?, ?, ?, ?, 'order', ?, NULL, ?, ?)`,
          [tenantId, uuidv7(), p.id, -line.quantity, orderId, p.physicalStock, now]);
        await q(REVISION, [tenantId, 'erp', 'product', p.id, p.version, 'update', now, 'user', 'bench-user', null, JSON.stringify({ ...p, createdAt: rows[0].created_at, updatedAt: now })]);
        await q(AUDIT, [tenantId, uuidv7(), now, 'user', 'bench-user', null, 'record.updated', `erp.product/${p.id}`, requestId]);
        events.push(['erp.product.updated', { namespace: 'erp', schema: 'product', id: p.id, record: { ...p, createdAt: rows[0].created_at, updatedAt: now }, previous: { ...p, physicalStock: p.physicalStock + line.quantity, version: p.version - 1 } }]);
        events.push(['erp.inventory.updated', { productId: p.id, number: p.number, sku: p.sku, physicalStock: p.physicalStock, priceCents: p.priceCents, currency: p.currency, taxRateBasisPoints: p.taxRateBasisPoints, status: p.status, version: p.version }]);
      }
      const [{ value }] = await q<{ value: number }>(
        'INSERT INTO erp_sequences (tenant_id, name, value) VALUES (?, ?, 1) ON CONFLICT (tenant_id, name) DO UPDATE SET value = erp_sequences.value + 1 RETURNING value', [tenantId, 'order']);
      const items = body.items.map((i) => {
        const p = taken.get(byNumber.get(i.productId)!.id)!;
        const net = BigInt(i.quantity) * BigInt(i.unitPrice);
        const tax = half(net, BigInt(p.taxRateBasisPoints));
        return {
          productId: p.id, number: p.number, sku: p.sku, name: p.name, quantity: i.quantity, unitPriceCents: i.unitPrice, taxRateBasisPoints: p.taxRateBasisPoints,
          discountCents: 0, netCents: Number(net), taxCents: Number(tax), totalCents: Number(net + tax),
        };
      });
      const sum = (k: 'netCents' | 'taxCents' | 'totalCents') => items.reduce((s, i) => s + i[k], 0);
      const data = { number: Number(value), status: 'placed', clientId: body.clientId, customerRef: null, paymentMethod: body.paymentMethod, currency: 'EUR', couponCode: null, items, subtotalCents: sum('netCents'), discountCents: 0, taxCents: sum('taxCents'), totalCents: sum('totalCents') };
      await q(`INSERT INTO ${ORDERS} (tenant_id, id, data, version, created_at, updated_at) VALUES (?, ?, ?, 1, ?, ?)`, [tenantId, orderId, JSON.stringify(data), now, now]);
      const record = { id: orderId, ...data, createdAt: now, updatedAt: now, version: 1 };
      await q(REVISION, [tenantId, 'erp', 'order', orderId, 1, 'create', now, 'user', 'bench-user', null, JSON.stringify(record)]);
      await q(AUDIT, [tenantId, uuidv7(), now, 'user', 'bench-user', null, 'record.created', `erp.order/${orderId}`, requestId]);
      const ids = [...taken.keys()];
      const pairs = ids.flatMap((a) => ids.map((b) => [tenantId, a, b, 1]));
      await q(`INSERT INTO erp_co_purchases (tenant_id, product_id, other_id, orders) VALUES ${pairs.map(() => '(?, ?, ?, ?)').join(', ')} `
        + 'ON CONFLICT (tenant_id, product_id, other_id) DO UPDATE SET orders = erp_co_purchases.orders + 1', pairs.flat());
      await q(countSql(sqlite), [tenantId, orderSchemaId, sqlite ? '' : uuidv7()]);
      events.unshift(['erp.order.created', { namespace: 'erp', schema: 'order', id: orderId, record, previous: null }]);
      for (const [name, payload] of events) {
        const eventId = uuidv7();
        await q(`${OUTBOX_INSERT} VALUES (?, ?, ?, NULL, ?, ?)`, [tenantId, eventId, name, JSON.stringify(payload), now]);
        await q(FANOUT, [eventId, name, now, now, now, tenantId, sqlite ? 1 : true, null, name, name]);
      }
      return record;
    });
    ctx.status = 201;
    ctx.body = { status: 'success', data: order, message: null, error: null };
    return;
  }
  const match = /^\/products\/([^/]+)$/.exec(ctx.path);
  if (ctx.method !== 'GET' || !match) ctx.throw(404);
  const rows = await engine.query<{ data: unknown }>(`SELECT data FROM ${PRODUCTS} WHERE tenant_id = ? AND ${field('sku', 'string')} = ? AND ${field('status', 'string')} = 'active'`, [tenantId, decodeURIComponent(match![1])]);
  if (!rows[0]) ctx.throw(404);
  const p = parse(rows[0].data) as unknown as Product & { description?: string };
  const view = {
    number: p.number, sku: p.sku, name: p.name, description: p.description ?? null, priceCents: p.priceCents, currency: p.currency, taxRateBasisPoints: p.taxRateBasisPoints,
    grossPriceCents: p.priceCents + Number(half(BigInt(p.priceCents), BigInt(p.taxRateBasisPoints))), inStock: p.physicalStock > 0, availableStock: p.physicalStock, imageUrls: [],
  };
  const text = JSON.stringify({ status: 'success', data: view, message: null, error: null });
  const etag = `"${createHash('sha256').update(text).digest('base64url').slice(0, 27)}"`;
  ctx.set('Cache-Control', 'public, max-age=5');
  ctx.set('ETag', etag);
  if (ctx.get('If-None-Match') === etag) {
    ctx.status = 304;
    return;
  }
  ctx.type = 'application/json';
  ctx.body = text;
});

serveComparator(app.callback(), () => engine.close());
