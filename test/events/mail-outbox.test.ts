import { expect } from 'chai';
import { packs as defaultPacks } from '../../config/packs.js';
import { definePack } from '../../core/kernel/define-pack.js';
import { BadRequest } from '../../core/base/errors.js';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp-server.js';
import { createTenant, startTestApp, type TestApp } from '../helpers/test-app.js';
import { as } from '../helpers/tokens.js';

/** A pack that sends mail the way packs do: pack.mail.enqueue inside its write transaction. */
const mailerPack = definePack({
  name: 'test-mailer',
  routes(router, pack) {
    router.post('/test-mailer/send', {
      summary: 'Queue a mail (test pack)', auth: 'tenant', role: 'editor', status: 202, errors: ['bad_request'],
      body: { type: 'object', required: ['to', 'subject'], properties: { to: { type: 'string' }, subject: { type: 'string' }, link: { type: 'string' }, fail: { type: 'boolean' } } },
    }, async (ctx) => {
      const { to, subject, link, fail } = ctx.state.body as { to: string; subject: string; link?: string; fail?: boolean };
      return pack.db.transaction(ctx.state.rc, async (rc) => {
        const result = await pack.mail.enqueue(rc, {
          to, subject, text: `Hello ${to}${link ? `, open ${link}` : ''}`, html: link ? `<a href="${link}">Accept</a>` : undefined, reference: `test:${subject}`,
        });
        if (fail) throw BadRequest('rolled back after queuing');
        return { result };
      });
    });
  },
});

describe('mail through the outbox', () => {
  let t: TestApp;
  let smtp: TestSmtpServer;
  let tenant: string;

  before(async () => {
    smtp = await startSmtpServer();
    t = await startTestApp({
      packs: [...defaultPacks, mailerPack],
      env: { SMTP_HOST: '127.0.0.1', SMTP_PORT: String(smtp.port), SMTP_FROM: 'platform@example.test', DISPATCHER_RETRY_BASE_MS: '100' },
    });
    tenant = await createTenant(t, 'mail');
  });

  after(async () => {
    await t.close();
    await smtp.stop();
  });

  it('POST /api/v1/test-mailer/send queues the mail and it arrives once', async () => {
    const res = await t.http.post('/api/v1/test-mailer/send').set(as(tenant, 'editor')).send({ to: 'ann@example.test', subject: 'first' });
    expect(res.status).to.equal(202);
    expect(res.body.data.result).to.equal('queued');
    const [mail] = await smtp.waitFor(1);
    expect(mail.to).to.deep.equal(['ann@example.test']);
    expect(mail.raw).to.contain('Subject: first');
    await new Promise((r) => setTimeout(r, 400));
    expect(smtp.messages).to.have.length(1);
  });

  it('stores the queued mail sealed: neither the address nor the link is readable in outbox_deliveries', async () => {
    const before = smtp.messages.length;
    const link = 'https://app.example.test/invitations/accept?token=tok_0123456789abcdefSECRET';
    const res = await t.http.post('/api/v1/test-mailer/send').set(as(tenant, 'editor')).send({ to: 'dana.sealed@example.test', subject: 'sealed', link });
    expect(res.status).to.equal(202);
    const [mail] = (await smtp.waitFor(before + 1)).slice(before);
    expect(mail.to).to.deep.equal(['dana.sealed@example.test']);
    expect(mail.raw.replace(/=\r?\n/g, '')).to.contain('tok_0123456789abcdefSECRET');
    const read = () => t.app.kernel.db.knex('outbox_deliveries').where({ tenant_id: tenant, kind: 'mail', event_name: 'test:sealed' }).select('message', 'status');
    let rows = await read();
    for (let i = 0; i < 50 && rows[0]?.status !== 'delivered'; i++) {
      await new Promise((r) => setTimeout(r, 20));
      rows = await read();
    }
    expect(rows).to.have.length(1);
    expect(rows[0].status).to.equal('delivered');
    const raw = typeof rows[0].message === 'string' ? rows[0].message : JSON.stringify(rows[0].message);
    expect(raw).to.contain('sealed');
    expect(raw).not.to.contain('dana.sealed@example.test');
    expect(raw).not.to.contain('tok_0123456789abcdefSECRET');
    expect(raw).not.to.contain('app.example.test');
  });

  it('sends nothing when the transaction that queued the mail rolls back', async () => {
    const before = smtp.messages.length;
    const res = await t.http.post('/api/v1/test-mailer/send').set(as(tenant, 'editor')).send({ to: 'bob@example.test', subject: 'never', fail: true });
    expect(res.status).to.equal(400);
    await new Promise((r) => setTimeout(r, 400));
    expect(smtp.messages.slice(before).map((m) => m.to[0])).to.not.include('bob@example.test');
  });

  it('keeps the mail through an SMTP outage and delivers it once the server answers (once)', async () => {
    const before = smtp.messages.length;
    await smtp.stop();
    const res = await t.http.post('/api/v1/test-mailer/send').set(as(tenant, 'editor')).send({ to: 'cy@example.test', subject: 'outage' });
    expect(res.status).to.equal(202);
    // Several attempts fail while the server is down (back-off from 100 ms).
    await new Promise((r) => setTimeout(r, 800));
    expect(smtp.messages.length).to.equal(before);
    await smtp.start();
    await smtp.waitFor(before + 1, 15_000);
    await new Promise((r) => setTimeout(r, 1000));
    const received = smtp.messages.slice(before);
    expect(received).to.have.length(1);
    expect(received[0].raw).to.contain('Subject: outage');
  });
});
