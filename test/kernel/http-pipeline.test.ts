import { request as httpRequest } from 'node:http';
import { renameSync } from 'node:fs';
import { expect } from 'chai';
import pg from 'pg';
import { packs as defaultPacks } from '../../config/packs.js';
import { definePack } from '../../core/kernel/define-pack.js';
import { POSTGRES_ADMIN_URL } from '../helpers/engine.js';
import { createTenant, startTestApp, type TestApp } from '../helpers/test-app.js';
import { as, superadmin } from '../helpers/tokens.js';

/** A pack that misbehaves on purpose, to see what a client gets from a 5xx. */
const faultyPack = definePack({
  name: 'faulty',
  routes(router, pack) {
    router.get('/faulty/throw', { summary: 'Throws an error carrying SQL text', auth: 'public' }, () => {
      throw new Error('select password from users where id = 1; -- secret=hunter2');
    });
    router.get('/faulty/sql', { summary: 'Runs broken SQL', auth: 'public' }, async () => {
      await pack.db.sql(null).rows('select * from no_such_table_for_sure');
    });
    router.get('/faulty/jsend', { summary: 'Throws on a JSend route', auth: 'public', family: 'jsend' }, () => {
      throw new TypeError('Cannot read properties of undefined (reading \'secret\')');
    });
  },
});

describe('HTTP pipeline', () => {
  let t: TestApp;
  let tenant: string;

  before(async () => {
    t = await startTestApp({ packs: [...defaultPacks, faultyPack] });
    tenant = await createTenant(t, 'pipe');
    await t.http.post('/api/v1/metadata/schemas').set(superadmin(tenant)).send({
      namespace: 'pipe', name: 'note', schema: { type: 'object', properties: { text: { type: 'string' } } },
    }).expect(201);
  });
  after(() => t?.close());

  describe('GET /api/v1/health and /api/v1/ready', () => {
    it('answers 200 while the process runs and the database answers', async () => {
      const health = await t.http.get('/api/v1/health');
      expect(health.status).to.equal(200);
      expect(health.body).to.deep.equal({ status: 'success', data: { status: 'ok' }, message: null, error: null });
      const ready = await t.http.get('/api/v1/ready');
      expect(ready.status).to.equal(200);
      expect(ready.body.data.status).to.equal('ready');
    });
  });

  describe('X-Request-Id', () => {
    it('is on every response: success, 401, 404, 405 and 500', async () => {
      const responses = await Promise.all([
        t.http.get('/api/v1/health'),
        t.http.get('/api/v1/metadata/schemas'),
        t.http.get('/api/v1/no/such/route'),
        t.http.put('/api/v1/metadata/schemas').set(superadmin(tenant)).send({}),
        t.http.get('/api/v1/faulty/throw'),
      ]);
      expect(responses.map((r) => r.status)).to.deep.equal([200, 401, 404, 405, 500]);
      for (const res of responses) expect(res.headers['x-request-id']).to.match(/^[0-9a-f-]{36}$/);
      expect(new Set(responses.map((r) => r.headers['x-request-id'])).size).to.equal(5);
    });

    it('echoes a sane incoming X-Request-Id and replaces a hostile one', async () => {
      const kept = await t.http.get('/api/v1/health').set('X-Request-Id', 'trace-abc-12345678');
      expect(kept.headers['x-request-id']).to.equal('trace-abc-12345678');
      const replaced = await t.http.get('/api/v1/health').set('X-Request-Id', 'bad id <script>');
      expect(replaced.headers['x-request-id']).to.match(/^[0-9a-f-]{36}$/);
    });
  });

  describe('unknown routes and methods', () => {
    it('answers 404 not_found in the BFF envelope outside /metadata and /data', async () => {
      const res = await t.http.get('/api/v1/nothing-here');
      expect(res.status).to.equal(404);
      expect(res.body).to.deep.include({ status: 'error', data: null });
      expect(res.body.error.code).to.equal('not_found');
      const outside = await t.http.get('/favicon.ico');
      expect(outside.status).to.equal(404);
      expect(outside.body.error.code).to.equal('not_found');
    });

    it('answers 404 not_found in JSend under /metadata and /data', async () => {
      const res = await t.http.get('/api/v1/metadata/unknown/deeper/path').set(superadmin(tenant));
      expect(res.status).to.equal(404);
      expect(res.body.status).to.equal('fail');
      expect(res.body.data.code).to.equal('not_found');
      const data = await t.http.get('/api/v1/data/pipe/note/x/y').set(superadmin(tenant));
      expect(data.status).to.equal(404);
      expect(data.body.status).to.equal('fail');
    });

    it('answers 405 method_not_allowed with Allow for a known path', async () => {
      const res = await t.http.put('/api/v1/metadata/schemas').set(superadmin(tenant)).send({});
      expect(res.status).to.equal(405);
      expect(res.body.data.code).to.equal('method_not_allowed');
      expect(res.headers.allow).to.include('GET').and.to.include('POST');
      const bff = await t.http.delete('/api/v1/admin/tenants').set(superadmin());
      expect(bff.status).to.equal(405);
      expect(bff.body.error.code).to.equal('method_not_allowed');
    });

    it('matches a path with a trailing slash as without, and one segment more or less as no route', async () => {
      const note = (await t.http.post('/api/v1/data/pipe/note').set(as(tenant, 'editor')).send({ text: 'hi' }).expect(201)).body.data.item;
      for (const path of [`/api/v1/data/pipe/note/${note.id}`, `/api/v1/data/pipe/note/${note.id}/`]) {
        const res = await t.http.get(path).set(as(tenant, 'viewer'));
        expect(res.status, path).to.equal(200);
        expect(res.body.data.item.text).to.equal('hi');
      }
      expect((await t.http.get('/api/v1/health/')).status).to.equal(200);
      for (const path of [`/api/v1/data/pipe/note/${note.id}/more`, `/api/v1/data/pipe/note/${note.id}//`]) {
        const res = await t.http.get(path).set(as(tenant, 'viewer'));
        expect(res.status, path).to.equal(404);
        expect(res.body.data.code).to.equal('not_found');
      }
      // Routes with a wildcard take any number of segments: the console's deep links, public assets.
      const console = await t.http.get('/admin/schemas/pipe/note/edit');
      expect(console.status).to.equal(200);
      expect(console.headers['content-type']).to.match(/^text\/html/);
    });
  });

  describe('JSON bodies', () => {
    it('answers 400 invalid_json for a malformed body', async () => {
      const res = await t.http.post('/api/v1/data/pipe/note').set(superadmin(tenant)).set('Content-Type', 'application/json').send('{"text": "unterminated');
      expect(res.status).to.equal(400);
      expect(res.body.status).to.equal('fail');
      expect(res.body.data.code).to.equal('invalid_json');
    });

    it('answers 415 unsupported_media_type for a non-JSON body', async () => {
      const res = await t.http.post('/api/v1/data/pipe/note').set(superadmin(tenant)).set('Content-Type', 'text/plain').send('text=hello');
      expect(res.status).to.equal(415);
      expect(res.body.data.code).to.equal('unsupported_media_type');
      const form = await t.http.post('/api/v1/admin/tenants').set(superadmin()).type('form').send({ name: 'x' });
      expect(form.status).to.equal(415);
      expect(form.body.error.code).to.equal('unsupported_media_type');
    });

    it('accepts a JSON body just under 1 MiB and answers 413 payload_too_large over it', async () => {
      const under = { text: 'a'.repeat(1024 * 1024 - 20) };
      const ok = await t.http.post('/api/v1/data/pipe/note').set(superadmin(tenant)).send(under);
      expect(ok.status, JSON.stringify(ok.body).slice(0, 200)).to.equal(201);
      const over = { text: 'a'.repeat(1024 * 1024) };
      const res = await t.http.post('/api/v1/data/pipe/note').set(superadmin(tenant)).send(over);
      expect(res.status).to.equal(413);
      expect(res.body.data.code).to.equal('payload_too_large');
    });

    it('answers 413 for a chunked body that grows past 1 MiB', async () => {
      const url = new URL('/api/v1/data/pipe/note', t.baseUrl);
      const result = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = httpRequest(url, {
          method: 'POST',
          headers: { ...superadmin(tenant), 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' },
        }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
        });
        req.on('error', (err: NodeJS.ErrnoException) => (err.code === 'EPIPE' || err.code === 'ECONNRESET' ? undefined : reject(err)));
        req.write('{"text":"');
        const chunk = 'b'.repeat(64 * 1024);
        for (let i = 0; i < 20; i++) req.write(chunk);
        req.end('"}');
      });
      expect(result.status).to.equal(413);
      expect(JSON.parse(result.body).data.code).to.equal('payload_too_large');
    });
  });

  describe('5xx responses', () => {
    it('answer 500 internal without stack trace, SQL or secret (BFF)', async () => {
      for (const path of ['/api/v1/faulty/throw', '/api/v1/faulty/sql']) {
        const res = await t.http.get(path);
        expect(res.status).to.equal(500);
        expect(res.body).to.deep.equal({ status: 'error', data: null, message: 'Internal server error', error: { code: 'internal', details: [] } });
        expect(res.text).to.not.match(/select|no_such_table|hunter2|at \w+ \(|\.ts:\d+/i);
      }
    });

    it('answer 500 internal in JSend as { status: error, code, message }', async () => {
      const res = await t.http.get('/api/v1/faulty/jsend');
      expect(res.status).to.equal(500);
      expect(res.body).to.deep.equal({ status: 'error', code: 'internal', message: 'Internal server error' });
    });
  });

  describe('module gating', () => {
    it('answers 403 module_disabled on /data/crm/deal once crm is disabled for the tenant, at once', async () => {
      const own = await createTenant(t, 'gate');
      const before = await t.http.post('/api/v1/data/crm/deal').set(as(own, 'editor')).send({ title: 'Big one' });
      expect(before.status, JSON.stringify(before.body)).to.equal(201);
      const { systemContext } = await import('../../core/base/request-context.js');
      await t.app.kernel.tenants.setModule(systemContext(null), own, 'crm', false);
      for (const req of [
        t.http.get('/api/v1/data/crm/deal').set(as(own, 'viewer')),
        t.http.post('/api/v1/data/crm/deal').set(as(own, 'editor')).send({ title: 'x' }),
        t.http.get(`/api/v1/data/crm/deal/${before.body.data.item.id}`).set(superadmin(own)),
      ]) {
        const res = await req;
        expect(res.status).to.equal(403);
        expect(res.body.data.code).to.equal('module_disabled');
      }
      // Other namespaces stay reachable.
      expect((await t.http.get('/api/v1/metadata/schemas').set(as(own, 'viewer'))).status).to.equal(200);
      await t.app.kernel.tenants.setModule(systemContext(null), own, 'crm', true);
      expect((await t.http.get('/api/v1/data/crm/deal').set(as(own, 'viewer'))).status).to.equal(200);
    });
  });
});

describe('GET /api/v1/ready while the database does not answer', () => {
  it('answers 503 not_ready once the database is gone, and 200 again when it is back (SQLite) or for good (PostgreSQL)', async () => {
    const t = await startTestApp();
    try {
      expect((await t.http.get('/api/v1/ready')).status).to.equal(200);
      if (t.engine === 'sqlite') {
        const file = t.database.url.slice('sqlite:'.length);
        renameSync(file, `${file}.moved`);
        const res = await t.http.get('/api/v1/ready');
        expect(res.status).to.equal(503);
        expect(res.body.error.code).to.equal('not_ready');
        expect((await t.http.get('/api/v1/health')).status).to.equal(200);
        renameSync(`${file}.moved`, file);
        expect((await t.http.get('/api/v1/ready')).status).to.equal(200);
      } else {
        const name = new URL(t.database.url).pathname.slice(1);
        const admin = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
        await admin.connect();
        try {
          await admin.query(`DROP DATABASE ${name} WITH (FORCE)`);
        } finally {
          await admin.end();
        }
        const res = await t.http.get('/api/v1/ready');
        expect(res.status).to.equal(503);
        expect(res.body.error.code).to.equal('not_ready');
        expect(res.text).to.not.match(/does not exist|postgres/i);
        expect((await t.http.get('/api/v1/health')).status).to.equal(200);
      }
    } finally {
      await t.close();
    }
  });
});
