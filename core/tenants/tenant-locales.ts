import { LRUCache } from 'lru-cache';
import type { RequestContext } from '../base/request-context.js';
import type { ChangeFeed } from '../db/change-feed.js';

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

/** Change feed topic: a tenant's locales changed (key: the tenant); every process forgets them. */
const LOCALES_TOPIC = 'locales';
/** How long a process keeps a tenant's locales at most (what a process on the same SQLite file changed, unheard). */
const KEPT_MS = 5_000;

/**
 * The kernel's locales slot: the tenant-admin pack owns the site config, installs it with
 * `pack.locales.use(resolver)` and says `changed` when a tenant's locales change; until then every tenant has
 * DEFAULT_LOCALES. A localised read asks for them on every request, so each process keeps them (forgotten on
 * a change heard through the change feed, and after a few seconds in any case).
 */
export class LocalesHolder implements LocalesResolver {
  private resolver: LocalesResolver | null = null;
  private readonly kept = new LRUCache<string, TenantLocales>({ max: 10_000, ttl: KEPT_MS });

  constructor(private readonly changes?: ChangeFeed) {
    changes?.subscribe(LOCALES_TOPIC, (tenantId) => (tenantId === null ? this.kept.clear() : this.kept.delete(tenantId)));
  }

  use(resolver: LocalesResolver): void {
    this.resolver = resolver;
    this.kept.clear();
  }

  async localesOf(rc: RequestContext, tenantId: string): Promise<TenantLocales> {
    if (!this.resolver) return DEFAULT_LOCALES;
    const kept = this.changes?.live !== false && !rc.trx ? this.kept.get(tenantId) : undefined;
    if (kept) return kept;
    const locales = await this.resolver.localesOf(rc, tenantId);
    // Not what a transaction reads: it may hold a change not committed yet.
    if (!rc.trx) this.kept.set(tenantId, locales);
    return locales;
  }

  /** The tenant's locales changed in rc's transaction: every process forgets them (this one at once). */
  async changed(rc: RequestContext, tenantId: string): Promise<void> {
    this.kept.delete(tenantId);
    await this.changes?.notify(rc, LOCALES_TOPIC, tenantId);
  }
}
