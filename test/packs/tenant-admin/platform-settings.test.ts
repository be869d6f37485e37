import { expect } from 'chai';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import type { Response } from 'supertest';
import { createLogger } from '../../../core/base/logger.js';
import { loadConfig } from '../../../config/index.js';
import { createTestDatabase } from '../../helpers/engine.js';
import { createTenant } from '../../helpers/test-app.js';
import { as, superadmin } from '../../helpers/tokens.js';
import { startTenantAdminApp, type TenantAdminTestApp } from './tenant-admin-app.js';

const ENV_PASSWORD = 'env-Secret-pw-4711';
const NEW_PASSWORD = 'S3cr3t-Pa55word-0815!';

/** An SMTP server that requires a login and remembers the credentials it was given. */
async function startAuthSmtp(): Promise<{ server: SMTPServer; port: number; logins: Array<{ user: string; password: string }>; received: number }> {
  const state = { logins: [] as Array<{ user: string; password: string }>, received: 0 };
  const server = new SMTPServer({
    authMethods: ['PLAIN', 'LOGIN'], allowInsecureAuth: true, disabledCommands: ['STARTTLS'], logger: false,
    onAuth(auth, _session, cb) {
      state.logins.push({ user: auth.username ?? '', password: auth.password ?? '' });
      cb(null, { user: auth.username });
    },
    onData(stream, _session, cb) {
      stream.resume();
      stream.on('end', () => { state.received += 1; cb(); });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return Object.assign(state, { server, port: (server.server.address() as AddressInfo).port });
}

describe('platform settings', () => {
  let t: TenantAdminTestApp;
  const logLines: string[] = [];
  const bodies: string[] = [];

  function seen(res: Response): Response {
    bodies.push(res.text);
    return res;
  }

  before(async () => {
    // The product's own logger, at trace level, writing into memory.
    const logger = createLogger(loadConfig({ NODE_ENV: 'test', LOG_LEVEL: 'trace' }), { write: (line: string) => { logLines.push(line); } });
    t = await startTenantAdminApp({ logger, env: { SMTP_PASSWORD: ENV_PASSWORD, SMTP_USER: 'mailer' } });
  });

  after(async () => {
    await t.close();
  });

  describe('GET /api/v1/platform/settings', () => {
    it('shows the first values from the environment with the password masked', async () => {
      const res = seen(await t.http.get('/api/v1/platform/settings').set(superadmin()));
      expect(res.status).to.equal(200);
      expect(res.body.data).to.deep.equal({
        SMTP_HOST: '127.0.0.1', SMTP_PORT: t.smtp.port, SMTP_SECURE: null, SMTP_USER: 'mailer', SMTP_PASSWORD: '********',
        SMTP_FROM: 'platform@example.test', FRONTEND_URL: null, INVITE_LOGIN_URL: 'https://app.example.test/login',
      });
    });

    it("answers 403 superadmin_required for a tenant's admin", async () => {
      const tenant = await createTenant(t);
      const res = seen(await t.http.get('/api/v1/platform/settings').set(as(tenant, 'admin')));
      expect(res.status).to.equal(403);
      expect(res.body.error.code).to.equal('superadmin_required');
    });
  });

  describe('PATCH /api/v1/platform/settings', () => {
    it('encrypts the password at rest, masks it, keeps it when the mask is sent and emits the key names only', async () => {
      const auth = await startAuthSmtp();
      try {
        const res = seen(await t.http.patch('/api/v1/platform/settings').set(superadmin()).send({ SMTP_PASSWORD: NEW_PASSWORD, SMTP_PORT: auth.port, FRONTEND_URL: 'https://app.example.test' }));
        expect(res.status, res.text).to.equal(200);
        expect(res.body.data).to.include({ SMTP_PASSWORD: '********', SMTP_PORT: auth.port, FRONTEND_URL: 'https://app.example.test' });

        const knex = t.app.kernel.db.knex;
        const row = await knex('platform_settings').where({ key: 'SMTP_PASSWORD' }).first();
        expect(row.value).to.match(/^v1:/);
        expect(row.value).not.to.contain(NEW_PASSWORD);
        expect(Buffer.from(row.value.slice(3), 'base64').toString('latin1')).not.to.contain(NEW_PASSWORD);
        const events = await knex('outbox_events').where({ name: 'platform.settings.updated' });
        expect(events).to.have.length(1);
        expect(t.app.kernel.db.dialect.fromJson<{ keys: string[] }>(events[0].payload).keys).to.have.members(['SMTP_PASSWORD', 'SMTP_PORT', 'FRONTEND_URL']);
        expect(JSON.stringify(events[0])).not.to.contain(NEW_PASSWORD);

        const masked = seen(await t.http.patch('/api/v1/platform/settings').set(superadmin()).send({ SMTP_PASSWORD: '********', SMTP_FROM: 'clinic@example.test' }));
        expect(masked.body.data).to.include({ SMTP_PASSWORD: '********', SMTP_FROM: 'clinic@example.test' });

        const sent = seen(await t.http.post('/api/v1/platform/settings/smtp/test').set(superadmin()).send({ to: 'ops@example.test' }));
        expect(sent.status, sent.text).to.equal(200);
        expect(sent.body.data.delivered).to.equal(true);
        expect(sent.body.data.messageId).to.be.a('string');
        // The stored (decrypted) password is what the SMTP server was given.
        expect(auth.logins).to.deep.equal([{ user: 'mailer', password: NEW_PASSWORD }]);
        expect(auth.received).to.equal(1);
      } finally {
        seen(await t.http.patch('/api/v1/platform/settings').set(superadmin()).send({ SMTP_PORT: t.smtp.port, SMTP_USER: null }));
        await new Promise<void>((resolve) => auth.server.close(() => resolve()));
      }
    });

    it('answers 400 for an unknown key or a wrongly typed value, changing nothing', async () => {
      const res = seen(await t.http.patch('/api/v1/platform/settings').set(superadmin()).send({ SMTP_PORT: 'twenty-five', SMTP_TLS: true, FRONTEND_URL: 'ftp://x' }));
      expect(res.status).to.equal(400);
      expect(res.body.error.details.map((d: { path: string }) => d.path)).to.include.members(['/SMTP_PORT', '/SMTP_TLS', '/FRONTEND_URL']);
      const read = seen(await t.http.get('/api/v1/platform/settings').set(superadmin()));
      expect(read.body.data.SMTP_PORT).to.equal(t.smtp.port);
    });
  });

  describe('POST /api/v1/platform/settings/smtp/test', () => {
    it('sends a real message to the SMTP server', async () => {
      const before = t.smtp.messages.length;
      const res = seen(await t.http.post('/api/v1/platform/settings/smtp/test').set(superadmin()).send({ to: 'check@example.test' }));
      expect(res.status, res.text).to.equal(200);
      expect(res.body.data).to.have.keys(['delivered', 'messageId']);
      const mails = await t.smtp.waitFor(before + 1);
      expect(mails[mails.length - 1].to).to.deep.equal(['check@example.test']);
    });

    it("answers 502 smtp_failed with the server's reason", async () => {
      t.smtp.rejectWith = 'Mailbox unavailable: relaying denied';
      try {
        const res = seen(await t.http.post('/api/v1/platform/settings/smtp/test').set(superadmin()).send({ to: 'check@example.test' }));
        expect(res.status).to.equal(502);
        expect(res.body.error.code).to.equal('smtp_failed');
        expect(res.body.message).to.contain('relaying denied');
      } finally {
        t.smtp.rejectWith = null;
      }
    });

    it('answers 502 smtp_failed when the server does not answer, and 400 for a bad recipient', async () => {
      seen(await t.http.patch('/api/v1/platform/settings').set(superadmin()).send({ SMTP_PORT: 1 }));
      try {
        const res = seen(await t.http.post('/api/v1/platform/settings/smtp/test').set(superadmin()).send({ to: 'check@example.test' }));
        expect(res.status).to.equal(502);
        expect(res.body.error.code).to.equal('smtp_failed');
      } finally {
        seen(await t.http.patch('/api/v1/platform/settings').set(superadmin()).send({ SMTP_PORT: t.smtp.port }));
      }
      expect(seen(await t.http.post('/api/v1/platform/settings/smtp/test').set(superadmin()).send({ to: 'nope' })).status).to.equal(400);
    });
  });

  describe('a changed SETTINGS_ENCRYPTION_KEY', () => {
    it('makes the stored password read as unset instead of failing, and it can be set again', async () => {
      const database = await createTestDatabase();
      try {
        const first = await startTenantAdminApp({ database, env: { SETTINGS_ENCRYPTION_KEY: 'first-encryption-key-0123456789abcdefgh' } });
        try {
          await first.http.patch('/api/v1/platform/settings').set(superadmin()).send({ SMTP_PASSWORD: NEW_PASSWORD }).expect(200);
        } finally {
          await first.close();
        }
        const second = await startTenantAdminApp({ database, env: { SETTINGS_ENCRYPTION_KEY: 'second-encryption-key-0123456789abcdefg' } });
        try {
          const read = await second.http.get('/api/v1/platform/settings').set(superadmin());
          expect(read.status).to.equal(200);
          expect(read.body.data.SMTP_PASSWORD).to.equal(null);
          const again = await second.http.patch('/api/v1/platform/settings').set(superadmin()).send({ SMTP_PASSWORD: 'another-password-1' });
          expect(again.body.data.SMTP_PASSWORD).to.equal('********');
        } finally {
          await second.close();
        }
      } finally {
        await database.drop();
      }
    });
  });

  describe('the SMTP password', () => {
    it('never appears in a response or a log line', async () => {
      const tenant = await createTenant(t, 'pw');
      seen(await t.http.post(`/api/v1/tenants/${tenant}/invitations`).set(as(tenant, 'admin')).send({ email: `pw.${tenant}@example.test`, role: 'viewer' }));
      await t.smtp.waitFor(1);
      expect(logLines.length).to.be.greaterThan(10);
      expect(bodies.length).to.be.greaterThan(10);
      for (const secret of [NEW_PASSWORD, ENV_PASSWORD]) {
        expect(logLines.filter((l) => l.includes(secret))).to.deep.equal([]);
        expect(bodies.filter((b) => b.includes(secret))).to.deep.equal([]);
      }
    });
  });
});
