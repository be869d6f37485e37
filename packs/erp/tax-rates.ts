/** The tax classes of products (CONTRACT 15.1). */
export const TAX_CLASSES = ['standard', 'reduced', 'zero'] as const;
export type TaxClass = (typeof TAX_CLASSES)[number];

/** The standard rate where a destination has no tax region (and of products without a rate of their own). */
export const DEFAULT_STANDARD_RATE = 1900;

/** The rates of a destination country, as `erp.tax_region` holds them. */
export interface TaxRegion {
  country: string;
  name: string;
  standardRateBasisPoints: number;
  reducedRateBasisPoints: number | null;
}

/** The view of CONTRACT 15.1: the country is the region's key, its record id stays inside. */
export function taxRegionView(record: Record<string, unknown>): TaxRegion {
  return {
    country: record.country as string,
    name: record.name as string,
    standardRateBasisPoints: record.standardRateBasisPoints as number,
    reducedRateBasisPoints: (record.reducedRateBasisPoints as number | null | undefined) ?? null,
  };
}

/**
 * The rate of a line (CONTRACT 15.1): with a destination that has a region, the region's rate for the
 * product's class (`reduced` without a reduced rate is the standard one); otherwise (no destination, or a
 * country without a region) the product's own rate. `zero` is 0 either way.
 */
export function lineRate(product: { taxClass?: string | null; taxRateBasisPoints: number }, region: TaxRegion | null): number {
  if (product.taxClass === 'zero') return 0;
  if (!region) return product.taxRateBasisPoints;
  if (product.taxClass === 'reduced') return region.reducedRateBasisPoints ?? region.standardRateBasisPoints;
  return region.standardRateBasisPoints;
}

/** Shipping is taxed at the destination's standard rate: the region's, else 1900. */
export function shippingRate(region: TaxRegion | null): number {
  return region ? region.standardRateBasisPoints : DEFAULT_STANDARD_RATE;
}
