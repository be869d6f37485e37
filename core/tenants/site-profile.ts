import type { RequestContext } from '../kernel/request-context.js';

export type SiteDocument = Record<string, unknown>;

/**
 * A tenant's site configuration and branding, as other packs may read and patch them (the CMS import
 * writes navigation and branding). The tenant-admin pack owns the real store and installs it with
 * `kernel.siteProfile.use(store)`; until then the kernel keeps them in memory.
 */
export interface SiteProfileStore {
  getSiteConfig(rc: RequestContext, tenantId: string): Promise<SiteDocument>;
  /** Shallow merge of top-level keys; returns the new document. */
  patchSiteConfig(rc: RequestContext, tenantId: string, patch: SiteDocument): Promise<SiteDocument>;
  getBranding(rc: RequestContext, tenantId: string): Promise<SiteDocument>;
  patchBranding(rc: RequestContext, tenantId: string, patch: SiteDocument): Promise<SiteDocument>;
}

/** The default store: per-process memory (development and packs' tests only). */
export class InMemorySiteProfile implements SiteProfileStore {
  private readonly siteConfigs = new Map<string, SiteDocument>();
  private readonly brandings = new Map<string, SiteDocument>();

  async getSiteConfig(_rc: RequestContext, tenantId: string) { return structuredClone(this.siteConfigs.get(tenantId) ?? {}); }
  async patchSiteConfig(_rc: RequestContext, tenantId: string, patch: SiteDocument) { return merge(this.siteConfigs, tenantId, patch); }
  async getBranding(_rc: RequestContext, tenantId: string) { return structuredClone(this.brandings.get(tenantId) ?? {}); }
  async patchBranding(_rc: RequestContext, tenantId: string, patch: SiteDocument) { return merge(this.brandings, tenantId, patch); }
}

function merge(map: Map<string, SiteDocument>, tenantId: string, patch: SiteDocument): SiteDocument {
  const next = { ...(map.get(tenantId) ?? {}), ...structuredClone(patch) };
  map.set(tenantId, next);
  return structuredClone(next);
}

/** The kernel slot: delegates to the installed store (the tenant-admin pack replaces the default). */
export class SiteProfileHolder implements SiteProfileStore {
  private store: SiteProfileStore = new InMemorySiteProfile();

  use(store: SiteProfileStore): void {
    this.store = store;
  }

  getSiteConfig(rc: RequestContext, tenantId: string) { return this.store.getSiteConfig(rc, tenantId); }
  patchSiteConfig(rc: RequestContext, tenantId: string, patch: SiteDocument) { return this.store.patchSiteConfig(rc, tenantId, patch); }
  getBranding(rc: RequestContext, tenantId: string) { return this.store.getBranding(rc, tenantId); }
  patchBranding(rc: RequestContext, tenantId: string, patch: SiteDocument) { return this.store.patchBranding(rc, tenantId, patch); }
}
