import { createHash } from 'node:crypto';
import { expect } from 'chai';
import type { Knex } from 'knex';
import { connectDatabase } from '../../../core/db/connect.js';
import { PLATFORM_SCOPE } from '../../../core/metadata/schema-definition.js';
import { createTestDatabase, ENGINE, type TestDatabase } from '../../helpers/engine.js';
import { startServiceProcess, type ServiceProcess } from '../../helpers/service-process.js';
import { uniqueTenantId } from '../../helpers/test-app.js';
import { superadmin } from '../../helpers/tokens.js';

/**
 * POST /erp/orders keeps its Idempotency-Key answer in the order's own transaction (core/http/idempotency.ts,
 * `idempotent: 'in-transaction'`): whenever a process dies, an order that committed has its answer kept with
 * it, and a key without an answer has no order. Before, the answer was kept just after the commit: a crash in
 * between left a committed order behind a key that looked unanswered, which after 5 minutes could be claimed
 * again and place the order a second time.
 */
describe(`ERP orders: Idempotency-Key across a process crash (${ENGINE})`, function () {
  this.timeout(120_000);
  let database: TestDatabase;
  let knex: Knex;
  let survivor: ServiceProcess;
  const victims: ServiceProcess[] = [];

  before(async () => {
    database = await createTestDatabase();
    survivor = await startServiceProcess(database.url);
    knex = connectDatabase(database.url, 5).knex;
  });

  after(async () => {
    for (const s of [...victims, survivor]) {
      if (!s) continue;
      s.kill('SIGKILL');
      await s.exited;
    }
    await knex?.destroy();
    await database?.drop();
  });

  // The key's hash as core/http/idempotency.ts makes it: the method and path, the caller (here the test key), the key.
  const keyHash = (key: string) => createHash('sha256').update(`POST /api/v1/erp/orders\ntest_key:test-key\n${key}`).digest('hex');
  const body = (productId: number) => ({ clientId: 7, paymentMethod: 'bank_transfer', items: [{ productId, quantity: 1, unitPrice: 999 }] });

  async function shop(): Promise<{ tenant: string; product: { id: string; number: number } }> {
    const tenant = uniqueTenantId('crash');
    await survivor.http.post('/api/v1/admin/tenants').set(superadmin()).send({ id: tenant, name: 'Crash' }).expect(201);
    const product = (await survivor.http.post('/api/v1/erp/products').set(superadmin(tenant))
      .send({ sku: 'CRASH-1', name: 'Fragile', priceCents: 999, physicalStock: 10 }).expect(201)).body.data;
    return { tenant, product };
  }

  /** The order lines taken for the tenant and the key's stored status, read in ONE statement (one snapshot). */
  async function snapshot(tenant: string, key: string): Promise<{ lines: number; claimed: boolean; status: number | null }> {
    const rows = await knex.raw(
      "SELECT (SELECT count(*) FROM erp_stock_movements WHERE tenant_id = ? AND reason = 'order') AS lines, "
      + '(SELECT count(*) FROM idempotency_requests WHERE tenant_id = ? AND key_hash = ?) AS claimed, '
      + '(SELECT status FROM idempotency_requests WHERE tenant_id = ? AND key_hash = ?) AS status',
      [tenant, tenant, keyHash(key), tenant, keyHash(key)]);
    const row = (ENGINE === 'postgres' ? rows.rows : rows)[0];
    return { lines: Number(row.lines), claimed: Number(row.claimed) === 1, status: row.status === null ? null : Number(row.status) };
  }

  const stockOf = async (tenant: string, id: string) =>
    (await survivor.http.get(`/api/v1/erp/products/${id}`).set(superadmin(tenant)).expect(200)).body.data.physicalStock as number;

  it('never shows a committed order under an unanswered key, and a retry after the crash replays that order', async () => {
    const { tenant, product } = await shop();
    const victim = await startServiceProcess(database.url, { MIGRATE_ON_START: 'false' });
    victims.push(victim);
    const key = `crash-${tenant}`;
    // The answer never arrives: the process dies as soon as its order is seen committed.
    const sent = victim.http.post('/api/v1/erp/orders').set(superadmin(tenant)).set('Idempotency-Key', key).send(body(product.number))
      .then(() => null, () => null);
    const deadline = Date.now() + 20_000;
    for (;;) {
      const seen = await snapshot(tenant, key);
      if (seen.lines > 0) {
        // The order and its answer became visible together.
        expect(seen.status, 'a committed order with its key unanswered').to.equal(201);
        break;
      }
      expect(Date.now(), 'the order never committed').to.be.below(deadline);
      // Let the test's own I/O run (SQLite answers synchronously: awaiting it alone never yields to I/O).
      await new Promise((r) => setImmediate(r));
    }
    victim.kill('SIGKILL');
    expect(await victim.exited).to.equal('SIGKILL');
    await sent;

    const retry = await survivor.http.post('/api/v1/erp/orders').set(superadmin(tenant)).set('Idempotency-Key', key).send(body(product.number));
    expect(retry.status, JSON.stringify(retry.body)).to.equal(201);
    expect(retry.headers['idempotent-replayed']).to.equal('true');
    expect(await stockOf(tenant, product.id)).to.equal(9);
    const orders = await survivor.http.get('/api/v1/erp/orders').set(superadmin(tenant)).expect(200);
    expect(orders.body.data.items.map((o: { id: string }) => o.id)).to.deep.equal([retry.body.data.id]);
  });

  if (ENGINE === 'postgres') {
    it('a process that dies while its order waits to commit leaves no order; once the claim is abandoned, the retry places it once', async () => {
      const { tenant, product } = await shop();
      const victim = await startServiceProcess(database.url, { MIGRATE_ON_START: 'false' });
      victims.push(victim);
      const key = `stuck-${tenant}`;
      // Hold the product row so the order's transaction waits inside, after its key was claimed.
      const table = await productTable(knex, tenant);
      const productLock = await knex.transaction();
      const claimLock = await knex.transaction();
      try {
        await productLock.raw(`SELECT id FROM ${table} WHERE tenant_id = ? AND id = ? FOR UPDATE`, [tenant, product.id]);
        const sent = victim.http.post('/api/v1/erp/orders').set(superadmin(tenant)).set('Idempotency-Key', key).send(body(product.number))
          .then(() => null, () => null);
        for (let i = 0; !(await snapshot(tenant, key)).claimed; i++) {
          expect(i, 'the key was never claimed').to.be.below(2000);
          await new Promise((r) => setTimeout(r, 10));
        }
        // Now hold the claim's row too, and let the order go on: it takes the stock, then waits for the claim's row.
        await claimLock.raw('SELECT status FROM idempotency_requests WHERE tenant_id = ? AND key_hash = ? FOR UPDATE', [tenant, keyHash(key)]);
        await productLock.commit();
        let waiting: Array<{ pid: number }> = [];
        for (let i = 0; !waiting.length; i++) {
          expect(i, 'the order never came to wait for the claim').to.be.below(2000);
          await new Promise((r) => setTimeout(r, 10));
          waiting = (await knex.raw("SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' "
            + "AND query LIKE 'UPDATE idempotency_requests%'")).rows;
        }
        // The crash: the process and its database session die where they stand.
        victim.kill('SIGKILL');
        await victim.exited;
        await knex.raw('SELECT pg_terminate_backend(?)', [waiting[0]!.pid]);
        await sent;
      } finally {
        await productLock.rollback().catch(() => {});
        await claimLock.rollback();
      }
      expect(await snapshot(tenant, key)).to.deep.equal({ lines: 0, claimed: true, status: null });
      expect(await stockOf(tenant, product.id)).to.equal(10);

      const order = () => survivor.http.post('/api/v1/erp/orders').set(superadmin(tenant)).set('Idempotency-Key', key).send(body(product.number));
      // Within 5 minutes the key is still taken to be in flight ...
      expect((await order()).status).to.equal(409);
      // ... once it is abandoned, the retry runs, and runs once.
      await knex('idempotency_requests').where({ tenant_id: tenant, key_hash: keyHash(key) })
        .update({ claimed_at: new Date(Date.now() - 6 * 60_000).toISOString() });
      const placed = await order();
      expect(placed.status, JSON.stringify(placed.body)).to.equal(201);
      const again = await order();
      expect([again.status, again.headers['idempotent-replayed'], again.body.data.id]).to.deep.equal([201, 'true', placed.body.data.id]);
      expect(await stockOf(tenant, product.id)).to.equal(9);
    });
  }
});

/** The record table of the tenant's erp.product (its own schema, else the platform's). */
async function productTable(knex: Knex, tenant: string): Promise<string> {
  const rows: Array<{ tenant_id: string; table_name: string }> = await knex('schemas').whereIn('tenant_id', [tenant, PLATFORM_SCOPE]).where({ namespace: 'erp', name: 'product' });
  return (rows.find((r) => r.tenant_id === tenant) ?? rows[0]!).table_name;
}
