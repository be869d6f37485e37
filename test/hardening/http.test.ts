import { connect } from 'node:net';
import { expect } from 'chai';
import { createTenant, sharedTestApp, type TestApp } from '../helpers/test-app.js';
import { superadmin } from '../helpers/tokens.js';

/** Sends raw bytes over a socket and reads the whole answer (the server closes the connection). */
function rawRequest(t: TestApp, bytes: string): Promise<string> {
  const { port } = new URL(t.baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1', () => socket.write(Buffer.from(bytes, 'latin1')));
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk) => (answer += chunk));
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
  });
}

describe('HTTP edges (#17)', () => {
  let t: TestApp;
  let tenant: string;

  before(async () => {
    t = await sharedTestApp();
    tenant = await createTenant(t, 'edge');
    await t.http.post('/api/v1/data/cms/page').set(superadmin(tenant))
      .send({ title: 'About', slug: 'about', status: 'published', content: 'We roast coffee.' }).expect(201);
  });

  it('answers a request with a bad header byte with 400 in the BFF envelope', async () => {
    const answer = await rawRequest(t, 'GET /api/v1/health HTTP/1.1\r\nHost: localhost\r\nIf-Match: \x19\r\n\r\n');
    const [head, body] = answer.split('\r\n\r\n');
    expect(head).to.match(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(head).to.match(/\r\ncontent-type: application\/json/i);
    expect(head).to.match(/\r\nx-request-id: [0-9a-f-]{36}/i);
    expect(JSON.parse(body!)).to.deep.include({ status: 'error', data: null });
    expect(JSON.parse(body!).error.code).to.equal('bad_request');
  });

  it('answers 405 with Allow for a fixed path with a method it does not serve (PATCH /admin/tenants/provision)', async () => {
    const res = await t.http.patch('/api/v1/admin/tenants/provision').set(superadmin()).send({});
    expect(res.status).to.equal(405);
    expect(res.headers.allow).to.equal('POST');
    expect(res.body.error.code).to.equal('method_not_allowed');
    const get = await t.http.get('/api/v1/admin/tenants/provision').set(superadmin());
    expect(get.status).to.equal(405);
  });

  describe('unknown query parameters on lists', () => {
    it('answer 400 validation_failed naming the parameter', async () => {
      const lists = [
        `/api/v1/data/cms/page?limt=5`,
        `/api/v1/tenant/${tenant}/content/page?pageSize=5`,
        `/api/v1/cms/pages?q=x`,
        `/api/v1/connectors?page=2`,
        `/api/v1/metadata/schemas?ns=cms`,
        `/api/v1/public/tenant/${tenant}/content/page?limt=5`,
        `/api/v1/admin/tenants?page=2`,
      ];
      for (const path of lists) {
        const res = await t.http.get(path).set(superadmin(tenant));
        expect(res.status, `${path}: ${JSON.stringify(res.body)}`).to.equal(400);
        const code = res.body.error?.code ?? res.body.data?.code;
        const details = res.body.error?.details ?? res.body.data?.errors;
        expect(code, path).to.equal('validation_failed');
        expect(details[0].path, path).to.match(/^query\/(limt|pageSize|q|page|ns)$/);
      }
      const ok = await t.http.get('/api/v1/data/cms/page?limit=5&filter[status]=published').set(superadmin(tenant));
      expect(ok.status).to.equal(200);
    });
  });

  it('honours fields on the public content route', async () => {
    const res = await t.http.get(`/api/v1/public/tenant/${tenant}/content/page?fields=title,slug`);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.data.items).to.have.length(1);
    expect(res.body.data.items[0]).to.include({ title: 'About', slug: 'about' });
    expect(res.body.data.items[0]).to.not.have.property('content');
  });
});
