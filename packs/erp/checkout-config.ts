import type { PackContext, RequestContext } from '../../core/pack-api.js';
import type { ShippingOption } from './generated/shipping_option.js';
import { taxRegionView, type TaxRegion } from './tax-rates.js';

/** The change-feed topic of a tenant's tax regions and shipping options (the key: the tenant). */
const TOPIC = 'erp.checkout-config';
/** How long a tenant's regions and options are kept at most (the bound should the feed die unnoticed). */
const KEPT_FOR_MS = 5_000;
/** How often the database's external change token is read (changes by other processes on one SQLite file). */
const TOKEN_READ_EVERY_MS = 10;
/** Tenants kept at most; beyond that the oldest goes. */
const MAX_TENANTS = 10_000;
/** A tenant with more options than one page is read every time (no tenant is expected to have that many). */
const PAGE = 200;

/** A tenant's tax regions by country and its shipping options by id. */
export interface CheckoutConfig {
  regions: Map<string, TaxRegion>;
  options: Map<string, ShippingOption>;
  /** False when the tenant has more options than were read: an option not among them must be read by id. */
  complete: boolean;
}

/**
 * What a cart read needs of a tenant's tax regions and shipping options, kept in memory per tenant so that a
 * priced cart read costs its two queries (the cart, its products) and no more. Both are sealed records
 * written only through this pack's services, which announce every write on the database's change feed
 * inside the write's transaction (`writing`): this process forgets the tenant at once, others when it commits
 * (PostgreSQL LISTEN/NOTIFY), or, on SQLite, within 10 ms through the file's change counter, as the kernel's
 * tenant lookups do. While the feed is down nothing is served from memory; nothing is kept longer than 5 s.
 */
export class CheckoutConfigCache {
  private readonly kept = new Map<string, { config: CheckoutConfig; until: number }>();
  private generation = 0;
  private tokenReadAt = 0;
  private seenToken: number | null = null;

  constructor(private readonly pack: PackContext) {
    pack.db.changes.subscribe(TOPIC, (tenantId) => this.forget(tenantId));
  }

  /** Runs a write of the tenant's regions or options in one transaction that also announces it on the feed. */
  writing<T>(rc: RequestContext, write: (rc: RequestContext) => Promise<T>): Promise<T> {
    return this.pack.db.transaction(rc, async (rc) => {
      const result = await write(rc);
      await this.pack.db.changes.notify(rc, TOPIC, rc.tenantId!);
      return result;
    });
  }

  /** The tenant's regions and options: kept ones while they are known to be current, else read in one go. */
  async of(rc: RequestContext): Promise<CheckoutConfig> {
    const tenantId = rc.tenantId!;
    if (rc.trx || !this.pack.db.changes.live) return this.read(rc);
    const now = Date.now();
    if (now - this.tokenReadAt >= TOKEN_READ_EVERY_MS) {
      this.tokenReadAt = now;
      const token = await this.pack.db.externalChangeToken(null);
      if (token !== this.seenToken) {
        this.seenToken = token;
        this.forget(null);
      }
    }
    const known = this.kept.get(tenantId);
    if (known && known.until > now) return known.config;
    const generation = this.generation;
    const config = await this.read(rc);
    // Kept only when no change was heard while it was read (the reads may have seen the state before it).
    if (config.complete && generation === this.generation) {
      if (this.kept.size >= MAX_TENANTS) this.kept.delete(this.kept.keys().next().value!);
      this.kept.set(tenantId, { config, until: Date.now() + KEPT_FOR_MS });
    }
    return config;
  }

  /** Both lists at once (two queries side by side; one after the other in a transaction, whose statements share one connection). */
  private async read(rc: RequestContext): Promise<CheckoutConfig> {
    const records = this.pack.records;
    const readRegions = () => records.list(rc, 'erp', 'tax_region', { limit: PAGE, count: false, sort: [{ field: 'country' }] });
    const readOptions = () => records.list(rc, 'erp', 'shipping_option', { limit: PAGE, count: false });
    const [regions, options] = rc.trx ? [await readRegions(), await readOptions()] : await Promise.all([readRegions(), readOptions()]);
    const more = regions.pagination.hasMore ? (await records.list(rc, 'erp', 'tax_region', { limit: PAGE, offset: PAGE, count: false, sort: [{ field: 'country' }] })).items : [];
    return {
      regions: new Map([...regions.items, ...more].map((r) => [r.country as string, taxRegionView(r)])),
      options: new Map((options.items as ShippingOption[]).map((o) => [o.id, o])),
      complete: !options.pagination.hasMore,
    };
  }

  private forget(tenantId: string | null): void {
    this.generation += 1;
    if (tenantId === null) this.kept.clear();
    else this.kept.delete(tenantId);
  }
}
