import { createHash, randomBytes } from 'node:crypto';
import { type Config, Conflict, type PackContext, Forbidden, newId, NotFound, nowIso, type RequestContext, type TenantRecord } from '../../core/pack-api.js';
import { AlreadyMember } from './tenant-admin.errors.js';
import { invitationMail } from './invitation-mail.js';
import { InvitationsRepository, type InvitationRecord } from './invitations.repository.js';
import type { MemberDirectory } from './member-directory.js';
import type { MembersRepository, MemberRecord } from './members.repository.js';

export const INVITATION_TTL_MS = 7 * 24 * 3600 * 1000;
/** At most this many invitations per tenant within a fixed window (counted by core/ratelimit). */
export const INVITATION_RATE = { limit: 20, windowMs: 10 * 60 * 1000 };

export interface InvitationView {
  id: string;
  email: string;
  role: string;
  status: string;
  expiresAt: string;
  createdAt: string;
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

function view(i: InvitationRecord, now = nowIso()): InvitationView {
  const status = i.status === 'pending' && i.expiresAt <= now ? 'expired' : i.status;
  return { id: i.id, email: i.email, role: i.role, status, expiresAt: i.expiresAt, createdAt: i.createdAt };
}

/**
 * Invitations: created by a tenant admin, mailed through the outbox in the same transaction, accepted by
 * the signed-in user with the invited e-mail. Tokens are 256-bit random values; only their hash is kept.
 */
export class InvitationsService {
  readonly repository: InvitationsRepository;

  constructor(
    private readonly db: PackContext['db'],
    private readonly config: Config,
    private readonly members: MembersRepository,
    private readonly directory: MemberDirectory,
    private readonly mail: PackContext['mail'],
    private readonly events: PackContext['events'],
    private readonly settings: PackContext['settings'],
    private readonly rateLimits: PackContext['rateLimits'],
    private readonly audit: PackContext['audit'],
  ) {
    this.repository = new InvitationsRepository(db);
  }

  async list(rc: RequestContext | null, tenantId: string): Promise<InvitationView[]> {
    const now = nowIso();
    return (await this.repository.list(rc, tenantId)).map((i) => view(i, now));
  }

  async invite(rc: RequestContext, tenant: TenantRecord, input: { email: string; role: string }): Promise<InvitationView & { delivery: 'sent' | 'queued' }> {
    const email = input.email.trim().toLowerCase();
    const members = await this.directory.list(rc, tenant.id);
    if (members.some((m) => m.email === email)) throw AlreadyMember(email);
    const link = await this.loginUrl(rc);
    return this.db.transaction(rc, async (rc) => {
      const now = new Date();
      const nowText = now.toISOString();
      // Counted in this transaction: an invitation that is not created (409, rollback) does not count.
      await this.rateLimits.enforce({ ...rc, tenantId: tenant.id }, 'invitations', INVITATION_RATE);
      if (await this.repository.findPending(rc, tenant.id, email, nowText)) throw AlreadyMember(email);
      const token = randomBytes(32).toString('base64url');
      const invitation: InvitationRecord = {
        id: newId(), tenantId: tenant.id, email, role: input.role, status: 'pending', tokenHash: hashToken(token),
        invitedBy: rc.principal?.userId ?? null, expiresAt: new Date(now.getTime() + INVITATION_TTL_MS).toISOString(),
        createdAt: nowText, acceptedAt: null, acceptedBy: null,
      };
      await this.repository.insert(rc, invitation);
      await this.audit.add(rc, { action: 'member.invited', target: `invitation/${invitation.id}` });
      link.searchParams.set('invitation', token);
      const delivery = await this.mail.enqueue(rc, invitationMail({
        to: email, tenantName: tenant.name, role: input.role, link: link.toString(), expiresAt: invitation.expiresAt, invitationId: invitation.id,
      }));
      await this.events.publish(rc, {
        name: 'tenant.member.invited',
        payload: { tenantId: tenant.id, invitationId: invitation.id, email, role: input.role, expiresAt: invitation.expiresAt },
      });
      return { ...view(invitation, nowText), status: 'pending', delivery };
    });
  }

  async revoke(rc: RequestContext, tenantId: string, id: string): Promise<InvitationView> {
    return this.db.transaction(rc, async (rc) => {
      const invitation = await this.repository.find(rc, tenantId, id);
      if (!invitation) throw NotFound('No such invitation');
      if (invitation.status !== 'pending' || !(await this.repository.transition(rc, tenantId, id, 'revoked', null, nowIso()))) {
        throw Conflict(`The invitation is ${invitation.status} and can no longer be revoked`);
      }
      await this.events.publish(rc, { name: 'tenant.invitation.revoked', payload: { tenantId, invitationId: id } });
      return view({ ...invitation, status: 'revoked' });
    });
  }

  /** The signed-in user whose e-mail the invitation names becomes a member with its role. */
  async accept(rc: RequestContext, token: string): Promise<{ tenantId: string; member: MemberRecord }> {
    const principal = rc.principal!;
    const invitation = await this.repository.findByTokenHash(null, hashToken(token));
    if (!invitation) throw NotFound('No such invitation');
    if (invitation.status !== 'pending') throw Conflict(`The invitation was ${invitation.status === 'accepted' ? 'used' : 'revoked'} already`);
    const now = nowIso();
    if (invitation.expiresAt <= now) throw Conflict(`The invitation expired at ${invitation.expiresAt}`);
    // principal.email is null when the token says email_verified: false.
    if (!principal.email || principal.email !== invitation.email) throw Forbidden('The invitation was sent to another e-mail address');
    if (await this.members.activeRole(null, invitation.tenantId, principal.userId, principal.email)) throw AlreadyMember(principal.email);
    const tenantRc: RequestContext = { ...rc, tenantId: invitation.tenantId };
    return this.db.transaction(tenantRc, async (rc) => {
      if (!(await this.repository.transition(rc, invitation.tenantId, invitation.id, 'accepted', principal.userId, now))) {
        throw Conflict('The invitation was used already');
      }
      const existing = await this.members.findByEmail(rc, invitation.tenantId, invitation.email);
      let member: MemberRecord;
      if (existing) {
        await this.members.update(rc, invitation.tenantId, existing.id, { role: invitation.role, userId: principal.userId, name: principal.name, status: 'active' }, now);
        member = { ...existing, role: invitation.role, userId: principal.userId, name: principal.name, status: 'active', updatedAt: now };
      } else {
        member = {
          id: newId(), tenantId: invitation.tenantId, userId: principal.userId, email: invitation.email, name: principal.name,
          role: invitation.role, status: 'active', createdAt: now, updatedAt: now,
        };
        await this.members.insert(rc, member);
      }
      await this.events.publish(rc, {
        name: 'tenant.member.joined',
        payload: { tenantId: invitation.tenantId, memberId: member.id, invitationId: invitation.id, role: member.role },
      });
      return { tenantId: invitation.tenantId, member };
    });
  }

  /** INVITE_LOGIN_URL from the platform settings, else FRONTEND_URL/login, else the service's own /login. */
  private async loginUrl(rc: RequestContext): Promise<URL> {
    const settings = await this.settings.effective(rc);
    const invite = settings.INVITE_LOGIN_URL as string | null;
    if (invite) return new URL(invite);
    const frontend = (settings.FRONTEND_URL as string | null) ?? this.config.publicBaseUrl;
    return new URL(`${frontend.replace(/\/+$/, '')}/login`);
  }
}
