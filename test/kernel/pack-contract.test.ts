import { expect } from 'chai';
import { loadConfig } from '../../config/index.js';
import { packs as defaultPacks } from '../../config/packs.js';
import { createApp } from '../../core/app.js';
import { definePack, newId, type PackDefinition } from '../../core/pack-api.js';
import { createTenant, startTestApp, testEnvironment, type TestApp } from '../helpers/test-app.js';
import { as } from '../helpers/tokens.js';
import { createTestDatabase, ENGINE } from '../helpers/engine.js';

/** A service one test pack provides and another requires. */
class Shelf {
  readonly built = new Date().toISOString();
  constructor(readonly owner: string) {}
  label(book: string) { return `${book} on the shelf of ${this.owner}`; }
}

declare module '../../core/pack-api.js' {
  interface PackServices {
    'shelf.books': Shelf;
    'lamp.light': { on: boolean };
  }
}

let builds = 0;
const shelf = definePack({
  name: 'shelf',
  licensed: 'shelf',
  namespaces: [{ name: 'shelf', open: false }],
  events: ['shelf.book.lent'],
  provides: { books: (pack) => { builds += 1; return new Shelf(pack.name); } },
  requires: ['lamp.light?'],
  routes(router, pack) {
    router.get('/shelf/lamp', { summary: 'Whether the optional lamp is there', tags: ['shelf'], auth: 'public' }, () => ({ lamp: pack.use('lamp.light?') ?? null }));
  },
});

const reader = definePack({
  name: 'reader',
  requires: ['shelf.books', 'shelf'],
  routes(router, pack) {
    const books = pack.use('shelf.books');
    router.get('/reader/:book', { summary: 'Reads from the shelf', tags: ['reader'], auth: 'public' }, (ctx) => ({ label: books.label(ctx.params.book), built: books.built }));
  },
});

/** createApp refuses these before it touches a database, so no database is made. */
const boot = (packs: PackDefinition[]) => createApp(loadConfig(testEnvironment('sqlite:/nonexistent/never-opened.db')), { packs });

describe('pack contract: provides, requires, declared events and boot checks', () => {
  describe('a pack that requires a service of another', () => {
    let t: TestApp;

    before(async () => {
      builds = 0;
      // Listed before the pack it requires: the loader orders them.
      t = await startTestApp({ packs: [...defaultPacks, reader, shelf] });
    });
    after(() => t?.close());

    it('gets the service built once, typed, after its provider loaded', async () => {
      expect(t.app.packs.map((p) => p.definition.name).indexOf('shelf')).to.be.lessThan(t.app.packs.map((p) => p.definition.name).indexOf('reader'));
      const first = await t.http.get('/api/v1/reader/dune');
      expect(first.status).to.equal(200);
      expect(first.body.data.label).to.equal('dune on the shelf of shelf');
      const second = await t.http.get('/api/v1/reader/emma');
      expect(second.body.data.built).to.equal(first.body.data.built);
      expect(builds).to.equal(1);
    });

    it('reads an absent optional requirement as undefined', async () => {
      const res = await t.http.get('/api/v1/shelf/lamp');
      expect(res.status).to.equal(200);
      expect(res.body.data.lamp).to.equal(null);
    });

    it('a new tenant gets the licensed app code the pack declares, with no kernel change', async () => {
      const tenant = await createTenant(t, 'shelf');
      const res = await t.http.get(`/api/v1/tenants/${tenant}/licensed-modules`).set(as(tenant, 'viewer'));
      expect(res.status).to.equal(200);
      expect(res.body.data.map((m: { appCode: string }) => m.appCode)).to.include.members(['cms', 'crm', 'erp', 'shelf']);
    });

    it('refuses to let an integrator publish an event a pack declares', async () => {
      const tenant = await createTenant(t, 'shelf');
      const res = await t.http.post('/api/v1/events/publish').set(as(tenant, 'editor')).send({ event: 'shelf.book.lent', payload: {} });
      expect(res.status).to.equal(403);
      const form = await t.http.post('/api/v1/events/publish').set(as(tenant, 'editor')).send({ event: 'cms.form.submitted', payload: {} });
      expect(form.status).to.equal(403);
      const open = await t.http.post('/api/v1/events/publish').set(as(tenant, 'editor')).send({ event: 'shelf.book.returned', payload: {} });
      expect(open.status).to.equal(202);
    });
  });

  describe('an optional requirement that is present', () => {
    let t: TestApp;
    const lamp = definePack({ name: 'lamp', requires: ['shelf.books'], provides: { light: () => ({ on: true }) } });

    // shelf optionally requires lamp.light and lamp requires shelf.books: no hard cycle.
    before(async () => { t = await startTestApp({ packs: [...defaultPacks, shelf, lamp] }); });
    after(() => t?.close());

    it('is handed over once loaded', async () => {
      const res = await t.http.get('/api/v1/shelf/lamp');
      expect(res.body.data.lamp).to.deep.equal({ on: true });
    });
  });

  describe('refuses to boot', () => {
    it('when a required service is missing, naming the pack and the service', async () => {
      const error = await boot([...defaultPacks, reader]).then(() => null, (err: Error) => err);
      expect(error?.message).to.include('Pack "reader" requires the service "shelf.books", which no loaded pack provides');
    });

    it('when a required pack is missing', async () => {
      const needy = definePack({ name: 'needy', requires: ['inventory'] });
      const error = await boot([...defaultPacks, needy]).then(() => null, (err: Error) => err);
      expect(error?.message).to.include('Pack "needy" requires the pack "inventory", which is not loaded');
    });

    it('when packs require each other, naming the cycle', async () => {
      const a = definePack({ name: 'alpha', requires: ['beta.two'], provides: { one: () => 1 } });
      const b = definePack({ name: 'beta', requires: ['alpha.one'], provides: { two: () => 2 } });
      const error = await boot([...defaultPacks, a, b]).then(() => null, (err: Error) => err);
      expect(error?.message).to.include('Packs require each other in a cycle: alpha → beta → alpha');
    });

    it('when a hook key names a schema nobody declares (a typo)', async () => {
      const inventory = definePack({
        name: 'inventory',
        namespaces: [{ name: 'inventory', open: false, schemas: ['stock_item'] }],
        hooks: { 'inventory.stock_itme.update': () => undefined },
      });
      const error = await boot([...defaultPacks, inventory]).then(() => null, (err: Error) => err);
      expect(error?.message).to.include('Pack "inventory" hooks "inventory.stock_itme.update", but no loaded pack declares the schema inventory.stock_itme');
    });

    it('when an `on` key names an event nobody raises', async () => {
      const listener = definePack({ name: 'listener', on: { 'crm.deal.wonn': () => undefined } });
      const error = await boot([...defaultPacks, listener]).then(() => null, (err: Error) => err);
      expect(error?.message).to.include('Pack "listener" handles "crm.deal.wonn"');
    });

    it('when a pack uses a service it did not require', async () => {
      const sneaky = definePack({ name: 'sneaky', routes(_router, pack) { pack.use('shelf.books'); } });
      const database = await createTestDatabase(ENGINE);
      try {
        const error = await startTestApp({ database, packs: [...defaultPacks, shelf, sneaky] }).then(() => null, (err: Error) => err);
        expect(error?.message).to.include('Pack "sneaky" uses "shelf.books" without declaring it in requires');
      } finally {
        await database.drop();
      }
    });
  });

  it('the CMS pack cannot start without the site profile tenant-admin provides', async () => {
    const cms = defaultPacks.find((p) => p.name === 'cms')!;
    const error = await boot([cms]).then(() => null, (err: Error) => err);
    expect(error?.message).to.include('Pack "cms" requires the service "tenant-admin.siteProfile"');
  });
});

/**
 * A pack's own SQL on its own table: `?` placeholders are converted by knex, so `\\?` is a literal `?`
 * (PostgreSQL's jsonb "has key" operator) and the placeholders after it keep their numbers.
 */
const keyed = definePack({
  name: 'keyed',
  migrations: [{
    name: '9900-keyed-notes',
    async up(knex, dialect) {
      await knex.schema.createTable('keyed_notes', (t) => {
        t.string('tenant_id', 64).notNullable();
        t.string('id', 36).notNullable();
        if (dialect.name === 'postgres') t.jsonb('data').notNullable();
        else t.text('data').notNullable();
        t.integer('version').notNullable();
        t.primary(['tenant_id', 'id']);
      });
    },
    async down(knex) {
      await knex.schema.dropTableIfExists('keyed_notes');
    },
  }],
  routes(router, pack) {
    router.post('/keyed/notes', { summary: 'Keeps a note in the pack\'s own table', tags: ['keyed'], auth: 'tenant', role: 'editor', status: 201 }, async (ctx) => {
      const id = newId();
      await pack.db.transaction(ctx.state.rc, (rc) => pack.db.insertAtCommit(rc, 'keyed_notes', {
        tenant_id: rc.tenantId, id, data: pack.db.dialect.toJson(ctx.state.body), version: 1,
      }));
      return { id };
    });
    router.get('/keyed/:field', { summary: 'Notes that hold a field', tags: ['keyed'], auth: 'tenant' }, async (ctx) => {
      const rc = ctx.state.rc;
      const has = pack.db.dialect.name === 'postgres' ? 'data \\? ?' : `json_type(data, '$.' || ?) IS NOT NULL`;
      const rows = await pack.db.sql(rc).rows<{ n: number | string }>(
        `SELECT count(*) AS n FROM keyed_notes WHERE tenant_id = ? AND ${has} AND version >= ?`, [rc.tenantId, ctx.params.field, 1]);
      return { holding: Number(rows[0].n) };
    });
  },
});

describe("pack contract: a pack's own SQL", () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ packs: [...defaultPacks, keyed] });
  });
  after(() => t?.close());

  it(`runs a query with a literal ? operator beside its placeholders (${ENGINE})`, async () => {
    const tenant = await createTenant(t, 'keyed');
    for (const body of [{ title: 'a', pinned: true }, { title: 'b' }, { title: 'c', pinned: false }]) {
      await t.http.post('/api/v1/keyed/notes').set(as(tenant, 'editor')).send(body).expect(201);
    }
    const pinned = await t.http.get('/api/v1/keyed/pinned').set(as(tenant, 'viewer')).expect(200);
    expect(pinned.body.data.holding).to.equal(2);
    const titled = await t.http.get('/api/v1/keyed/title').set(as(tenant, 'viewer')).expect(200);
    expect(titled.body.data.holding).to.equal(3);
  });
});
