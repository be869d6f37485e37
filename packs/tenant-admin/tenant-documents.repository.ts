import type { PackContext, RequestContext } from '../../core/pack-api.js';

export type DocumentKind = 'site_config' | 'branding' | 'features';

/** Per-tenant JSON documents (site config, branding, feature overrides), one row per tenant and kind. */
export class TenantDocumentsRepository {
  constructor(private readonly db: PackContext['db']) {}

  async get(rc: RequestContext | null, tenantId: string, kind: DocumentKind): Promise<Record<string, unknown> | null> {
    const row = await this.db.sql(rc).run(this.db.query('tenant_documents').where({ tenant_id: tenantId, kind }).first());
    return row ? this.db.dialect.fromJson<Record<string, unknown>>(row.data) : null;
  }

  async put(rc: RequestContext, tenantId: string, kind: DocumentKind, data: Record<string, unknown>, updatedAt: string): Promise<void> {
    await this.db.sql(rc).run(this.db.query('tenant_documents')
      .insert({ tenant_id: tenantId, kind, data: this.db.dialect.toJson(data), updated_at: updatedAt })
      .onConflict(['tenant_id', 'kind'])
      .merge(['data', 'updated_at']));
  }
}
