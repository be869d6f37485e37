import { type Config, type PackContext, type ErrorDetail, nowIso, type RequestContext, type TenantRecord, ValidationFailed } from '../../core/pack-api.js';
import { DomainTaken, FeatureRequired } from './tenant-admin.errors.js';
import { DomainsRepository } from './domains.repository.js';
import type { FeaturesService } from './features.service.js';
import { isUnderDomain, isValidHostname, normalizeHost } from './hostname.js';

export const MAX_DOMAINS = 20;

/** A tenant's domains: validated, lower-cased, unique across tenants, custom ones only with `custom_domain`. */
export class DomainsService {
  readonly repository: DomainsRepository;

  constructor(private readonly db: PackContext['db'], private readonly config: Config, private readonly features: FeaturesService) {
    this.repository = new DomainsRepository(db);
  }

  list(rc: RequestContext | null, tenantId: string): Promise<string[]> {
    return this.repository.list(rc, tenantId);
  }

  /** Checks and normalises a list of hostnames (400 validation_failed naming each bad entry). */
  normalize(tenant: TenantRecord, domains: string[], path = '/domains'): string[] {
    const issues: ErrorDetail[] = [];
    const base = this.config.platformBaseDomain;
    const hosts = domains.map((raw, i) => {
      const host = raw.trim().toLowerCase().replace(/\.$/, '');
      if (!isValidHostname(host)) issues.push({ path: `${path}/${i}`, message: 'must be a hostname such as www.example.com (no scheme, port or path)' });
      else if (isUnderDomain(host, base) && !isUnderDomain(host, `${tenant.id}.${base}`)) {
        issues.push({ path: `${path}/${i}`, message: `below ${base} only ${tenant.id}.${base} and its subdomains belong to this tenant` });
      }
      return host;
    });
    const unique = [...new Set(hosts)];
    if (unique.length > MAX_DOMAINS) issues.push({ path, message: `must hold at most ${MAX_DOMAINS} domains` });
    if (issues.length) throw ValidationFailed('Invalid domains', issues);
    return unique;
  }

  /** Replaces the tenant's domains in one transaction: 409 domain_taken, 402 feature_required. */
  async replace(rc: RequestContext, tenant: TenantRecord, domains: string[]): Promise<string[]> {
    const hosts = this.normalize(tenant, domains);
    const custom = hosts.filter((h) => !isUnderDomain(h, this.config.platformBaseDomain));
    return this.db.transaction(rc, async (rc) => {
      if (custom.length && !(await this.features.has(rc, tenant, 'custom_domain'))) throw FeatureRequired('custom_domain');
      const taken = await this.repository.heldByOthers(rc, hosts, tenant.id);
      if (taken.length) throw DomainTaken(taken[0].host, taken.map((t) => ({ path: `/domains/${hosts.indexOf(t.host)}`, message: 'is held by another tenant' })));
      await this.repository.replace(rc, tenant.id, hosts, nowIso());
      return this.repository.list(rc, tenant.id);
    });
  }

  /** The tenant a host resolves to: a registered domain, else `{tenantId}.{PLATFORM_BASE_DOMAIN}`. */
  async resolve(rc: RequestContext | null, rawHost: string): Promise<{ host: string; tenantId: string | null }> {
    const host = normalizeHost(rawHost);
    const held = await this.repository.tenantOf(rc, host);
    if (held) return { host, tenantId: held };
    const suffix = `.${this.config.platformBaseDomain}`;
    if (host.endsWith(suffix)) {
      const label = host.slice(0, -suffix.length);
      if (/^[a-z0-9][a-z0-9-]{1,62}$/.test(label)) return { host, tenantId: label };
    }
    return { host, tenantId: null };
  }
}
