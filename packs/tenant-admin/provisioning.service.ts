import { createHash } from 'node:crypto';
import { Conflict, nowIso, type PackContext, type RequestContext, type TenantPlan, type TenantRecord, type TenantRole } from '../../core/pack-api.js';
import type { DomainsService } from './domains.service.js';
import type { InvitationsService, InvitationView } from './invitations.service.js';
import { HEALTHCARE_BRANDING, HEALTHCARE_NAVIGATION } from './healthcare-profile.js';
import { IdempotencyRepository } from './idempotency.repository.js';
import type { TenantDocumentsService } from './tenant-documents.service.js';

export interface ProvisionInput {
  tenant: { id?: string; name: string; plan?: TenantPlan };
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

const IDEMPOTENCY_SCOPE = '_platform';
const OPERATION = 'tenant.provision';

/** JSON with sorted keys, so that the same request hashes the same whatever the key order. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * The provisioning wizard: tenant, branding, site config with navigation, the Healthcare seed, optional
 * invitations and the domains in ONE transaction; any failure leaves nothing (no tenant, domain, record,
 * event or mail).
 * Domains are written last, so that a taken domain also rolls back the seed. With an Idempotency-Key the
 * first result is stored in the same transaction and returned again for the same key and request.
 */
export class ProvisioningService {
  private readonly idempotency: IdempotencyRepository;

  constructor(
    private readonly pack: PackContext,
    private readonly documents: TenantDocumentsService,
    private readonly domains: DomainsService,
    private readonly invitations: InvitationsService,
  ) {
    this.idempotency = new IdempotencyRepository(pack.db);
  }

  async provision(rc: RequestContext, input: ProvisionInput, idempotencyKey: string | null): Promise<ProvisionResult> {
    const requestHash = createHash('sha256').update(canonical(input)).digest('hex');
    const replay = async (): Promise<ProvisionResult | null> => {
      if (!idempotencyKey) return null;
      const stored = await this.idempotency.find(null, IDEMPOTENCY_SCOPE, idempotencyKey);
      if (!stored) return null;
      if (stored.operation !== OPERATION || stored.requestHash !== requestHash) {
        throw Conflict('This Idempotency-Key was used with a different request');
      }
      return stored.response as ProvisionResult;
    };
    const first = await replay();
    if (first) return first;
    try {
      return await this.pack.db.transaction(rc, (rc) => this.run(rc, input, idempotencyKey, requestHash));
    } catch (err) {
      // A concurrent request with the same key may have won the race: answer with its result.
      const stored = await replay();
      if (stored) return stored;
      throw err;
    }
  }

  private async run(rc: RequestContext, input: ProvisionInput, idempotencyKey: string | null, requestHash: string): Promise<ProvisionResult> {
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
    const result: ProvisionResult = { tenant, domains, navigation, branding, seeded, invitations };
    if (idempotencyKey) {
      await this.idempotency.insert(trc, IDEMPOTENCY_SCOPE, idempotencyKey, OPERATION, { requestHash, status: 201, response: result }, nowIso());
    }
    return result;
  }
}
