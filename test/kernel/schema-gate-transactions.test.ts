import { expect } from 'chai';
import { packs as defaultPacks } from '../../config/packs.js';
import { definePack } from '../../core/pack-api.js';
import { createTenant, startTestApp, type TestApp } from '../helpers/test-app.js';
import { as } from '../helpers/tokens.js';

/**
 * A transaction that writes a schema's records more than once while the schema starts to migrate
 * (CONTRACT.md 12.1): it keeps the gate it passed until it ends, so its later writes go on at once and the
 * migration waits for it, then migrates what it wrote. Without that, the later write waited for a migration
 * that could not finish before the transaction did (503 after the wait), or validated against the new version
 * while the first write, validated against the old one, committed after the switch.
 */
let firstWritten: () => void = () => {};
let release: () => void = () => {};
const pair = definePack({
  name: 'gate-pair',
  namespaces: [{ name: 'gt', open: true }],
  routes(router, pack) {
    router.post('/gate-pair', { summary: 'Two records of gt.item in one transaction, with a pause between them', tags: ['gate-pair'], auth: 'tenant', role: 'editor', status: 201 }, async (ctx) => {
      const rc = ctx.state.rc;
      return pack.db.transaction(rc, async (rc) => {
        const first = await pack.records.create(rc, 'gt', 'item', { title: 'first' });
        firstWritten();
        await new Promise<void>((resolve) => { release = resolve; });
        const second = await pack.records.create(rc, 'gt', 'item', { title: 'second' });
        return { ids: [first.id, second.id] };
      });
    });
  },
});

describe('the migration gate and a transaction that writes twice', function () {
  this.timeout(60_000);
  let t: TestApp;

  before(async () => {
    t = await startTestApp({ packs: [...defaultPacks, pair] });
  });
  after(() => t?.close());

  it('lets the transaction finish, then migrates both of its records (no 503, no record left unmigrated)', async () => {
    const tenant = await createTenant(t, 'gt');
    await t.http.post('/api/v1/metadata/schemas').set(as(tenant, 'admin'))
      .send({ namespace: 'gt', name: 'item', schema: { type: 'object', required: ['title'], properties: { title: { type: 'string' } } } }).expect(201);

    const written = new Promise<void>((resolve) => { firstWritten = resolve; });
    const started = Date.now();
    const writes = t.http.post('/api/v1/gate-pair').set(as(tenant, 'editor')).send({}).then((r) => r);
    await written;

    // An incompatible change: every record needs a kind, given to the stored ones by migrate.
    let changedAt = 0;
    const change = t.http.put('/api/v1/metadata/schemas/gt/item').set(as(tenant, 'admin')).set('If-Match', '"1"')
      .send({
        namespace: 'gt', name: 'item',
        schema: { type: 'object', required: ['title', 'kind'], properties: { title: { type: 'string' }, kind: { type: 'string' } } },
        migrate: { set: { kind: 'before' } },
      })
      .then((r) => { changedAt = Date.now(); return r; });
    await new Promise((r) => setTimeout(r, 500));
    expect(changedAt, 'the change waits for the transaction that passed the gate').to.equal(0);

    release();
    const done = await writes;
    expect(done.status, JSON.stringify(done.body)).to.equal(201);
    const changed = await change;
    expect(changed.status, JSON.stringify(changed.body)).to.equal(200);
    expect(changed.body.data.item.version).to.equal(2);
    expect(Date.now() - started).to.be.below(15_000);

    const list = await t.http.get('/api/v1/data/gt/item?sort=createdAt').set(as(tenant, 'viewer')).expect(200);
    expect(list.body.data.items.map((i: { title: string; kind?: string }) => [i.title, i.kind])).to.deep.equal([['first', 'before'], ['second', 'before']]);
  });
});
