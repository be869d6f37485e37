import { expect } from 'chai';
import type { TestApp } from '../../helpers/test-app.js';
import { as } from '../../helpers/tokens.js';

const made = new Map<string, Set<string>>();

/**
 * Makes `sku` a product of `tenant` (once per test process; a product made before is kept): cart recovery
 * leaves out skus that are not products of the tenant (CONTRACT.md 13).
 */
export async function ensureProduct(t: TestApp, tenant: string, sku: string): Promise<void> {
  const skus = made.get(tenant) ?? new Set<string>();
  made.set(tenant, skus);
  if (skus.has(sku)) return;
  const res = await t.http.post('/api/v1/erp/products').set(as(tenant, 'editor')).send({ sku, name: `Product ${sku}`, priceCents: 1000 });
  expect(res.status, JSON.stringify(res.body)).to.be.oneOf([201, 409]);
  skus.add(sku);
}
