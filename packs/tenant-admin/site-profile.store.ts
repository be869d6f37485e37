import type { RequestContext } from '../../core/kernel/request-context.js';
import type { SiteDocument, SiteProfileStore } from '../../core/tenants/site-profile.js';
import type { TenantsService } from '../../core/tenants/tenants.service.js';
import type { TenantDocumentsService } from './tenant-documents.service.js';

/**
 * The kernel's siteProfile slot backed by this pack's site config and branding documents, so that other
 * packs (the CMS import) read and merge-patch them with the same validation as PATCH /tenants/{id}/….
 */
export class TenantDocumentsSiteProfile implements SiteProfileStore {
  constructor(private readonly tenants: TenantsService, private readonly documents: TenantDocumentsService) {}

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
