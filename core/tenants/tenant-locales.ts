import type { RequestContext } from '../base/request-context.js';

/** A tenant's locales (its site config's `locales` and `defaultLocale`, CONTRACT.md 17.2). */
export interface TenantLocales {
  defaultLocale: string;
  /** Every locale of the tenant, the default among them. */
  locales: readonly string[];
}

/** Where a tenant's locales are kept: the tenant-admin pack's site config. */
export interface LocalesResolver {
  localesOf(rc: RequestContext, tenantId: string): Promise<TenantLocales>;
}

/** A tenant without a site config, or a service without the tenant-admin pack: English alone. */
export const DEFAULT_LOCALES: TenantLocales = Object.freeze({ defaultLocale: 'en', locales: Object.freeze(['en']) });

/**
 * The kernel's locales slot: the tenant-admin pack owns the site config and installs it with
 * `pack.locales.use(resolver)`; until then every tenant has DEFAULT_LOCALES.
 */
export class LocalesHolder implements LocalesResolver {
  private resolver: LocalesResolver | null = null;

  use(resolver: LocalesResolver): void {
    this.resolver = resolver;
  }

  async localesOf(rc: RequestContext, tenantId: string): Promise<TenantLocales> {
    return this.resolver ? this.resolver.localesOf(rc, tenantId) : DEFAULT_LOCALES;
  }
}
