import type { PackContext, RequestContext } from '../../core/pack-api.js';

export interface MemberRecord {
  id: string;
  tenantId: string;
  userId: string | null;
  email: string;
  name: string | null;
  role: string;
  status: 'active' | 'disabled';
  createdAt: string;
  updatedAt: string;
}

function toMember(r: any): MemberRecord {
  return {
    id: r.id, tenantId: r.tenant_id, userId: r.user_id, email: r.email, name: r.name, role: r.role, status: r.status,
    createdAt: r.created_at, updatedAt: r.updated_at,
  };
}

/** The local member store: who belongs to a tenant, with which role. */
export class MembersRepository {
  constructor(private readonly db: PackContext['db']) {}

  async list(rc: RequestContext | null, tenantId: string): Promise<MemberRecord[]> {
    const rows = await this.db.sql(rc).run(this.db.query('tenant_members').where({ tenant_id: tenantId }).orderBy('email'));
    return rows.map(toMember);
  }

  async findByEmail(rc: RequestContext | null, tenantId: string, email: string): Promise<MemberRecord | null> {
    const row = await this.db.sql(rc).run(this.db.query('tenant_members').where({ tenant_id: tenantId, email }).first());
    return row ? toMember(row) : null;
  }

  /** The role of the user's active membership in the tenant, by user id or (verified) e-mail; null without one. */
  async activeRole(rc: RequestContext | null, tenantId: string, userId: string, email: string | null): Promise<string | null> {
    const row = await this.db.sql(rc).run(this.db.query('tenant_members')
      .where({ tenant_id: tenantId, status: 'active' })
      .andWhere((q) => {
        q.where({ user_id: userId });
        if (email) q.orWhere({ email });
      })
      .first('role'));
    return row ? (row.role as string) : null;
  }

  /** Whether an active membership or a pending, unexpired invitation of the tenant holds the role (CONTRACT.md 16.1). */
  async holdsRole(rc: RequestContext, tenantId: string, role: string, now: string): Promise<boolean> {
    const member = await this.db.sql(rc).run(this.db.query('tenant_members').where({ tenant_id: tenantId, role, status: 'active' }).first('id'));
    if (member) return true;
    const invited = await this.db.sql(rc).run(this.db.query('tenant_invitations')
      .where({ tenant_id: tenantId, role, status: 'pending' }).andWhere('expires_at', '>', now).first('id'));
    return Boolean(invited);
  }

  /** The tenants a user belongs to, by user id or e-mail. */
  async tenantsOf(rc: RequestContext | null, userId: string, email: string | null): Promise<string[]> {
    const rows = await this.db.sql(rc).run(this.db.query('tenant_members')
      .where({ status: 'active' })
      .andWhere((q) => {
        q.where({ user_id: userId });
        if (email) q.orWhere({ email });
      })
      .distinct('tenant_id'));
    return rows.map((r: any) => r.tenant_id as string);
  }

  async insert(rc: RequestContext, m: MemberRecord): Promise<void> {
    await this.db.sql(rc).run(this.db.query('tenant_members').insert({
      tenant_id: m.tenantId, id: m.id, user_id: m.userId, email: m.email, name: m.name, role: m.role, status: m.status,
      created_at: m.createdAt, updated_at: m.updatedAt,
    }));
  }

  async update(rc: RequestContext, tenantId: string, id: string, changes: { role: string; userId: string | null; name: string | null; status: 'active' }, updatedAt: string): Promise<void> {
    await this.db.sql(rc).run(this.db.query('tenant_members').where({ tenant_id: tenantId, id }).update({
      role: changes.role, user_id: changes.userId, name: changes.name, status: changes.status, updated_at: updatedAt,
    }));
  }
}
