import type { RequestContext, PackContext } from '../../core/pack-api.js';
import type { TenantDocumentsService } from './tenant-documents.service.js';

export type SiteDocument = Record<string, unknown>;

/**
 * A tenant's site configuration and branding, as other packs may read and patch them (the CMS import
 * writes navigation and branding). Provided as the service `tenant-admin.siteProfile`.
 */
export interface SiteProfileStore {
  getSiteConfig(rc: RequestContext, tenantId: string): Promise<SiteDocument>;
  /** Shallow merge of top-level keys; returns the new document. */
  patchSiteConfig(rc: RequestContext, tenantId: string, patch: SiteDocument): Promise<SiteDocument>;
  getBranding(rc: RequestContext, tenantId: string): Promise<SiteDocument>;
  patchBranding(rc: RequestContext, tenantId: string, patch: SiteDocument): Promise<SiteDocument>;
}

/**
 * The site profile backed by this pack's site config and branding documents, so that other
 * packs (the CMS import) read and merge-patch them with the same validation as PATCH /tenants/{id}/….
 */
export class TenantDocumentsSiteProfile implements SiteProfileStore {
  constructor(private readonly tenants: PackContext['tenants'], private readonly documents: TenantDocumentsService) {}

  async getSiteConfig(rc: RequestContext, tenantId: string) {
    return this.documents.get(rc, await this.tenants.require(rc, tenantId), 'site_config');
  }

  async patchSiteConfig(rc: RequestContext, tenantId: string, patch: SiteDocument) {
    return this.documents.patch(rc, await this.tenants.require(rc, tenantId), 'site_config', patch);
  }

  async getBranding(rc: RequestContext, tenantId: string) {
    return this.documents.get(rc, await this.tenants.require(rc, tenantId), 'branding');
  }

  async patchBranding(rc: RequestContext, tenantId: string, patch: SiteDocument) {
    return this.documents.patch(rc, await this.tenants.require(rc, tenantId), 'branding', patch);
  }
}
