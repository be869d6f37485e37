import { expect } from 'chai';
import { createTenant, startTestApp, type TestApp } from '../helpers/test-app.js';
import { as } from '../helpers/tokens.js';

/** Every IPv6 form that embeds an IPv4 address, with a private and a public address embedded. */
const FORMS: Array<{ form: string; refused: string[]; allowed: string }> = [
  { form: 'IPv4-compatible ::a.b.c.d', refused: ['[::127.0.0.1]', '[::a00:1]', '[::a9fe:a9fe]', '[::192.168.1.1]'], allowed: '[::8.8.8.8]' },
  { form: 'IPv4-mapped ::ffff:a.b.c.d', refused: ['[::ffff:127.0.0.1]', '[::ffff:a00:1]', '[::ffff:169.254.169.254]'], allowed: '[::ffff:8.8.8.8]' },
  { form: 'NAT64 64:ff9b::/96', refused: ['[64:ff9b::7f00:1]', '[64:ff9b::10.0.0.1]', '[64:ff9b::a9fe:a9fe]'], allowed: '[64:ff9b::808:808]' },
  { form: '6to4 2002::/16', refused: ['[2002:7f00:1::]', '[2002:a00:1::1]', '[2002:c0a8:101::]'], allowed: '[2002:808:808::1]' },
  // Teredo: 2001:0:<server>:<flags>:<port>:<client inverted>. 0x7f00:0001 inverted is 80ff:fffe.
  { form: 'Teredo 2001::/32', refused: ['[2001:0:7f00:1::]', '[2001:0:808:808:0:0:80ff:fffe]', '[2001:0:808:808:0:0:f5ff:fffe]'], allowed: '[2001:0:808:808:0:0:f7f7:f7f7]' },
];

describe('Outbound address guard: IPv6 forms embedding IPv4 (#17)', () => {
  let t: TestApp;
  let tenant: string;

  before(async () => {
    t = await startTestApp({ env: { ALLOW_PRIVATE_NETWORK_FETCH: 'false' } });
    tenant = await createTenant(t, 'v6');
  });
  after(() => t?.close());

  const connector = (host: string) =>
    t.http.post('/api/v1/connectors').set(as(tenant, 'admin')).send({ url: `http://${host}/hook`, events: ['erp.*'] });

  for (const { form, refused, allowed } of FORMS) {
    it(`judges ${form} by the embedded IPv4 address: private refused with 400 url_not_allowed, public accepted`, async () => {
      for (const host of refused) {
        const res = await connector(host);
        expect(res.status, `${host}: ${JSON.stringify(res.body)}`).to.equal(400);
        expect(res.body.error.code, host).to.equal('url_not_allowed');
      }
      const ok = await connector(allowed);
      expect(ok.status, `${allowed}: ${JSON.stringify(ok.body)}`).to.equal(201);
    });
  }
});
