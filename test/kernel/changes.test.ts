import Database from 'better-sqlite3';
import { expect } from 'chai';
import pg from 'pg';
import { createScratchDatabase } from '../helpers/engine.js';
import { SseClient, type SseEvent } from '../helpers/sse-client.js';
import { createTenant, startTestApp, type TestApp } from '../helpers/test-app.js';
import { as } from '../helpers/tokens.js';

const schema = (name: string) => ({
  namespace: 'live',
  name,
  schema: { type: 'object', required: ['title'], properties: { title: { type: 'string' }, n: { type: 'integer' } } },
});

const ENV = { CHANGES_HEARTBEAT_MS: '300', CHANGES_POLL_MS: '100' };

function bodies(events: SseEvent[]) {
  return events.map((e) => JSON.parse(e.data) as { id: string; event: string; tenantId: string; product: string | null; occurredAt: string; payload: Record<string, any> });
}

function expectIncreasing(events: SseEvent[]): void {
  const ids = events.map((e) => BigInt(e.id));
  for (let i = 1; i < ids.length; i++) expect(ids[i] > ids[i - 1], `id ${ids[i]} after ${ids[i - 1]}`).to.equal(true);
}

describe('live changes: Server-Sent Events from the outbox', () => {
  let t: TestApp;
  let tenant: string;
  const streams: SseClient[] = [];
  const open = async (app: TestApp, path: string, headers: Record<string, string>) => {
    const stream = await SseClient.open(`${app.baseUrl}/api/v1${path}`, headers);
    streams.push(stream);
    return stream;
  };

  before(async () => {
    t = await startTestApp({ env: ENV });
  });
  after(() => t?.close());
  beforeEach(async () => {
    tenant = await createTenant(t, 'live');
    for (const name of ['doc', 'note']) await t.http.post('/api/v1/metadata/schemas').set(as(tenant, 'admin')).send(schema(name)).expect(201);
  });
  afterEach(() => {
    for (const s of streams.splice(0)) s.close();
  });

  it('streams the created, updated and deleted events of one schema, with the delivery body, in order', async () => {
    const stream = await open(t, '/data/live/doc/changes', as(tenant, 'viewer'));
    expect(stream.status).to.equal(200);
    const created = (await t.http.post('/api/v1/data/live/doc').set(as(tenant, 'editor')).send({ title: 'a' }).expect(201)).body.data.item;
    await t.http.post('/api/v1/data/live/note').set(as(tenant, 'editor')).send({ title: 'not this schema' }).expect(201);
    await t.http.patch(`/api/v1/data/live/doc/${created.id}`).set(as(tenant, 'editor')).send({ title: 'b' }).expect(200);
    await t.http.delete(`/api/v1/data/live/doc/${created.id}`).set(as(tenant, 'editor')).expect(200);
    await stream.waitForEvents(3);
    await new Promise((r) => setTimeout(r, 300));
    expect(stream.events.map((e) => e.event)).to.deep.equal(['live.doc.created', 'live.doc.updated', 'live.doc.deleted']);
    expectIncreasing(stream.events);
    const [first, second] = bodies(stream.events);
    expect(Object.keys(first)).to.deep.equal(['id', 'event', 'tenantId', 'product', 'occurredAt', 'payload']);
    expect(first).to.include({ event: 'live.doc.created', tenantId: tenant, product: null });
    expect(first.payload.record).to.include({ id: created.id, title: 'a' });
    expect(second.payload.record).to.include({ title: 'b', version: 2 });
  });

  it('follows several schemas with GET /changes?schemas=, and keeps idle streams open with comments', async () => {
    const stream = await open(t, '/changes?schemas=live.doc,live.note', as(tenant, 'viewer'));
    expect(stream.status).to.equal(200);
    await t.http.post('/api/v1/data/live/doc').set(as(tenant, 'editor')).send({ title: 'd' }).expect(201);
    await t.http.post('/api/v1/data/live/note').set(as(tenant, 'editor')).send({ title: 'n' }).expect(201);
    await stream.waitForEvents(2);
    expect(stream.events.map((e) => e.event)).to.deep.equal(['live.doc.created', 'live.note.created']);
    await stream.until(() => stream.comments.includes('keep-alive'), 3000, 'a heartbeat');
  });

  it('refuses unknown schemas, bad positions and callers without a tenant role', async () => {
    const unknown = await open(t, '/data/live/nope/changes', as(tenant, 'viewer'));
    expect(unknown.status).to.equal(404);
    const unknownMany = await open(t, '/changes?schemas=live.doc,live.nope', as(tenant, 'viewer'));
    expect(unknownMany.status).to.equal(404);
    const malformed = await open(t, '/changes?schemas=live', as(tenant, 'viewer'));
    expect(malformed.status).to.equal(400);
    const badId = await open(t, '/data/live/doc/changes', { ...as(tenant, 'viewer'), 'Last-Event-ID': 'abc' });
    expect(badId.status).to.equal(400);
    const anonymous = await open(t, '/data/live/doc/changes', {});
    expect(anonymous.status).to.equal(401);
  });

  it('a long write transaction in another database of the server does not hold streams back; one in this database does, until it ends', async () => {
    const stream = await open(t, '/data/live/doc/changes', as(tenant, 'viewer'));
    expect(stream.status).to.equal(200);
    // A write transaction that stays open in another database of the same server (PostgreSQL: another
    // database of the cluster, whose transaction ids the server shares; SQLite: another file).
    const other = await createScratchDatabase(t.engine);
    const close: Array<() => Promise<void>> = [() => other.drop()];
    try {
      if (t.engine === 'postgres') {
        const client = new pg.Client({ connectionString: other.url });
        await client.connect();
        close.unshift(() => client.end());
        await client.query('BEGIN');
        await client.query('CREATE TABLE held (n int)');
        await client.query('INSERT INTO held VALUES (1)');
      } else {
        const file = new Database(other.url.slice('sqlite:'.length));
        close.unshift(async () => void file.close());
        file.exec('BEGIN IMMEDIATE; CREATE TABLE held (n int); INSERT INTO held VALUES (1);');
      }
      await t.http.post('/api/v1/data/live/doc').set(as(tenant, 'editor')).send({ title: 'while another database writes' }).expect(201);
      await stream.waitForEvents(1, 2000);

      if (t.engine === 'postgres') {
        // An older transaction of this database may still write an earlier event: the stream waits for it.
        const mine = new pg.Client({ connectionString: t.database.url });
        await mine.connect();
        close.unshift(() => mine.end());
        await mine.query('BEGIN');
        await mine.query('SELECT pg_current_xact_id()');
        await t.http.post('/api/v1/data/live/doc').set(as(tenant, 'editor')).send({ title: 'behind an open transaction' }).expect(201);
        await new Promise((r) => setTimeout(r, 500));
        expect(stream.events).to.have.length(1);
        await mine.query('COMMIT');
        await stream.waitForEvents(2, 2000);
        expect(bodies(stream.events)[1].payload.record.title).to.equal('behind an open transaction');
      }
    } finally {
      for (const c of close) await c().catch(() => {});
    }
  });

  it('never carries another tenant\'s events', async () => {
    const other = await createTenant(t, 'live');
    await t.http.post('/api/v1/metadata/schemas').set(as(other, 'admin')).send(schema('doc')).expect(201);
    const mine = await open(t, '/data/live/doc/changes', as(tenant, 'viewer'));
    const theirs = await open(t, '/data/live/doc/changes', as(other, 'viewer'));
    await t.http.post('/api/v1/data/live/doc/bulk').set(as(other, 'editor')).send({ items: Array.from({ length: 20 }, (_, n) => ({ title: 'other', n })) }).expect(201);
    await t.http.post('/api/v1/data/live/doc').set(as(tenant, 'editor')).send({ title: 'mine' }).expect(201);
    await mine.waitForEvents(1);
    await theirs.waitForEvents(20);
    await new Promise((r) => setTimeout(r, 300));
    expect(bodies(mine.events).map((b) => [b.tenantId, b.payload.record.title])).to.deep.equal([[tenant, 'mine']]);
    expect(bodies(theirs.events).every((b) => b.tenantId === other)).to.equal(true);
    expect(theirs.events).to.have.length(20);
  });

  it('resumes after a disconnect from Last-Event-ID (header or query), nothing lost and nothing repeated, also after a restart', async () => {
    const write = (n: number) => t.http.post('/api/v1/data/live/doc').set(as(tenant, 'editor')).send({ title: `t${n}`, n }).expect(201);
    const first = await open(t, '/data/live/doc/changes', as(tenant, 'viewer'));
    for (const n of [1, 2, 3]) await write(n);
    await first.waitForEvents(3);
    first.close();
    const last = first.events[2].id;
    for (const n of [4, 5, 6]) await write(n);
    const resumed = await open(t, '/data/live/doc/changes', { ...as(tenant, 'viewer'), 'Last-Event-ID': last });
    await resumed.waitForEvents(3);
    await write(7);
    await resumed.waitForEvents(4);
    await new Promise((r) => setTimeout(r, 300));
    expect(bodies(resumed.events).map((b) => b.payload.record.n)).to.deep.equal([4, 5, 6, 7]);
    expectIncreasing([...first.events, ...resumed.events]);
    resumed.close();

    // A fresh service on the same database (nothing of the stream in its memory) resumes as well.
    const afterRestart = await startTestApp({ database: t.database, env: ENV });
    try {
      const byQuery = await open(afterRestart, `/data/live/doc/changes?lastEventId=${resumed.events[1].id}`, as(tenant, 'viewer'));
      await byQuery.waitForEvents(2);
      await new Promise((r) => setTimeout(r, 300));
      expect(bodies(byQuery.events).map((b) => b.payload.record.n)).to.deep.equal([6, 7]);
      byQuery.close();
    } finally {
      await afterRestart.close();
    }
  });

  it('sees writes of another service process on the same database, each once, in commit order, under concurrent writers', async () => {
    const second = await startTestApp({ database: t.database, env: ENV });
    try {
      const stream = await open(t, '/data/live/doc/changes', as(tenant, 'viewer'));
      const writes = Array.from({ length: 50 }, (_, n) => (n % 2 ? t : second).http.post('/api/v1/data/live/doc').set(as(tenant, 'editor')).send({ title: 'w', n }));
      const results = await Promise.all(writes);
      expect(results.every((r) => r.status === 201)).to.equal(true);
      await stream.waitForEvents(50, 10_000);
      await new Promise((r) => setTimeout(r, 400));
      expect(stream.events).to.have.length(50);
      expectIncreasing(stream.events);
      expect(new Set(bodies(stream.events).map((b) => b.payload.record.n)).size).to.equal(50);
      // A stream opened on the other process from the start sees the same events with the same ids.
      const replay = await open(second, `/data/live/doc/changes?lastEventId=0`, as(tenant, 'viewer'));
      await replay.waitForEvents(50, 10_000);
      expect(replay.events.map((e) => e.id)).to.deep.equal(stream.events.map((e) => e.id));
    } finally {
      await second.close();
    }
  });

  it('a client that stops reading is held back, not buffered without bound, and gets every event once it reads again', async () => {
    const slow = await open(t, '/data/live/doc/changes', as(tenant, 'viewer'));
    slow.pause();
    const title = 'x'.repeat(2000);
    for (let round = 0; round < 3; round++) {
      await t.http.post('/api/v1/data/live/doc/bulk').set(as(tenant, 'editor')).send({ items: Array.from({ length: 500 }, (_, i) => ({ title, n: round * 500 + i })) }).expect(201);
    }
    // About 6 MB of events were raised while the client read nothing.
    await new Promise((r) => setTimeout(r, 500));
    slow.resume();
    await slow.waitForEvents(1500, 20_000);
    await new Promise((r) => setTimeout(r, 300));
    expect(bodies(slow.events).map((b) => b.payload.record.n)).to.deep.equal(Array.from({ length: 1500 }, (_, i) => i));
    expectIncreasing(slow.events);
  });
});
