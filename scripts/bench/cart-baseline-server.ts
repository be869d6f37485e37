import Database from 'better-sqlite3';
import Koa from 'koa';
import pg from 'pg';
import { createHash } from 'node:crypto';
import { priceCart, type PricedProduct } from '../../packs/erp/cart-pricing.js';
import type { ShippingOption } from '../../packs/erp/shipping-options.service.js';
import type { TaxRegion } from '../../packs/erp/tax-rates.js';
import { serveComparator } from './harness.js';
import { fixedTenant } from './twin-engine.js';

/**
 * The hand-written twin of a priced cart read (GET /public/tenant/{t}/carts/{id}): the same reads on the same
 * tables, as prepared statements, synchronous on better-sqlite3 (pg's pool on PostgreSQL), no framework
 * beyond Koa: the cart and its lines in one statement (by tenant, id and token hash), the products by sku in
 * one, then the tax region by country and the shipping option by id; priced with the same arithmetic
 * (packs/erp/cart-pricing.ts) and answered in the same shape. Env: BENCH_DATABASE_URL, PORT, PRODUCT_TABLE,
 * REGION_TABLE, OPTION_TABLE. The tenant comes from X-Tenant-Id.
 */
const URL_ = process.env.BENCH_DATABASE_URL!;
const sqlite = URL_.startsWith('sqlite:');
const { PRODUCT_TABLE, REGION_TABLE, OPTION_TABLE } = process.env as Record<string, string>;

type Read = <T>(sql: string, args: unknown[]) => T[] | Promise<T[]>;

function reader(): { read: Read; close(): Promise<void> } {
  if (sqlite) {
    const db = new Database(URL_.slice('sqlite:'.length), { readonly: true });
    db.pragma('busy_timeout = 5000');
    const prepared = new Map<string, Database.Statement>();
    return {
      read: <T>(sql: string, args: unknown[]) => {
        let s = prepared.get(sql);
        if (!s) prepared.set(sql, (s = db.prepare(fixedTenant(sql))));
        return s.all(...args) as T[];
      },
      async close() { db.close(); },
    };
  }
  const pool = new pg.Pool({ connectionString: URL_, max: 10 });
  const numbered = (sql: string) => { let n = 0; return sql.replace(/\?/g, () => `$${++n}`); };
  return {
    read: async <T>(sql: string, args: unknown[]) => (await pool.query({ name: createHash('md5').update(sql).digest('hex'), text: numbered(sql), values: args })).rows as T[],
    async close() { await pool.end(); },
  };
}

const { read, close } = reader();
const text = (f: string) => (sqlite ? `json_extract(data, '$.${f}')` : `(data->>'${f}')`);
const parse = (data: unknown) => (typeof data === 'string' ? JSON.parse(data) : data) as Record<string, unknown>;

interface CartRow {
  id: string; status: string; currency: string; customer_ref: string | null; email: string | null; shipping_address: string | null;
  shipping_option_id: string | null; coupon_code: string | null; coupon_percent_off: number | null; created_at: string; updated_at: string;
  expires_at: string; sku: string | null; quantity: number | null;
}

const app = new Koa();
app.use(async (ctx) => {
  const tenantId = ctx.get('X-Tenant-Id');
  if (!tenantId) ctx.throw(400);
  const match = /^\/carts\/([^/]+)$/.exec(ctx.path);
  if (ctx.method !== 'GET' || !match) ctx.throw(404);
  const hash = createHash('sha256').update(ctx.get('X-Cart-Token')).digest('hex');
  const rows = await read<CartRow>(
    'SELECT c.id, c.status, c.currency, c.customer_ref, c.email, c.shipping_address, c.shipping_option_id, c.coupon_code, c.coupon_percent_off, '
    + 'c.created_at, c.updated_at, c.expires_at, i.sku, i.quantity FROM erp_carts c '
    + 'LEFT JOIN erp_cart_items i ON i.tenant_id = c.tenant_id AND i.cart_id = c.id WHERE c.tenant_id = ? AND c.id = ? AND c.token_hash = ?',
    [tenantId, match![1], hash]);
  if (!rows.length) ctx.throw(404);
  const cart = rows[0];
  const lines = rows.filter((r) => r.sku !== null).map((r) => ({ sku: r.sku!, quantity: Number(r.quantity) }));
  const address = cart.shipping_address ? JSON.parse(cart.shipping_address) as { country: string } : null;
  const products = new Map<string, PricedProduct>();
  if (lines.length) {
    const found = await read<{ data: unknown }>(`SELECT data FROM ${PRODUCT_TABLE} WHERE tenant_id = ? AND ${text('sku')} IN (${lines.map(() => '?').join(', ')})`,
      [tenantId, ...lines.map((l) => l.sku)]);
    for (const r of found) {
      const p = parse(r.data) as unknown as PricedProduct;
      products.set(p.sku, p);
    }
  }
  const [regionRow] = address ? await read<{ data: unknown }>(`SELECT data FROM ${REGION_TABLE} WHERE tenant_id = ? AND ${text('country')} = ?`, [tenantId, address.country]) : [];
  const [optionRow] = cart.shipping_option_id ? await read<{ id: string; data: unknown }>(`SELECT id, data FROM ${OPTION_TABLE} WHERE tenant_id = ? AND id = ?`, [tenantId, cart.shipping_option_id]) : [];
  const region = regionRow ? parse(regionRow.data) as unknown as TaxRegion : null;
  const option = optionRow ? { id: optionRow.id, ...parse(optionRow.data) } as ShippingOption : null;
  const applies = option && option.active && option.currency === cart.currency && address && option.countries.includes(address.country) ? option : null;
  const priced = region ? { ...region, reducedRateBasisPoints: region.reducedRateBasisPoints ?? null } : null;
  const price = priceCart(lines, products, { percentOff: cart.coupon_percent_off ?? 0, region: priced, option: applies });
  const status = cart.status === 'open' && cart.expires_at <= new Date().toISOString() ? 'expired' : cart.status;
  ctx.type = 'application/json';
  ctx.body = JSON.stringify({
    status: 'success',
    data: {
      id: cart.id, status, currency: cart.currency, customerRef: cart.customer_ref, email: cart.email, items: price.items, shippingAddress: address,
      shippingOption: price.shippingOption, couponCode: cart.coupon_code, subtotalCents: price.subtotalCents, discountCents: price.discountCents,
      shippingCents: price.shippingCents, taxCents: price.taxCents, totalCents: price.totalCents, order: null,
      expiresAt: cart.expires_at, createdAt: cart.created_at, updatedAt: cart.updated_at,
    },
    message: null, error: null,
  });
});

serveComparator(app.callback(), close);
