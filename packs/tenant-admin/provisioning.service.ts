import type { PackContext, RequestContext, TenantRecord, TenantRole } from '../../core/pack-api.js';
import type { DomainsService } from './domains.service.js';
import type { InvitationsService, InvitationView } from './invitations.service.js';
import { HEALTHCARE_BRANDING, HEALTHCARE_NAVIGATION } from './healthcare-profile.js';
import type { TenantDocumentsService } from './tenant-documents.service.js';

export interface ProvisionInput {
  tenant: { id?: string; name: string; plan?: TenantRecord['plan'] };
  domains?: string[];
  navigation?: unknown[];
  branding?: Record<string, unknown>;
  seed?: { healthcare?: boolean };
  /** Beyond the contract: people to invite to the new tenant (mailed only if provisioning commits). */
  invitations?: Array<{ email: string; role: TenantRole }>;
}

export interface ProvisionResult {
  tenant: TenantRecord;
  domains: string[];
  navigation: unknown[];
  branding: Record<string, unknown>;
  seeded: Record<string, number>;
  invitations: Array<Omit<InvitationView, 'createdAt'> & { delivery: 'sent' | 'queued' }>;
}

/**
 * The provisioning wizard: tenant, branding, site config with navigation, the Healthcare seed, optional
 * invitations and the domains in ONE transaction; any failure leaves nothing (no tenant, domain, record,
 * event or mail).
 * Domains are written last, so that a taken domain also rolls back the seed. The route honours
 * Idempotency-Key through the kernel (core/http/idempotency.ts).
 */
export class ProvisioningService {
  constructor(
    private readonly pack: PackContext,
    private readonly documents: TenantDocumentsService,
    private readonly domains: DomainsService,
    private readonly invitations: InvitationsService,
  ) {}

  provision(rc: RequestContext, input: ProvisionInput): Promise<ProvisionResult> {
    return this.pack.db.transaction(rc, (rc) => this.run(rc, input));
  }

  private async run(rc: RequestContext, input: ProvisionInput): Promise<ProvisionResult> {
    const tenant = await this.pack.tenants.create(rc, input.tenant);
    const trc: RequestContext = { ...rc, tenantId: tenant.id };
    const healthcare = input.seed?.healthcare === true;
    const branding = await this.documents.patch(trc, tenant, 'branding', { ...(healthcare ? HEALTHCARE_BRANDING : {}), ...(input.branding ?? {}) });
    const navigation = input.navigation ?? (healthcare ? HEALTHCARE_NAVIGATION : []);
    await this.documents.patch(trc, tenant, 'site_config', {
      siteName: tenant.name,
      navigation,
      ...(healthcare ? {
        seo: { title: tenant.name, description: `${tenant.name}: general practice, paediatrics and physiotherapy under one roof.` },
        contact: { email: 'info@example-clinic.com', phone: '+49 30 1234 5670', address: 'Lindenstraße 12, 10969 Berlin', openingHours: 'Mon–Thu 7:30–19:00, Fri 7:30–14:00' },
      } : {}),
    });
    // The content comes from the packs' contributions to the `healthcare` seed (the CMS pack's pages, forms, ...).
    const seeded = healthcare ? await this.pack.seeds.run(trc, 'healthcare', tenant) : {};
    const invitations: ProvisionResult['invitations'] = [];
    for (const invitation of input.invitations ?? []) {
      const { createdAt: _createdAt, ...created } = await this.invitations.invite(trc, tenant, invitation);
      invitations.push(created);
    }
    const domains = input.domains ? await this.domains.replace(trc, tenant, input.domains) : [];
    await this.pack.events.publish(trc, {
      name: 'tenant.provisioned',
      payload: { tenantId: tenant.id, plan: tenant.plan, domains, seeded },
    });
    return { tenant, domains, navigation, branding, seeded, invitations };
  }
}
