import { expect } from 'chai';
import { packs as defaultPacks } from '../../config/packs.js';
import { definePack } from '../../core/kernel/define-pack.js';
import { systemContext } from '../../core/base/request-context.js';
import { Shop, PRODUCTS, ORDERS } from '../packs/erp/shop.js';
import { createTenant, startTestApp, type TestApp } from '../helpers/test-app.js';
import { as } from '../helpers/tokens.js';

/**
 * Writes that do not go through the records service's single-write path also wait at a schema's migration
 * gate (CONTRACT.md 12.1): imports (each batch, or an atomic import as a whole), bulk writes, and the erp
 * pack's conditional changes (stock, order status). The wait is SCHEMA_WRITE_WAIT_MS (30 s in production),
 * shortened here so that the 503 path takes about a second.
 */
const WAIT_MS = 1000;

/** A create of `gw.item` titled "hold" waits in its hook, inside the gate, until the test lets it go. */
let release: () => void = () => {};
let held: Promise<void> = Promise.resolve();
let entered: () => void = () => {};
const holder = definePack({
  name: 'gate-holder',
  namespaces: [{ name: 'gw', open: true }],
  hooks: {
    'gw.item.create': async (payload) => {
      if (payload.data.title !== 'hold') return;
      entered();
      await held;
    },
  },
});

const itemSchema = {
  namespace: 'gw',
  name: 'item',
  schema: { type: 'object', required: ['title'], properties: { title: { type: 'string' }, code: { type: 'string' } } },
  unique: [['title']],
};

async function until(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('the migration gate holds imports, bulk writes and pack conditional changes', function () {
  this.timeout(60_000);
  let t: TestApp;
  let tenant: string;
  const path = '/api/v1/data/gw/item';

  before(async () => {
    t = await startTestApp({ packs: [...defaultPacks, holder], env: { SCHEMA_WRITE_WAIT_MS: String(WAIT_MS) } });
  });
  after(() => t?.close());
  beforeEach(async () => {
    tenant = await createTenant(t, 'gw');
    await t.http.post('/api/v1/metadata/schemas').set(as(tenant, 'admin')).send(itemSchema).expect(201);
  });

  const ndjson = (rows: object[]) => rows.map((r) => JSON.stringify(r)).join('\n');
  const importBody = (rows: object[], query = '') =>
    t.http.post(`${path}/import${query}`).set(as(tenant, 'editor')).set('Content-Type', 'application/x-ndjson').send(ndjson(rows));
  const titles = async () => ((await t.http.get(`${path}?limit=100&sort=title`).set(as(tenant, 'viewer')).expect(200)).body.data.items as Array<{ title: string; code?: string }>);

  /** Closes a schema's gate as a migrating process does (in every process: NOTIFY on PostgreSQL) and waits until this one holds writes. */
  async function closeGate(ns: string, name: string): Promise<() => Promise<void>> {
    const kernel = t.app.kernel;
    const key = kernel.schemas.keyOf(await kernel.schemas.resolve(systemContext(tenant), ns, name));
    await kernel.schemas.gates.close(key);
    await until(() => kernel.schemas.gates.closed(key));
    return async () => {
      await kernel.schemas.gates.open(key);
      await until(() => !kernel.schemas.gates.closed(key));
    };
  }

  async function expect503(request: PromiseLike<{ status: number; body: any; headers: Record<string, string> }>) {
    const started = Date.now();
    const res = await request;
    const waited = Date.now() - started;
    expect(res.status, JSON.stringify(res.body)).to.equal(503);
    expect(res.body.status, JSON.stringify(res.body)).to.equal('error');
    // The data API answers in JSend, the erp pack in its own envelope (CONTRACT.md 11): the same code.
    expect(res.body.code ?? res.body.error?.code, JSON.stringify(res.body)).to.equal('unavailable');
    expect(res.headers['retry-after']).to.equal('5');
    expect(waited, 'waited for the gate').to.be.at.least(WAIT_MS - 50);
  }

  it('an import waits for a running migration and is validated against the version it switched to', async () => {
    let signal!: () => void;
    const inHook = new Promise<void>((resolve) => { signal = resolve; });
    entered = signal;
    held = new Promise<void>((resolve) => { release = resolve; });
    // A create that passed the gate and is still running: the migration waits for it (drain).
    const create = t.http.post(path).set(as(tenant, 'editor')).send({ title: 'hold' }).then((r) => r);
    await inHook;
    const change = {
      ...itemSchema,
      schema: { ...itemSchema.schema, required: ['title', 'code'] },
      migrate: { set: { code: 'migrated' } },
    };
    const migration = t.http.put('/api/v1/metadata/schemas/gw/item').set(as(tenant, 'admin')).set('If-Match', '"1"').send(change).then((r) => r);
    const kernel = t.app.kernel;
    const key = kernel.schemas.keyOf(await kernel.schemas.resolve(systemContext(tenant), 'gw', 'item'));
    await until(() => kernel.schemas.gates.closed(key));
    let answered = false;
    const imported = importBody([{ title: 'no code' }, { title: 'with code', code: 'c1' }]).then((r) => { answered = true; return r; });
    await new Promise((r) => setTimeout(r, 150));
    expect(answered, 'the import waits at the gate').to.equal(false);
    release();
    expect((await create).status).to.equal(201);
    const done = await migration;
    expect(done.status, JSON.stringify(done.body)).to.equal(200);
    expect(done.body.data.item.version).to.equal(2);
    const res = await imported;
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    // Checked against version 2 (code required), not the version 1 it was sent under.
    expect(res.body.data).to.deep.include({ created: 1, updated: 0, failed: 1 });
    expect(res.body.data.errors).to.deep.equal([{ line: 1, path: '/code', message: 'is required', code: 'validation_failed' }]);
    expect((await titles()).map(({ title, code }) => ({ title, code }))).to.deep.equal([
      { title: 'hold', code: 'migrated' },
      { title: 'with code', code: 'c1' },
    ]);
  });

  it(`imports (plain and atomic) and bulk writes answer 503 after SCHEMA_WRITE_WAIT_MS (${WAIT_MS} ms) while the schema stays closed, writing nothing`, async () => {
    const open = await closeGate('gw', 'item');
    try {
      await Promise.all([
        expect503(importBody([{ title: 'a' }])),
        expect503(importBody([{ title: 'b' }], '?atomic=true')),
        expect503(t.http.post(`${path}/bulk`).set(as(tenant, 'editor')).send({ items: [{ title: 'c' }] })),
      ]);
    } finally {
      await open();
    }
    expect(await titles()).to.deep.equal([]);
    const res = await importBody([{ title: 'a' }, { title: 'b' }]);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.data).to.deep.include({ created: 2, failed: 0 });
  });

  it('the erp stock adjustment and order transition (conditional changes) wait at their schema\'s gate, then 503', async () => {
    const shop = new Shop(t, tenant);
    const product = await shop.product({ physicalStock: 10 });
    const placed = await shop.order([{ productId: product.id, quantity: 2, unitPrice: 1999 }], { customerRef: 'c-1' });
    expect(placed.status, JSON.stringify(placed.body)).to.equal(201);
    const order = placed.body.data;

    let open = await closeGate('erp', 'product');
    try {
      await expect503(t.http.post(`${PRODUCTS}/${product.id}/stock-adjustments`).set(as(tenant, 'admin')).send({ delta: 5, reason: 'restock' }));
    } finally {
      await open();
    }
    expect((await shop.get(product.id)).physicalStock).to.equal(8);

    open = await closeGate('erp', 'order');
    try {
      await expect503(t.http.patch(`${ORDERS}/${order.id}`).set(as(tenant, 'editor')).send({ status: 'cancelled' }));
    } finally {
      await open();
    }
    // Nothing changed: the order is still placed and the stock was not given back.
    const stored = await t.http.get(`${ORDERS}/${order.id}`).set(as(tenant, 'viewer')).expect(200);
    expect(stored.body.data.status).to.equal('placed');
    expect(await shop.expectLedgerConsistent(product.id)).to.equal(8);

    // With the gates open the same requests go through.
    await t.http.post(`${PRODUCTS}/${product.id}/stock-adjustments`).set(as(tenant, 'admin')).send({ delta: 5, reason: 'restock' }).expect(201);
    const cancelled = await t.http.patch(`${ORDERS}/${order.id}`).set(as(tenant, 'editor')).send({ status: 'cancelled' });
    expect(cancelled.status, JSON.stringify(cancelled.body)).to.equal(200);
    expect(await shop.expectLedgerConsistent(product.id)).to.equal(15);
  });

  it('an order placed while erp.order migrates waits at the gate, then is placed; past the wait it is 503 and takes no stock', async () => {
    const shop = new Shop(t, tenant);
    const product = await shop.product({ physicalStock: 10 });
    const line = [{ productId: product.id, quantity: 2, unitPrice: 1999 }];

    let open = await closeGate('erp', 'order');
    let answered = false;
    const waiting = shop.order(line).then((res) => {
      answered = true;
      return res;
    });
    try {
      await new Promise((r) => setTimeout(r, WAIT_MS / 2));
      expect(answered, 'answered while the schema migrates').to.equal(false);
    } finally {
      await open();
    }
    const placed = await waiting;
    expect(placed.status, JSON.stringify(placed.body)).to.equal(201);
    expect(await shop.expectLedgerConsistent(product.id)).to.equal(8);

    open = await closeGate('erp', 'order');
    try {
      await expect503(shop.order(line));
    } finally {
      await open();
    }
    expect(await shop.expectLedgerConsistent(product.id)).to.equal(8);
    const orders = await t.http.get(ORDERS).set(as(tenant, 'viewer')).expect(200);
    expect(orders.body.data.items).to.have.length(1);
  });
});
