import { type PackContext, nowIso, type RequestContext, type TenantRecord } from '../../core/pack-api.js';
import { TenantDocumentsRepository } from './tenant-documents.repository.js';

export const FEATURE_FLAGS = ['custom_domain', 'white_label', 'ai_assistant', 'priority_support'] as const;
export type FeatureFlag = (typeof FEATURE_FLAGS)[number];
export type FeatureMap = Record<FeatureFlag, boolean>;

/** What each plan includes; a superadmin's overrides are stored per tenant on top. */
export const PLAN_FEATURES: Record<TenantRecord['plan'], FeatureMap> = {
  free: { custom_domain: false, white_label: false, ai_assistant: false, priority_support: false },
  pro: { custom_domain: true, white_label: false, ai_assistant: true, priority_support: false },
  enterprise: { custom_domain: true, white_label: true, ai_assistant: true, priority_support: true },
};

/** A tenant's feature flags: its plan's defaults with the stored overrides applied. */
export class FeaturesService {
  private readonly repository: TenantDocumentsRepository;

  constructor(private readonly db: PackContext['db']) {
    this.repository = new TenantDocumentsRepository(db);
  }

  async get(rc: RequestContext | null, tenant: TenantRecord): Promise<FeatureMap> {
    const overrides = (await this.repository.get(rc, tenant.id, 'features')) ?? {};
    const features = { ...PLAN_FEATURES[tenant.plan] };
    for (const flag of FEATURE_FLAGS) if (typeof overrides[flag] === 'boolean') features[flag] = overrides[flag] as boolean;
    return features;
  }

  async has(rc: RequestContext | null, tenant: TenantRecord, flag: FeatureFlag): Promise<boolean> {
    return (await this.get(rc, tenant))[flag];
  }

  /** Stores a partial map of overrides (already validated: known flags, booleans). */
  async patch(rc: RequestContext, tenant: TenantRecord, changes: Partial<FeatureMap>): Promise<FeatureMap> {
    return this.db.transaction(rc, async (rc) => {
      const overrides = { ...((await this.repository.get(rc, tenant.id, 'features')) ?? {}), ...changes };
      await this.repository.put(rc, tenant.id, 'features', overrides, nowIso());
      return this.get(rc, tenant);
    });
  }
}
