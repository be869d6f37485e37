import { expect } from 'chai';
import { createTenant } from '../../helpers/test-app.js';
import { as, bearer, signToken, superadmin } from '../../helpers/tokens.js';
import type { ReceivedMail } from '../../helpers/smtp-server.js';
import { withinOneWindow } from '../../helpers/rate-window.js';
import { INVITATION_RATE } from '../../../packs/tenant-admin/invitations.service.js';
import { INVITE_LOGIN_URL, tenantAdminApp, type TenantAdminTestApp } from './tenant-admin-app.js';

/** The token from the link in an invitation mail (the body may be quoted-printable). */
export function tokenFrom(mail: ReceivedMail): string {
  const decoded = mail.raw.replace(/=\r?\n/g, '').replace(/=3D/g, '=');
  const match = /invitation=([A-Za-z0-9_-]{43})/.exec(decoded);
  if (!match) throw new Error('no invitation link in the mail');
  return match[1];
}

describe('members and invitations', () => {
  let t: TenantAdminTestApp;
  let tenant: string;

  before(async () => {
    t = await tenantAdminApp();
  });
  beforeEach(async () => {
    tenant = await createTenant(t, 'inv');
  });

  async function invite(email: string, role = 'editor') {
    return t.http.post(`/api/v1/tenants/${tenant}/invitations`).set(as(tenant, 'admin')).send({ email, role });
  }

  async function mailTo(email: string): Promise<ReceivedMail> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const mail = t.smtp.messages.find((m) => m.to.includes(email));
      if (mail) return mail;
      if (Date.now() > deadline) throw new Error(`no mail to ${email}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  describe('POST /api/v1/tenants/:id/invitations', () => {
    it('creates a pending invitation, mails a text and HTML link to INVITE_LOGIN_URL and emits tenant.member.invited', async () => {
      const email = `Nurse.${tenant}@Example.test`;
      const res = await invite(email, 'editor');
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      const data = res.body.data;
      expect(data).to.include({ email: email.toLowerCase(), role: 'editor', status: 'pending' });
      expect(data.delivery).to.be.oneOf(['sent', 'queued']);
      expect(Object.keys(data).sort()).to.deep.equal(['delivery', 'email', 'expiresAt', 'id', 'role', 'status']);
      expect(Date.parse(data.expiresAt) - Date.now()).to.be.greaterThan(6 * 24 * 3600 * 1000);

      const mail = await mailTo(email.toLowerCase());
      expect(mail.raw).to.match(/Content-Type: text\/plain/i);
      expect(mail.raw).to.match(/Content-Type: text\/html/i);
      const token = tokenFrom(mail);
      expect(mail.raw.replace(/=\r?\n/g, '').replace(/=3D/g, '=')).to.contain(`${INVITE_LOGIN_URL}?invitation=${token}`);

      const knex = t.app.kernel.db.knex;
      const row = await knex('tenant_invitations').where({ tenant_id: tenant, id: data.id }).first();
      expect(row.token_hash).to.match(/^[0-9a-f]{64}$/);
      expect(JSON.stringify(row)).not.to.contain(token);
      const events = await knex('outbox_events').where({ tenant_id: tenant, name: 'tenant.member.invited' });
      expect(events).to.have.length(1);
      expect(JSON.stringify(events[0].payload)).not.to.contain(token);
      // The mail job is sealed at rest: neither the link's token nor the address is readable.
      const jobs = await knex('outbox_deliveries').where({ tenant_id: tenant, kind: 'mail' }).select('message');
      expect(jobs).to.have.length(1);
      const stored = JSON.stringify(jobs[0].message);
      expect(stored).to.contain('sealed');
      expect(stored).not.to.contain(token);
      expect(stored.toLowerCase()).not.to.contain(email.toLowerCase());
    });

    it('answers 409 already_member for a pending invitation and for a member', async () => {
      const email = `dup.${tenant}@example.test`;
      await invite(email).then((r) => expect(r.status).to.equal(201));
      const again = await invite(email.toUpperCase());
      expect(again.status).to.equal(409);
      expect(again.body.error.code).to.equal('already_member');
      const token = tokenFrom(await mailTo(email));
      await t.http.post(`/api/v1/invitations/${token}/accept`).set(bearer(signToken({ sub: `u-${tenant}`, email }))).expect(200);
      const member = await invite(email, 'viewer');
      expect(member.status).to.equal(409);
      expect(member.body.error.code).to.equal('already_member');
    });

    it('keeps the invitation when the SMTP server is down', async () => {
      await t.smtp.stop();
      try {
        const res = await invite(`down.${tenant}@example.test`);
        expect(res.status).to.equal(201);
        expect(res.body.data.delivery).to.equal('queued');
        const list = await t.http.get(`/api/v1/tenants/${tenant}/invitations`).set(as(tenant, 'admin'));
        expect(list.body.data.map((i: { email: string; status: string }) => [i.email, i.status])).to.deep.equal([[`down.${tenant}@example.test`, 'pending']]);
      } finally {
        await t.smtp.start();
      }
    });

    it('answers 400 for a bad e-mail or role', async () => {
      const res = await t.http.post(`/api/v1/tenants/${tenant}/invitations`).set(as(tenant, 'admin')).send({ email: 'not-an-email', role: 'viewer' });
      expect(res.status).to.equal(400);
      expect(res.body.error.details.map((d: { path: string }) => d.path)).to.have.members(['/email']);
      // A role is a built-in role or a custom role of the tenant (CONTRACT.md 16.1): "owner" is neither.
      const role = await t.http.post(`/api/v1/tenants/${tenant}/invitations`).set(as(tenant, 'admin')).send({ email: `x.${tenant}@example.test`, role: 'owner' });
      expect(role.status).to.equal(400);
      expect(role.body.error.details.map((d: { path: string }) => d.path)).to.have.members(['/role']);
    });

    it('answers 429 rate_limited with Retry-After after 20 invitations in 10 minutes', async () => {
      await withinOneWindow(INVITATION_RATE.windowMs, 30_000);
      for (let i = 0; i < 20; i++) expect((await invite(`bulk${i}.${tenant}@example.test`)).status).to.equal(201);
      const res = await invite(`bulk-last.${tenant}@example.test`);
      expect(res.status).to.equal(429);
      expect(res.body.error.code).to.equal('rate_limited');
      expect(Number(res.headers['retry-after'])).to.be.within(1, 600);
      const list = await t.http.get(`/api/v1/tenants/${tenant}/invitations`).set(as(tenant, 'admin'));
      expect(list.body.data).to.have.length(20);
    });
  });

  describe('POST /api/v1/invitations/:token/accept', () => {
    it('makes the signed-in user with the invited e-mail a member with the invited role', async () => {
      const email = `doc.${tenant}@example.test`;
      await invite(email, 'admin');
      const token = tokenFrom(await mailTo(email));
      const user = bearer(signToken({ sub: `doc-${tenant}`, email, claims: { name: 'Dr. Doc' } }));
      const res = await t.http.post(`/api/v1/invitations/${token}/accept`).set(user);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.data.tenantId).to.equal(tenant);
      expect(res.body.data.member).to.include({ email, role: 'admin', status: 'active', name: 'Dr. Doc' });

      const members = await t.http.get(`/api/v1/tenants/${tenant}/members`).set(as(tenant, 'admin'));
      expect(members.body.data).to.deep.equal([{ id: res.body.data.member.id, email, name: 'Dr. Doc', role: 'admin', status: 'active', source: 'local' }]);
      const orgs = await t.http.get('/api/v1/organizations').set(user);
      expect(orgs.body.data.map((o: { id: string }) => o.id)).to.deep.equal([tenant]);
      const list = await t.http.get(`/api/v1/tenants/${tenant}/invitations`).set(as(tenant, 'admin'));
      expect(list.body.data[0].status).to.equal('accepted');

      const again = await t.http.post(`/api/v1/invitations/${token}/accept`).set(user);
      expect(again.status).to.equal(409);
    });

    it('answers 403 for another e-mail, 404 for an unknown token, 401 without a token', async () => {
      const email = `x.${tenant}@example.test`;
      await invite(email);
      const token = tokenFrom(await mailTo(email));
      const other = await t.http.post(`/api/v1/invitations/${token}/accept`).set(bearer(signToken({ sub: 'someone', email: 'someone@example.test' })));
      expect(other.status).to.equal(403);
      // The invited address, but one the identity provider marks unverified (review finding).
      const unverified = await t.http.post(`/api/v1/invitations/${token}/accept`).set(bearer(signToken({ sub: 'claimer', email, claims: { email_verified: false } })));
      expect(unverified.status).to.equal(403);
      expect((await t.http.post('/api/v1/invitations/unknown-token-value/accept').set(bearer(signToken({ sub: 's', email })))).status).to.equal(404);
      expect((await t.http.post(`/api/v1/invitations/${token}/accept`)).status).to.equal(401);
      const members = await t.http.get(`/api/v1/tenants/${tenant}/members`).set(as(tenant, 'admin'));
      expect(members.body.data).to.deep.equal([]);
    });

    it('answers 409 conflict for an expired invitation (#17)', async () => {
      const email = `late.${tenant}@example.test`;
      const created = await invite(email);
      const token = tokenFrom(await mailTo(email));
      await t.app.kernel.db.knex('tenant_invitations').where({ tenant_id: tenant, id: created.body.data.id }).update({ expires_at: '2020-01-01T00:00:00.000Z' });
      const res = await t.http.post(`/api/v1/invitations/${token}/accept`).set(bearer(signToken({ sub: 'late', email })));
      expect(res.status).to.equal(409);
      expect(res.body.error.code).to.equal('conflict');
      // An expired invitation no longer blocks a new one.
      expect((await invite(email)).status).to.equal(201);
    });
  });

  describe('membership grants access (#17)', () => {
    async function join(email: string, role: string, sub: string): Promise<Record<string, string>> {
      await invite(email, role);
      const user = bearer(signToken({ sub, email }));
      const res = await t.http.post(`/api/v1/invitations/${tokenFrom(await mailTo(email))}/accept`).set(user);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.data).to.include({ tenantId: tenant, role, status: 'active' });
      return user;
    }

    it('lets a token without a tenant claim act on the tenant (X-Tenant-Id or the path) with its membership role', async () => {
      const user = await join(`ed.${tenant}@example.test`, 'editor', `ed-${tenant}`);
      const created = await t.http.post('/api/v1/data/cms/page').set(user).set('X-Tenant-Id', tenant).send({ title: 'By a member', slug: 'member' });
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      const listed = await t.http.get('/api/v1/data/cms/page').set(user).set('X-Tenant-Id', tenant);
      expect(listed.status).to.equal(200);
      expect(listed.body.data.items.map((p: { slug: string }) => p.slug)).to.deep.equal(['member']);
      expect((await t.http.get(`/api/v1/tenants/${tenant}/site-config`).set(user)).status).to.equal(200);
      // An editor, not an admin.
      expect((await t.http.get(`/api/v1/tenants/${tenant}/members`).set(user)).status).to.equal(403);
      expect((await t.http.get('/api/v1/data/cms/page').set(user)).status).to.equal(400);
      // The membership is matched by the verified e-mail too (another sub).
      const sameEmail = bearer(signToken({ sub: 'another-sub', email: `ed.${tenant}@example.test` }));
      const bySameEmail = await t.http.get('/api/v1/data/cms/page').set(sameEmail).set('X-Tenant-Id', tenant);
      expect(bySameEmail.status, JSON.stringify(bySameEmail.body)).to.equal(200);
      const unverified = bearer(signToken({ sub: 'another-sub', email: `ed.${tenant}@example.test`, claims: { email_verified: false } }));
      expect((await t.http.get('/api/v1/data/cms/page').set(unverified).set('X-Tenant-Id', tenant)).status).to.equal(403);
    });

    it('answers 403 without a membership, for another tenant, and for a token whose tenant claim names another tenant', async () => {
      const user = await join(`v.${tenant}@example.test`, 'viewer', `v-${tenant}`);
      const other = await createTenant(t, 'inv');
      const elsewhere = await t.http.get('/api/v1/data/cms/page').set(user).set('X-Tenant-Id', other);
      expect(elsewhere.status).to.equal(403);
      expect(elsewhere.body.data.code).to.equal('forbidden');
      expect((await t.http.get(`/api/v1/tenants/${other}/site-config`).set(user)).status).to.equal(403);
      // A stranger learns nothing of which tenants exist: 403 for an unknown one too.
      const stranger = bearer(signToken({ sub: 'stranger', email: 'stranger@example.test' }));
      expect((await t.http.get('/api/v1/data/cms/page').set(stranger).set('X-Tenant-Id', tenant)).status).to.equal(403);
      expect((await t.http.get('/api/v1/data/cms/page').set(stranger).set('X-Tenant-Id', 'no-such-tenant')).status).to.equal(403);
      const claimed = bearer(signToken({ sub: `v-${tenant}`, email: `v.${tenant}@example.test`, tenantId: other }));
      expect((await t.http.get('/api/v1/data/cms/page').set(claimed).set('X-Tenant-Id', tenant)).status).to.equal(403);
      // A viewer reads but does not write.
      expect((await t.http.post('/api/v1/data/cms/page').set(user).set('X-Tenant-Id', tenant).send({ title: 'x' })).status).to.equal(403);
    });

    it('answers 409 already_member when a member accepts another invitation to the same tenant', async () => {
      await join(`m.${tenant}@example.test`, 'viewer', `m-${tenant}`);
      const second = `m2.${tenant}@example.test`;
      await invite(second, 'admin');
      const res = await t.http.post(`/api/v1/invitations/${tokenFrom(await mailTo(second))}/accept`).set(bearer(signToken({ sub: `m-${tenant}`, email: second })));
      expect(res.status).to.equal(409);
      expect(res.body.error.code).to.equal('already_member');
    });
  });

  describe('DELETE /api/v1/tenants/:id/invitations/:invitationId', () => {
    it('revokes a pending invitation, which can then not be accepted', async () => {
      const email = `rev.${tenant}@example.test`;
      const created = await invite(email);
      const token = tokenFrom(await mailTo(email));
      const res = await t.http.delete(`/api/v1/tenants/${tenant}/invitations/${created.body.data.id}`).set(as(tenant, 'admin'));
      expect(res.status).to.equal(200);
      expect(res.body.data).to.include({ id: created.body.data.id, status: 'revoked' });
      expect((await t.http.post(`/api/v1/invitations/${token}/accept`).set(bearer(signToken({ sub: 'rev', email })))).status).to.equal(409);
      expect((await t.http.delete(`/api/v1/tenants/${tenant}/invitations/${created.body.data.id}`).set(as(tenant, 'admin'))).status).to.equal(409);
    });

    it("answers 404 for an unknown invitation and for another tenant's invitation", async () => {
      const created = await invite(`own.${tenant}@example.test`);
      const other = await createTenant(t, 'oth');
      expect((await t.http.delete(`/api/v1/tenants/${tenant}/invitations/0190c0de-0000-7000-8000-000000000000`).set(as(tenant, 'admin'))).status).to.equal(404);
      expect((await t.http.delete(`/api/v1/tenants/${other}/invitations/${created.body.data.id}`).set(superadmin())).status).to.equal(404);
    });
  });
});
