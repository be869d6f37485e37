import { AppError, NotFound } from '../../core/pack-api.js';
import type { DataRecord, PackContext, RequestContext } from '../../core/pack-api.js';
import type { CheckoutConfigCache } from './checkout-config.js';
import { taxRegionView, type TaxRegion } from './tax-rates.js';

export interface TaxRegionInput {
  name?: string;
  standardRateBasisPoints: number;
  reducedRateBasisPoints?: number | null;
}

/**
 * Tax regions by destination country: `erp.tax_region` records (sealed: written only here, through the
 * records service), one per country (the schema's unique key decides between concurrent creations).
 */
export class TaxRegionsService {
  constructor(private readonly pack: PackContext, private readonly config: CheckoutConfigCache) {}

  /** The region of a country, or null. */
  async find(rc: RequestContext, country: string): Promise<TaxRegion | null> {
    const record = await this.pack.records.findOne(rc, 'erp', 'tax_region', { country });
    return record ? taxRegionView(record) : null;
  }

  async get(rc: RequestContext, country: string): Promise<TaxRegion> {
    const region = await this.find(rc, country);
    if (!region) throw NotFound(`No tax region for ${country}`);
    return region;
  }

  /** Every region of the tenant, by country (at most one per country of ISO 3166-1: fewer than 250). */
  async list(rc: RequestContext): Promise<TaxRegion[]> {
    const page = await this.pack.records.list(rc, 'erp', 'tax_region', { sort: [{ field: 'country' }], limit: 200, count: false });
    const more = page.pagination.hasMore
      ? (await this.pack.records.list(rc, 'erp', 'tax_region', { sort: [{ field: 'country' }], limit: 200, offset: 200, count: false })).items
      : [];
    return [...page.items, ...more].map(taxRegionView);
  }

  /** Creates or replaces the region of a country. A creation that loses a race to another becomes an update. */
  async put(rc: RequestContext, country: string, input: TaxRegionInput): Promise<TaxRegion> {
    const data = {
      country, name: input.name ?? country,
      standardRateBasisPoints: input.standardRateBasisPoints, reducedRateBasisPoints: input.reducedRateBasisPoints ?? null,
    };
    for (let attempt = 1; ; attempt++) {
      const current = await this.pack.records.findOne(rc, 'erp', 'tax_region', { country });
      try {
        const written: DataRecord = await this.config.writing(rc, (rc) => (current
          ? this.pack.records.update(rc, 'erp', 'tax_region', current.id, data)
          : this.pack.records.create(rc, 'erp', 'tax_region', data)));
        return taxRegionView(written);
      } catch (err) {
        if (attempt >= 3 || !(err instanceof AppError) || err.code !== 'conflict') throw err;
      }
    }
  }

  async remove(rc: RequestContext, country: string): Promise<void> {
    const current = await this.pack.records.findOne(rc, 'erp', 'tax_region', { country });
    if (!current) throw NotFound(`No tax region for ${country}`);
    await this.config.writing(rc, (rc) => this.pack.records.delete(rc, 'erp', 'tax_region', current.id));
  }
}
