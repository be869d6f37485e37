import { createHash } from 'node:crypto';
import getRawBody from 'raw-body';
import Koa from 'koa';
import { v7 as uuidv7 } from 'uuid';
import { priceCart, shippingCharge, type PricedProduct } from '../../packs/erp/cart-pricing.js';
import type { ShippingOption } from '../../packs/erp/shipping-options.service.js';
import type { TaxRegion } from '../../packs/erp/tax-rates.js';
import { serveComparator } from './harness.js';
import { countSql, fanoutSql, OUTBOX_INSERT, twinEngine } from './twin-engine.js';

/**
 * The hand-written twin of a storefront checkout with a manual method (POST /public/tenant/{t}/carts/{id}/checkout,
 * CONTRACT 15.3): the same transaction on the same tables, prepared statements, synchronous on better-sqlite3 (pg's
 * pool on PostgreSQL), no framework beyond Koa. In one transaction: the cart's conditional update (open, unexpired,
 * the token's), its lines, the products by sku, the region and the option; priced with the pack's arithmetic
 * (packs/erp/cart-pricing.ts); per line in id order the conditional stock update with its movement, revision,
 * audit entry and two outbox events; the co-purchase pairs; the order number; the order with its revision, audit
 * entry, record count and event; the payment deadline; the cart completed. Env: BENCH_DATABASE_URL, PORT,
 * PRODUCT_TABLE, REGION_TABLE, OPTION_TABLE, ORDER_TABLE, ORDER_SCHEMA_ID. The tenant comes from X-Tenant-Id.
 */
const URL_ = process.env.BENCH_DATABASE_URL!;
const sqlite = URL_.startsWith('sqlite:');
const { PRODUCT_TABLE, REGION_TABLE, OPTION_TABLE, ORDER_TABLE, ORDER_SCHEMA_ID } = process.env as Record<string, string>;
const BANK_TRANSFER_DAYS_MS = 7 * 24 * 3600_000;
const CART_LIFETIME_MS = 7 * 24 * 3600_000;

const engine = twinEngine(URL_);
const text = (f: string) => (sqlite ? `json_extract(data, '$.${f}')` : `(data->>'${f}')`);
const int = (f: string) => (sqlite ? `json_extract(data, '$.${f}')` : `((data->>'${f}')::numeric)`);
const setStock = sqlite
  ? `json_set(data, '$.physicalStock', ${int('physicalStock')} - ?)`
  : `jsonb_set(data, '{physicalStock}', to_jsonb((${int('physicalStock')} - ?)::bigint))`;
const parse = (data: unknown) => (typeof data === 'string' ? JSON.parse(data) : data) as Record<string, unknown>;
const FANOUT = fanoutSql(sqlite);
const CART_COLUMNS = 'id, status, currency, customer_ref, email, shipping_address, shipping_option_id, coupon_code, coupon_percent_off, created_at, updated_at, expires_at';

type Query = <R>(sql: string, args: unknown[]) => Promise<R[]>;
type Row = Record<string, unknown>;

/** A record write's revision and audit entry, as the records service keeps them (actor: the storefront, no user). */
async function keep(q: Query, tenantId: string, schema: string, record: Row, action: 'create' | 'update', now: string): Promise<void> {
  await q('INSERT INTO record_revisions (tenant_id, namespace, schema_name, record_id, version, action, at, actor_type, actor_id, actor_email, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
    [tenantId, 'erp', schema, record.id, record.version, action, now, 'system', 'public', null, JSON.stringify(record)]);
  await q('INSERT INTO audit_log (tenant_id, id, at, actor_type, actor_id, actor_email, action, target, request_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
    [tenantId, uuidv7(), now, 'system', 'public', null, action === 'create' ? 'record.created' : 'record.updated', `erp.${schema}/${record.id as string}`, 'twin']);
}

async function publish(q: Query, tenantId: string, name: string, payload: unknown, now: string): Promise<void> {
  const eventId = uuidv7();
  await q(`${OUTBOX_INSERT} VALUES (?, ?, ?, NULL, ?, ?)`, [tenantId, eventId, name, JSON.stringify(payload), now]);
  await q(FANOUT, [eventId, name, now, now, now, tenantId, sqlite ? 1 : true, null, name, name]);
}

async function checkout(tenantId: string, cartId: string, tokenHash: string, paymentMethod: string): Promise<{ status: number; body: unknown }> {
  const orderId = uuidv7();
  return engine.tx(async (q) => {
    const now = new Date().toISOString();
    const [cart] = await q<Row>(`UPDATE erp_carts SET updated_at = ?, expires_at = ? WHERE tenant_id = ? AND id = ? AND token_hash = ? AND status = 'open' AND expires_at > ? RETURNING ${CART_COLUMNS}`,
      [now, new Date(Date.now() + CART_LIFETIME_MS).toISOString(), tenantId, cartId, tokenHash, now]);
    if (!cart) return { status: 409, body: { error: 'conflict' } };
    const lines = (await q<{ sku: string; quantity: number }>('SELECT sku, quantity FROM erp_cart_items WHERE tenant_id = ? AND cart_id = ?', [tenantId, cartId]))
      .map((l) => ({ sku: l.sku, quantity: Number(l.quantity) })).sort((a, b) => (a.sku < b.sku ? -1 : 1));
    const found = await q<{ id: string; data: unknown }>(`SELECT id, data FROM ${PRODUCT_TABLE} WHERE tenant_id = ? AND ${text('sku')} IN (${lines.map(() => '?').join(', ')})`,
      [tenantId, ...lines.map((l) => l.sku)]);
    const products = new Map(found.map((r) => [parse(r.data).sku as string, { id: r.id, ...parse(r.data) } as unknown as PricedProduct]));
    const address = JSON.parse(cart.shipping_address as string) as { country: string };
    const [regionRow] = await q<{ data: unknown }>(`SELECT data FROM ${REGION_TABLE} WHERE tenant_id = ? AND ${text('country')} = ?`, [tenantId, address.country]);
    const [optionRow] = await q<{ id: string; data: unknown }>(`SELECT id, data FROM ${OPTION_TABLE} WHERE tenant_id = ? AND id = ?`, [tenantId, cart.shipping_option_id]);
    const region = regionRow ? { reducedRateBasisPoints: null, ...parse(regionRow.data) } as unknown as TaxRegion : null;
    const option = optionRow ? { id: optionRow.id, ...parse(optionRow.data) } as ShippingOption : null;
    const price = priceCart(lines, products, { percentOff: Number(cart.coupon_percent_off ?? 0), region, option });

    const taken = new Map<string, Row>();
    for (const line of [...lines].sort((a, b) => (products.get(a.sku)!.id < products.get(b.sku)!.id ? -1 : 1))) {
      const p = products.get(line.sku)!;
      const [row] = await q<{ id: string; data: unknown; version: number; created_at: string }>(
        `UPDATE ${PRODUCT_TABLE} SET data = ${setStock}, version = version + 1, updated_at = ? WHERE tenant_id = ? AND id = ? AND ${int('physicalStock')} >= ? `
        + `AND ${text('status')} = 'active' AND ${int('priceCents')} = ? RETURNING id, data, version, created_at`,
        [line.quantity, now, tenantId, p.id, line.quantity, p.priceCents]);
      // Thrown: the transaction rolls back, Koa answers 409.
      if (!row) throw Object.assign(new Error('insufficient_stock'), { status: 409, expose: true });
      type Stocked = Row & { id: string; version: number; physicalStock: number };
      const record = { id: row.id, ...parse(row.data), createdAt: row.created_at, updatedAt: now, version: Number(row.version) } as unknown as Stocked;
      taken.set(row.id, record);
      await q("INSERT INTO erp_stock_movements (tenant_id, id, product_id, delta, reason, order_id, note, stock_after, created_at) VALUES (?, ?, ?, ?, 'order', ?, NULL, ?, ?)",
        [tenantId, uuidv7(), row.id, -line.quantity, orderId, record.physicalStock, now]);
      await keep(q, tenantId, 'product', record, 'update', now);
      await publish(q, tenantId, 'erp.product.updated', { namespace: 'erp', schema: 'product', id: row.id, record, previous: { ...record, physicalStock: Number(record.physicalStock) + line.quantity, version: record.version - 1 } }, now);
      await publish(q, tenantId, 'erp.inventory.updated', { productId: row.id, number: record.number, sku: record.sku, physicalStock: record.physicalStock, priceCents: record.priceCents, currency: record.currency, taxRateBasisPoints: record.taxRateBasisPoints, status: record.status, version: record.version }, now);
    }
    const ids = [...taken.keys()].sort();
    const pairs = ids.flatMap((a) => ids.map((b) => [tenantId, a, b, 1]));
    await q(`INSERT INTO erp_co_purchases (tenant_id, product_id, other_id, orders) VALUES ${pairs.map(() => '(?, ?, ?, ?)').join(', ')} `
      + 'ON CONFLICT (tenant_id, product_id, other_id) DO UPDATE SET orders = erp_co_purchases.orders + 1', pairs.flat());
    const [{ value }] = await q<{ value: number }>(
      'INSERT INTO erp_sequences (tenant_id, name, value) VALUES (?, ?, 1) ON CONFLICT (tenant_id, name) DO UPDATE SET value = erp_sequences.value + 1 RETURNING value', [tenantId, 'order']);
    const shipping = shippingCharge(option, region, price.subtotalCents - price.discountCents);
    const data = {
      number: Number(value), status: 'placed', clientId: 1, customerRef: cart.customer_ref, paymentMethod, currency: cart.currency, couponCode: cart.coupon_code,
      items: price.items.map((i) => ({
        productId: products.get(i.sku)!.id, number: i.productNumber, sku: i.sku, name: i.name, quantity: i.quantity, unitPriceCents: i.unitPriceCents,
        taxRateBasisPoints: i.taxRateBasisPoints, discountCents: i.discountCents, netCents: i.netCents, taxCents: i.taxCents, totalCents: i.totalCents,
      })),
      subtotalCents: price.subtotalCents, discountCents: price.discountCents, taxCents: price.taxCents, totalCents: price.totalCents,
      cartId, email: cart.email, shippingAddress: address, shippingOption: shipping.option, shippingCents: shipping.cents, shippingTaxCents: shipping.taxCents,
      paymentStatus: 'pending', fulfillmentStatus: 'unfulfilled', refundedCents: 0, cancelReason: null, payments: [], fulfillments: [], refunds: [],
    };
    await q(`INSERT INTO ${ORDER_TABLE} (tenant_id, id, data, version, created_at, updated_at) VALUES (?, ?, ?, 1, ?, ?)`, [tenantId, orderId, JSON.stringify(data), now, now]);
    const order = { id: orderId, ...data, createdAt: now, updatedAt: now, version: 1 };
    await keep(q, tenantId, 'order', order, 'create', now);
    // The order schema's record counter, as the service keeps it: one shared row on SQLite, a row of its own on PostgreSQL.
    await q(countSql(sqlite), [tenantId, Number(ORDER_SCHEMA_ID), sqlite ? '' : uuidv7()]);
    await publish(q, tenantId, 'erp.order.created', { namespace: 'erp', schema: 'order', id: orderId, record: order, previous: null }, now);
    if (paymentMethod === 'bank_transfer') {
      await q("INSERT INTO erp_payment_deadlines (tenant_id, order_id, stage, due_at, attempts) VALUES (?, ?, 'payment', ?, 0)",
        [tenantId, orderId, new Date(Date.now() + BANK_TRANSFER_DAYS_MS).toISOString()]);
    }
    await q("UPDATE erp_carts SET status = 'completed', order_id = ? WHERE tenant_id = ? AND id = ?", [orderId, tenantId, cartId]);
    return { status: 201, body: { status: 'success', data: { order, payment: { provider: 'manual', method: paymentMethod, status: 'pending' } }, message: null, error: null } };
  });
}

const app = new Koa();
app.use(async (ctx) => {
  const tenantId = ctx.get('X-Tenant-Id');
  if (!tenantId) ctx.throw(400);
  const match = /^\/carts\/([^/]+)\/checkout$/.exec(ctx.path);
  if (ctx.method !== 'POST' || !match) ctx.throw(404);
  const body = JSON.parse(await getRawBody(ctx.req, { limit: 1024 * 1024, encoding: 'utf8' })) as { paymentMethod?: string };
  const method = body.paymentMethod;
  if (method !== 'bank_transfer' && method !== 'cash_on_delivery') return ctx.throw(400);
  const answer = await checkout(tenantId, match![1], createHash('sha256').update(ctx.get('X-Cart-Token')).digest('hex'), method);
  ctx.status = answer.status;
  ctx.type = 'application/json';
  ctx.body = JSON.stringify(answer.body);
});

serveComparator(app.callback(), () => engine.close());
