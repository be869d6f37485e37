import { request } from 'node:http';
import { expect } from 'chai';
import { as, signToken, bearer, superadmin } from '../helpers/tokens.js';
import { loadConfig } from '../../config/index.js';
import { createLogger } from '../../core/base/logger.js';
import { startCapturedApp, type CapturedApp } from './captured-app.js';
import { startServiceProcess } from '../helpers/service-process.js';

const productSchema = {
  namespace: 'shop', name: 'product',
  schema: { type: 'object', required: ['sku'], properties: { sku: { type: 'string' } } },
};

describe('request and error logs', () => {
  let c: CapturedApp;
  let tenant: string;

  before(async () => {
    c = await startCapturedApp();
    tenant = `log-${Date.now().toString(36)}`;
    await c.http.post('/api/v1/admin/tenants').set(superadmin()).send({ id: tenant, name: 'Logs' }).expect(201);
    await c.http.post('/api/v1/metadata/schemas').set(as(tenant, 'admin')).send(productSchema).expect(201);
  });

  after(async () => {
    await c?.close();
  });

  const requestLine = (requestId: string) => c.lines().find((l) => l.msg === 'request' && l.requestId === requestId);

  describe('GET /api/v1/data/:ns/:schema', () => {
    it('logs one line with request id, tenant, user id, declared route, status and duration', async () => {
      const token = signToken({ tenantId: tenant, role: 'viewer', sub: 'user-42' });
      const res = await c.http.get('/api/v1/data/shop/product?limit=5').set(bearer(token)).expect(200);
      const line = requestLine(res.headers['x-request-id']);
      expect(line, c.output.join('\n')).to.include({
        level: 30, method: 'GET', route: '/api/v1/data/:ns/:schema', path: '/api/v1/data/shop/product', status: 200, tenantId: tenant, userId: 'user-42',
      });
      expect(line!.ms).to.be.a('number').and.at.least(0);
      expect(c.lines().filter((l) => l.requestId === res.headers['x-request-id'])).to.have.length(1);
    });

    it('never writes the bearer token or a signature=/sig= query value', async () => {
      const token = signToken({ tenantId: tenant, role: 'viewer' });
      // A list refuses unknown query parameters (400, since #17); the request line is logged all the same.
      const res = await c.http.get('/api/v1/data/shop/product?signature=sigvalue123&sig=othersig456&token=tok789').set(bearer(token)).expect(400);
      const line = requestLine(res.headers['x-request-id']);
      expect(line).to.not.equal(undefined);
      const all = c.output.join('\n');
      expect(all).to.not.contain(token);
      expect(all).to.not.contain('sigvalue123');
      expect(all).to.not.contain('othersig456');
      expect(all).to.not.contain('tok789');
    });

    it('masks secret path parameters such as an invitation token (review finding)', async () => {
      const secret = 'invitation-token-abcdef0123456789';
      const res = await c.http.post(`/api/v1/invitations/${secret}/accept`).set(bearer(signToken({ sub: 'someone', email: 'someone@example.test' })));
      expect(res.status).to.be.oneOf([404, 409]);
      expect(requestLine(res.headers['x-request-id'])).to.include({ path: '/api/v1/invitations/[redacted]/accept', route: '/api/v1/invitations/:token/accept' });
      expect(c.output.join('\n')).to.not.contain(secret);
    });

    it('logs the status the error handler answers with (404 schema_not_found)', async () => {
      const res = await c.http.get('/api/v1/data/shop/missing').set(as(tenant, 'viewer')).expect(404);
      expect(requestLine(res.headers['x-request-id'])).to.include({ status: 404, route: '/api/v1/data/:ns/:schema', level: 30 });
    });

    it('writes the request line exactly as pino writes the same fields (keys in order, numbers, nulls, scrubbing)', async () => {
      // A path with what looks like a credential in it: scrubbed on both paths.
      const res = await c.http.get('/api/v1/data/shop/product&token=tok-in-path').set(as(tenant, 'viewer'));
      const raw = c.output.find((l) => l.includes(res.headers['x-request-id']) && l.includes('"msg":"request"'))!;
      expect(raw).to.contain('&token=[redacted]').and.not.contain('tok-in-path');
      const { level: _level, time: _time, service: _service, msg: _msg, ...fields } = JSON.parse(raw) as Record<string, unknown>;
      const written: string[] = [];
      const plain = createLogger(loadConfig({ NODE_ENV: 'test', LOG_LEVEL: 'info' }), { write: (line: string) => { written.push(line); } });
      plain.info(fields, 'request');
      const timeless = (line: string) => line.trimEnd().replace(/"time":\d+/, '"time":0');
      expect(timeless(raw)).to.equal(timeless(written[0]!));
      // A path JSON has to escape (a backslash, sent as it is: URL parsers would make it a slash) is written as pino writes it too.
      const escapedId = await new Promise<string>((resolve, reject) => {
        request(`${c.url}/`, { path: '/api/v1/data/shop/back\\slash', headers: as(tenant, 'viewer') }, (r) => {
          r.resume();
          r.on('end', () => resolve(String(r.headers['x-request-id'])));
        }).on('error', reject).end();
      });
      const escapedRaw = c.output.find((l) => l.includes(escapedId) && l.includes('"msg":"request"'))!;
      expect(escapedRaw).to.contain('"path":"/api/v1/data/shop/back\\\\slash"');
      const { level: _l, time: _t, service: _s, msg: _m, ...escapedFields } = JSON.parse(escapedRaw) as Record<string, unknown>;
      plain.info(escapedFields, 'request');
      expect(timeless(escapedRaw)).to.equal(timeless(written[1]!));
    });

    it('logs an unmatched path without a route', async () => {
      const res = await c.http.get('/api/v1/nothing-here').expect(404);
      expect(requestLine(res.headers['x-request-id'])).to.include({ status: 404, route: null });
    });
  });

  describe('GET /api/v1/probe/boom (a handler that fails)', () => {
    it('answers 500 internal without details and logs the error with its cause, signatures scrubbed', async () => {
      const res = await c.http.get('/api/v1/probe/boom').expect(500);
      expect(res.body.error.code).to.equal('internal');
      expect(JSON.stringify(res.body)).to.not.contain('upstream refused');
      const id = res.headers['x-request-id'];
      const failure = c.lines().find((l) => l.msg === 'request failed' && l.requestId === id);
      expect(failure, c.output.join('\n')).to.not.equal(undefined);
      expect(failure!.level).to.equal(50);
      expect(failure!.err.message).to.contain('probe handler failed').and.contain('upstream refused');
      expect(failure!.err.stack).to.contain('caused by');
      expect(JSON.stringify(failure)).to.not.contain('deadbeefcafe').and.not.contain('feedface');
      expect(failure!.err.message).to.contain('X-Amz-Signature=[redacted]');
      expect(requestLine(id)).to.include({ status: 500, level: 50, route: '/api/v1/probe/boom' });
    });
  });

  describe('the logger', () => {
    it('redacts authorization headers, the SMTP password and token/secret fields', () => {
      c.app.logger.info({
        req: { headers: { authorization: 'Bearer hdr-secret-1' } },
        smtp: { host: 'smtp.example', password: 'smtp-pass-2' },
        settings: { SMTP_PASSWORD: 'smtp-pass-3' },
        token: 'token-4',
        connector: { secret: 'conn-secret-5' },
        url: 'https://files.example/x?sig=url-sig-6',
        message: 'sent with Bearer bearer-7',
      }, 'redaction probe');
      const line = c.output.find((l) => l.includes('redaction probe'))!;
      for (const secret of ['hdr-secret-1', 'smtp-pass-2', 'smtp-pass-3', 'token-4', 'conn-secret-5', 'url-sig-6', 'bearer-7']) {
        expect(line).to.not.contain(secret);
      }
      expect(JSON.parse(line).smtp.host).to.equal('smtp.example');
    });
  });

  describe('the service process on stdout', () => {
    it('writes every line whole, in order and in UTF-8 (also one longer than a batch), none lost at exit', async function () {
      this.timeout(90_000);
      const service = await startServiceProcess(c.database.url, { LOG_LEVEL: 'info', MIGRATE_ON_START: 'false' });
      try {
        const viewer = (sub: string) => bearer(signToken({ tenantId: tenant, role: 'viewer', sub }));
        const sent: string[] = [];
        for (let i = 0; i < 120; i++) {
          // A user id beyond ASCII, and one path of 12,000 characters (more than a batch holds at 3 bytes each).
          const path = i === 60 ? `/api/v1/data/shop/${'x'.repeat(12_000)}` : '/api/v1/data/shop/product';
          const res = await service.http.get(path).set(viewer(`usér-${i}-✓`));
          sent.push(res.headers['x-request-id']);
        }
        service.kill('SIGTERM');
        expect(await service.exited).to.equal(0);
        const lines = service.output().split('\n').filter((l) => l.startsWith('{'));
        const requests = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === 'request' && sent.includes(l.requestId as string));
        expect(requests.map((l) => l.requestId)).to.deep.equal(sent);
        expect(requests[7]).to.include({ userId: 'usér-7-✓', status: 200, path: '/api/v1/data/shop/product' });
        expect(requests[60]!.path).to.have.length('/api/v1/data/shop/'.length + 12_000);
        expect(requests[119]).to.include({ userId: 'usér-119-✓', status: 200 });
      } finally {
        service.kill('SIGKILL');
      }
    });
  });

  describe('LOG_LEVEL', () => {
    let quiet: CapturedApp;

    before(async () => {
      quiet = await startCapturedApp({ LOG_LEVEL: 'warn', MIGRATE_ON_START: 'false' }, c.database);
    });

    after(async () => {
      await quiet?.close();
    });

    it('at warn, leaves out request lines of successful requests but keeps 5xx ones', async () => {
      await quiet.http.get('/api/v1/health').expect(200);
      await quiet.http.get('/api/v1/probe/boom').expect(500);
      const lines = quiet.lines();
      expect(lines.filter((l) => l.msg === 'request' && l.status === 200)).to.have.length(0);
      expect(lines.filter((l) => l.msg === 'request' && l.status === 500)).to.have.length(1);
    });
  });
});
