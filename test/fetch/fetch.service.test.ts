import { expect } from 'chai';
import { AppError } from '../../core/base/errors.js';
import { FetchError } from '../../core/fetch/fetch-error.js';
import type { FetchService } from '../../core/fetch/fetch.service.js';
import { startReceiver, type HttpReceiver } from '../helpers/http-receiver.js';
import { startTestApp, type TestApp } from '../helpers/test-app.js';

async function refusal(promise: Promise<unknown>): Promise<AppError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error('expected the URL to be refused');
}

const REFUSED_URLS = [
  'http://127.0.0.1/',
  'http://2130706433/',
  'http://0x7f000001/',
  'http://0177.0.0.1/',
  'http://127.1/',
  'http://[::1]/',
  'http://[::ffff:127.0.0.1]/',
  'http://[::ffff:7f00:1]/',
  'http://[::]/',
  'http://0.0.0.0/',
  'http://10.0.0.8/',
  'http://172.16.3.4/',
  'http://192.168.1.1/',
  'http://100.64.0.1/',
  'http://169.254.169.254/latest/meta-data/',
  'http://[fd00:ec2::254]/',
  'http://[fe80::1]/',
  'http://[fc00::1]/',
  'http://224.0.0.1/',
  'http://255.255.255.255/',
  'http://metadata.google.internal/computeMetadata/v1/',
  'http://METADATA.GOOGLE.INTERNAL./',
  'http://localhost/',
  'http://[::ffff:169.254.169.254]/',
  'http://[64:ff9b::7f00:1]/',
  'http://[2002:7f00:1::]/',
];

describe('core/fetch FetchService (ALLOW_PRIVATE_NETWORK_FETCH=false)', () => {
  let t: TestApp;
  let fetch: FetchService;
  let receiver: HttpReceiver;

  before(async () => {
    t = await startTestApp({ env: { ALLOW_PRIVATE_NETWORK_FETCH: 'false' } });
    fetch = t.app.kernel.fetch;
    receiver = await startReceiver();
  });

  after(async () => {
    await receiver.stop();
    await t.close();
  });

  for (const url of REFUSED_URLS) {
    it(`refuses ${url} with 400 url_not_allowed`, async () => {
      const err = await refusal(fetch.assertAllowedUrl(url));
      expect(err.code).to.equal('url_not_allowed');
      expect(err.status).to.equal(400);
      const fetched = await refusal(fetch.fetch(url, { timeoutMs: 2000 }));
      expect(fetched.code).to.equal('url_not_allowed');
    });
  }

  for (const url of ['file:///etc/passwd', 'ftp://example.com/', 'gopher://example.com/', 'javascript:alert(1)', 'not a url', 'http://user:pw@example.com/']) {
    it(`refuses ${url} (scheme, syntax or credentials) with url_not_allowed`, async () => {
      const err = await refusal(fetch.assertAllowedUrl(url));
      expect(err.code).to.equal('url_not_allowed');
    });
  }

  it('refuses a host name that resolves to loopback at connect time, and nothing reaches the server', async () => {
    const err = await refusal(fetch.fetch(`http://localhost:${receiver.port}/hook`, { method: 'POST', body: '{}' }));
    expect(err.code).to.equal('url_not_allowed');
    expect(err.message).to.match(/resolves to/);
    // The address stays in the server's log; the client learns only that it is refused.
    expect(err.message).to.not.match(/127\.0\.0\.1|::1/);
    expect(receiver.requests).to.have.length(0);
  });

  it('refuses the loopback receiver by address, so nothing reaches it', async () => {
    const err = await refusal(fetch.fetch(receiver.url));
    expect(err.code).to.equal('url_not_allowed');
    expect(receiver.requests).to.have.length(0);
  });
});

describe('core/fetch FetchService (ALLOW_PRIVATE_NETWORK_FETCH=true, tests only)', () => {
  let t: TestApp;
  let fetch: FetchService;
  let receiver: HttpReceiver;

  before(async () => {
    t = await startTestApp();
    fetch = t.app.kernel.fetch;
    receiver = await startReceiver();
  });

  after(async () => {
    await receiver.stop();
    await t.close();
  });

  it('posts the body and headers and returns status, headers, body and duration', async () => {
    receiver.responder = (req, res) => {
      res.writeHead(201, { 'Content-Type': 'text/plain', 'X-Echo': req.headers['x-test'] as string });
      res.end(`got ${req.body}`);
    };
    const res = await fetch.fetch(`${receiver.url}/in`, { method: 'POST', headers: { 'X-Test': 'yes' }, body: 'hello' });
    expect(res.status).to.equal(201);
    expect(res.headers['x-echo']).to.equal('yes');
    expect(res.body.toString()).to.equal('got hello');
    expect(res.truncated).to.equal(false);
    expect(res.durationMs).to.be.a('number');
    expect(receiver.requests.at(-1)!.method).to.equal('POST');
  });

  it('cuts the body at maxBytes and says truncated', async () => {
    receiver.responder = (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      res.end('x'.repeat(200_000));
    };
    const res = await fetch.fetch(receiver.url, { maxBytes: 1000 });
    expect(res.body.length).to.equal(1000);
    expect(res.truncated).to.equal(true);
  });

  it('times out a server that never answers with a FetchError of kind timeout', async () => {
    receiver.responder = () => { /* never answers */ };
    const started = Date.now();
    try {
      await fetch.fetch(receiver.url, { timeoutMs: 300 });
      expect.fail('expected a timeout');
    } catch (err) {
      expect(err).to.be.instanceOf(FetchError);
      expect((err as FetchError).kind).to.equal('timeout');
    }
    expect(Date.now() - started).to.be.below(2000);
  });

  it('does not follow redirects by default, and follows them when asked', async () => {
    receiver.serve({ '/from': { status: 302, body: '', headers: { Location: '/to' } }, '/to': 'landed' });
    const first = await fetch.fetch(`${receiver.url}/from`);
    expect(first.status).to.equal(302);
    const followed = await fetch.fetch(`${receiver.url}/from`, { maxRedirects: 3 });
    expect(followed.status).to.equal(200);
    expect(followed.body.toString()).to.equal('landed');
    expect(followed.url).to.equal(`${receiver.url}/to`);
  });

  it('checks every redirect hop: a redirect to a file: URL is refused with url_not_allowed', async () => {
    receiver.serve({ '/from': { status: 301, body: '', headers: { Location: 'file:///etc/passwd' } } });
    const err = await refusal(fetch.fetch(`${receiver.url}/from`, { maxRedirects: 3 }));
    expect(err.code).to.equal('url_not_allowed');
  });

  it('reports a closed port as a FetchError of kind network', async () => {
    const down = await startReceiver();
    const url = down.url;
    await down.stop();
    try {
      await fetch.fetch(url, { timeoutMs: 2000 });
      expect.fail('expected a network error');
    } catch (err) {
      expect(err).to.be.instanceOf(FetchError);
      expect((err as FetchError).kind).to.equal('network');
    }
  });
});
