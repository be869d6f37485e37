import type { PackContext, RequestContext } from '../../core/pack-api.js';

export type InvitationStatus = 'pending' | 'accepted' | 'revoked';

export interface InvitationRecord {
  id: string;
  tenantId: string;
  email: string;
  role: string;
  status: InvitationStatus;
  tokenHash: string;
  invitedBy: string | null;
  expiresAt: string;
  createdAt: string;
  acceptedAt: string | null;
  acceptedBy: string | null;
}

function toInvitation(r: any): InvitationRecord {
  return {
    id: r.id, tenantId: r.tenant_id, email: r.email, role: r.role, status: r.status, tokenHash: r.token_hash, invitedBy: r.invited_by,
    expiresAt: r.expires_at, createdAt: r.created_at, acceptedAt: r.accepted_at, acceptedBy: r.accepted_by,
  };
}

/** Invitations to join a tenant; only the SHA-256 of the token is stored. */
export class InvitationsRepository {
  constructor(private readonly db: PackContext['db']) {}

  async insert(rc: RequestContext, i: InvitationRecord): Promise<void> {
    await this.db.sql(rc).run(this.db.query('tenant_invitations').insert({
      tenant_id: i.tenantId, id: i.id, email: i.email, role: i.role, status: i.status, token_hash: i.tokenHash, invited_by: i.invitedBy,
      expires_at: i.expiresAt, created_at: i.createdAt, accepted_at: i.acceptedAt, accepted_by: i.acceptedBy,
    }));
  }

  async find(rc: RequestContext | null, tenantId: string, id: string): Promise<InvitationRecord | null> {
    const row = await this.db.sql(rc).run(this.db.query('tenant_invitations').where({ tenant_id: tenantId, id }).first());
    return row ? toInvitation(row) : null;
  }

  async findByTokenHash(rc: RequestContext | null, tokenHash: string): Promise<InvitationRecord | null> {
    const row = await this.db.sql(rc).run(this.db.query('tenant_invitations').where({ token_hash: tokenHash }).first());
    return row ? toInvitation(row) : null;
  }

  async list(rc: RequestContext | null, tenantId: string): Promise<InvitationRecord[]> {
    const rows = await this.db.sql(rc).run(this.db.query('tenant_invitations').where({ tenant_id: tenantId }).orderBy('created_at', 'desc').limit(500));
    return rows.map(toInvitation);
  }

  /** A pending invitation for the e-mail that has not expired yet. */
  async findPending(rc: RequestContext | null, tenantId: string, email: string, now: string): Promise<InvitationRecord | null> {
    const row = await this.db.sql(rc).run(this.db.query('tenant_invitations')
      .where({ tenant_id: tenantId, email, status: 'pending' })
      .where('expires_at', '>', now)
      .first());
    return row ? toInvitation(row) : null;
  }

  /** Moves a pending invitation on; false when it was not pending any more (a concurrent accept or revoke). */
  async transition(rc: RequestContext, tenantId: string, id: string, status: InvitationStatus, acceptedBy: string | null, at: string): Promise<boolean> {
    const n = await this.db.sql(rc).run(this.db.query('tenant_invitations')
      .where({ tenant_id: tenantId, id, status: 'pending' })
      .update({ status, accepted_at: status === 'accepted' ? at : null, accepted_by: acceptedBy }));
    return Number(n) === 1;
  }
}
