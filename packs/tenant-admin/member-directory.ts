import type { RequestContext } from '../../core/pack-api.js';
import type { MembersRepository } from './members.repository.js';

/** A member as GET /tenants/{id}/members shows it (CONTRACT.md section 4). */
export interface Member {
  id: string;
  email: string;
  name: string | null;
  role: string;
  status: string;
  source: 'local' | 'idp';
}

/** Where a tenant's members come from: the local store or the identity provider. */
export interface MemberDirectory {
  readonly kind: 'local' | 'keycloak';
  list(rc: RequestContext | null, tenantId: string): Promise<Member[]>;
}

/** The default directory: the members the platform keeps itself (accepted invitations). */
export class LocalMemberDirectory implements MemberDirectory {
  readonly kind = 'local' as const;

  constructor(private readonly members: MembersRepository) {}

  async list(rc: RequestContext | null, tenantId: string): Promise<Member[]> {
    return (await this.members.list(rc, tenantId)).map((m) => ({
      id: m.id, email: m.email, name: m.name, role: m.role, status: m.status, source: 'local' as const,
    }));
  }
}
