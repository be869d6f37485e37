import type { PackContext, RequestContext } from '../../core/pack-api.js';

/** Hosts a tenant serves its public site on; a host belongs to one tenant at most. */
export class DomainsRepository {
  constructor(private readonly db: PackContext['db']) {}

  async list(rc: RequestContext | null, tenantId: string): Promise<string[]> {
    const rows = await this.db.sql(rc).run(this.db.query('tenant_domains').where({ tenant_id: tenantId }).orderBy('host'));
    return rows.map((r: any) => r.host as string);
  }

  /** The tenant holding each of the given hosts, other than `exceptTenantId`. */
  async heldByOthers(rc: RequestContext | null, hosts: string[], exceptTenantId: string): Promise<Array<{ host: string; tenantId: string }>> {
    if (!hosts.length) return [];
    const rows = await this.db.sql(rc).run(this.db.query('tenant_domains').whereIn('host', hosts).whereNot('tenant_id', exceptTenantId));
    return rows.map((r: any) => ({ host: r.host, tenantId: r.tenant_id }));
  }

  async tenantOf(rc: RequestContext | null, host: string): Promise<string | null> {
    const row = await this.db.sql(rc).run(this.db.query('tenant_domains').where({ host }).first());
    return row ? (row.tenant_id as string) : null;
  }

  async replace(rc: RequestContext, tenantId: string, hosts: string[], createdAt: string): Promise<void> {
    const conn = this.db.sql(rc);
    await conn.run(this.db.query('tenant_domains').where({ tenant_id: tenantId }).delete());
    if (hosts.length) await conn.run(this.db.query('tenant_domains').insert(hosts.map((host) => ({ tenant_id: tenantId, host, created_at: createdAt }))));
  }
}
