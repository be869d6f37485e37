import { expect } from 'chai';
import { packs as defaultPacks } from '../../config/packs.js';
import { AppError, definePack } from '../../core/pack-api.js';
import { createTenant, startTestApp, type TestApp } from '../helpers/test-app.js';
import { as } from '../helpers/tokens.js';

/**
 * A pack author's first writes, made at once: records.create of the same unique value from many requests,
 * one record by a transaction of the pack's own, and what the pack sees when it catches the error.
 */
const signup = definePack({
  name: 'signup',
  namespaces: [{ name: 'signup', open: true }],
  routes(router, pack) {
    router.post('/signup/accounts', {
      summary: 'Create an account', tags: ['signup'], auth: 'tenant', role: 'editor', status: 201,
      body: { type: 'object', required: ['email', 'team', 'seat'], properties: { email: { type: 'string' }, team: { type: 'string' }, seat: { type: 'integer' } } },
      errors: ['conflict'],
    }, (ctx) => pack.records.create(ctx.state.rc, 'signup', 'account', ctx.state.body));
    router.post('/signup/accounts/in-transaction', {
      summary: 'Create an account in a transaction of the pack', tags: ['signup'], auth: 'tenant', role: 'editor', status: 201,
      body: { type: 'object' }, errors: ['conflict'],
    }, (ctx) => pack.db.transaction(ctx.state.rc, (rc) => pack.records.create(rc, 'signup', 'account', ctx.state.body)));
    router.post('/signup/accounts/caught', {
      summary: 'Create an account, telling a taken address apart', tags: ['signup'], auth: 'tenant', role: 'editor', status: 200,
      body: { type: 'object' },
    }, async (ctx) => {
      try {
        return { created: await pack.records.create(ctx.state.rc, 'signup', 'account', ctx.state.body) };
      } catch (err) {
        if (err instanceof AppError && err.code === 'conflict') return { taken: err.details.map((d) => d.path) };
        throw err;
      }
    });
  },
});

describe('a unique violation is 409 conflict naming the fields, on both engines (#34)', function () {
  this.timeout(60_000);
  let t: TestApp;
  let tenant: string;

  before(async () => {
    t = await startTestApp({ packs: [...defaultPacks, signup] });
  });
  after(() => t?.close());
  beforeEach(async () => {
    tenant = await createTenant(t, 'uniq');
    const registered = await t.http.post('/api/v1/metadata/schemas').set(as(tenant, 'admin')).send({
      namespace: 'signup', name: 'account', unique: [['email'], ['team', 'seat']],
      schema: { type: 'object', properties: { email: { type: 'string' }, team: { type: 'string' }, seat: { type: 'integer' } } },
    });
    expect(registered.status, JSON.stringify(registered.body)).to.equal(201);
  });

  const expectConflict = (res: { status: number; body: { error?: { code: string; details: Array<{ path: string }> }; data?: { code: string; errors: Array<{ path: string }> } } }, paths: string[]) => {
    expect(res.status, JSON.stringify(res.body)).to.equal(409);
    const error = res.body.error ?? { code: res.body.data!.code, details: res.body.data!.errors };
    expect(error.code).to.equal('conflict');
    expect(error.details.map((d) => d.path).sort()).to.deep.equal(paths);
    expect(JSON.stringify(res.body)).to.not.match(/23505|duplicate key|UNIQUE constraint|SQLITE|_ux_/);
  };

  it('POST /signup/accounts: 20 concurrent first writes of one address make one record, the others answer 409 conflict naming /email', async () => {
    const results = await Promise.all(Array.from({ length: 20 }, (_, seat) => t.http.post('/api/v1/signup/accounts').set(as(tenant, 'editor'))
      .send({ email: 'a@example.com', team: 'red', seat })));
    expect(results.filter((r) => r.status === 201)).to.have.length(1);
    for (const r of results.filter((x) => x.status !== 201)) expectConflict(r, ['/email']);
  });

  it('names every field of a unique set, through /data, a bulk write and a transaction of the pack', async () => {
    await t.http.post('/api/v1/signup/accounts').set(as(tenant, 'editor')).send({ email: 'b@example.com', team: 'blue', seat: 1 }).expect(201);
    expectConflict(await t.http.post('/api/v1/signup/accounts').set(as(tenant, 'editor')).send({ email: 'c@example.com', team: 'blue', seat: 1 }), ['/seat', '/team']);
    expectConflict(await t.http.post('/api/v1/data/signup/account').set(as(tenant, 'editor')).send({ email: 'b@example.com', team: 'x', seat: 1 }), ['/email']);
    expectConflict(await t.http.post('/api/v1/signup/accounts/in-transaction').set(as(tenant, 'editor')).send({ email: 'b@example.com' }), ['/email']);
    const bulk = await t.http.post('/api/v1/data/signup/account/bulk').set(as(tenant, 'editor')).send({ items: [{ email: 'd@example.com' }, { email: 'b@example.com' }] });
    expectConflict(bulk, ['/email']);
    const rows = await Promise.all([1, 2].map(() => t.http.post('/api/v1/signup/accounts/in-transaction').set(as(tenant, 'editor')).send({ email: 'e@example.com' })));
    expect(rows.map((r) => r.status).sort()).to.deep.equal([201, 409]);
    expectConflict(rows.find((r) => r.status === 409)!, ['/email']);
  });

  it('a pack that catches the error tells a taken value by err.code === "conflict" and its details', async () => {
    await t.http.post('/api/v1/signup/accounts').set(as(tenant, 'editor')).send({ email: 'f@example.com', team: 'g', seat: 2 }).expect(201);
    const caught = await t.http.post('/api/v1/signup/accounts/caught').set(as(tenant, 'editor')).send({ email: 'f@example.com' }).expect(200);
    expect(caught.body.data).to.deep.equal({ taken: ['/email'] });
    const both = await Promise.all([1, 2].map(() => t.http.post('/api/v1/signup/accounts/caught').set(as(tenant, 'editor')).send({ email: 'h@example.com' })));
    expect(both.map((r) => Object.keys(r.body.data)[0]).sort()).to.deep.equal(['created', 'taken']);
  });
});
