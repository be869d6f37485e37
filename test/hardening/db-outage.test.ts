import { expect } from 'chai';
import Database from 'better-sqlite3';
import { createTestDatabase, ENGINE, type TestDatabase } from '../helpers/engine.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';
import { createTenant, startTestApp, type TestApp } from '../helpers/test-app.js';
import { superadmin } from '../helpers/tokens.js';

/**
 * What a client gets while the database cannot be reached: PostgreSQL behind a proxy whose port is closed
 * and connections reset; SQLite locked by another process past the busy timeout.
 */
describe('A database outage (#17)', function () {
  this.timeout(60_000);
  let t: TestApp;
  let tenant: string;
  let database: TestDatabase;
  let outage: { start(): Promise<void>; end(): Promise<void> };

  before(async () => {
    database = await createTestDatabase();
    let url = database.url;
    if (ENGINE === 'postgres') {
      const target = new URL(database.url);
      const proxy = await new TcpProxy(target.hostname, Number(target.port || 5432)).start();
      target.port = String(proxy.port);
      url = target.toString();
      outage = { start: () => proxy.cut(), end: () => proxy.restore() };
    } else {
      let holder: Database.Database | null = null;
      outage = {
        async start() {
          holder = new Database(database.url.slice('sqlite:'.length));
          holder.pragma('busy_timeout = 0');
          holder.exec('BEGIN EXCLUSIVE');
        },
        async end() {
          holder?.exec('ROLLBACK');
          holder?.close();
          holder = null;
        },
      };
    }
    t = await startTestApp({ database: { url, drop: async () => {} } });
    tenant = await createTenant(t, 'down');
    await t.http.post('/api/v1/metadata/schemas').set(superadmin(tenant))
      .send({ namespace: 'down', name: 'note', schema: { type: 'object', properties: { text: { type: 'string' } } } }).expect(201);
  });
  after(async () => {
    await outage?.end().catch(() => {});
    await t?.close();
    await database?.drop();
  });

  it('answers a write 503 unavailable with Retry-After, never 500, and writes again once the database is back', async () => {
    await outage.start();
    try {
      const writes = await Promise.all([
        t.http.post('/api/v1/data/down/note').set(superadmin(tenant)).send({ text: 'during the outage' }),
        t.http.post(`/api/v1/tenant/${tenant}/content/page`).set(superadmin(tenant)).send({ title: 'Outage', slug: 'outage' }),
      ]);
      for (const res of writes) {
        expect(res.status, JSON.stringify(res.body)).to.equal(503);
        expect(res.headers['retry-after']).to.match(/^\d+$/);
        expect(res.body.code ?? res.body.error?.code).to.equal('unavailable');
      }
      expect((await t.http.get('/api/v1/health')).status).to.equal(200);
    } finally {
      await outage.end();
    }
    const after = await t.http.post('/api/v1/data/down/note').set(superadmin(tenant)).send({ text: 'after the outage' });
    expect(after.status, JSON.stringify(after.body)).to.equal(201);
  });
});
