import { lineTaxCents } from './invoice-totals.js';
import { orderLine, orderTotals, type OrderLineAmounts } from './order-totals.js';
import type { ShippingOption } from './shipping-options.service.js';
import { lineRate, shippingRate, type TaxRegion } from './tax-rates.js';

/** What pricing reads of a product. */
export interface PricedProduct {
  id: string;
  number: number;
  sku: string;
  name: string;
  priceCents: number;
  currency: string;
  physicalStock: number;
  taxRateBasisPoints: number;
  taxClass?: string;
  status: string;
}

/** A priced line: 11.2's amounts of an order line, with the product's stock now. */
export interface CartLinePrice extends OrderLineAmounts {
  sku: string;
  productNumber: number | null;
  name: string | null;
  quantity: number;
  unitPriceCents: number;
  taxRateBasisPoints: number;
  availableStock: number;
}

export interface CartPrice {
  items: CartLinePrice[];
  shippingOption: { id: string; name: string; priceCents: number; taxCents: number } | null;
  subtotalCents: number;
  discountCents: number;
  shippingCents: number;
  taxCents: number;
  totalCents: number;
}

/** Code-unit order, the same on both engines (the database's collation is not). */
const bySku = (a: { sku: string }, b: { sku: string }) => (a.sku < b.sku ? -1 : a.sku > b.sku ? 1 : 0);

/**
 * Prices a cart with 11.2's arithmetic (CONTRACT 15.2): per line, unit price × quantity less the coupon's
 * percentage rounded half up, tax at the line's rate for the destination (tax-rates.ts) rounded half up; lines
 * sorted by sku. Shipping: the option's price, 0 when the lines' net after discounts reaches `freeAboveCents`,
 * taxed at the destination's standard rate; the cart's tax and total include it. A line whose product is gone
 * is priced at 0; one whose product is archived keeps its price and shows `availableStock: 0`.
 */
export function priceCart(
  lines: Array<{ sku: string; quantity: number }>,
  products: Map<string, PricedProduct>,
  context: { percentOff: number; region: TaxRegion | null; option: ShippingOption | null },
): CartPrice {
  const items: CartLinePrice[] = [...lines].sort(bySku).map((line) => {
    const p = products.get(line.sku);
    const unitPriceCents = p?.priceCents ?? 0;
    const taxRateBasisPoints = p ? lineRate(p, context.region) : 0;
    const amounts = orderLine({ quantity: line.quantity, unitPriceCents, taxRateBasisPoints }, context.percentOff);
    return {
      sku: line.sku, productNumber: p?.number ?? null, name: p?.name ?? null, quantity: line.quantity, unitPriceCents, taxRateBasisPoints,
      ...amounts, availableStock: p && p.status === 'active' ? p.physicalStock : 0,
    };
  });
  const totals = orderTotals(items.map((l) => ({ ...l })));
  const shipping = shippingCharge(context.option, context.region, totals.subtotalCents - totals.discountCents);
  const shippingOption = shipping.option;
  const shippingCents = shipping.cents;
  const shippingTax = shipping.taxCents;
  return {
    items, shippingOption,
    subtotalCents: totals.subtotalCents, discountCents: totals.discountCents, shippingCents,
    taxCents: totals.taxCents + shippingTax, totalCents: totals.totalCents + shippingCents + shippingTax,
  };
}

/** What shipping costs: the option's price, or 0 once the net after discounts reaches `freeAboveCents`. */
export interface ShippingCharge {
  option: { id: string; name: string; priceCents: number; taxCents: number } | null;
  cents: number;
  taxCents: number;
}

/**
 * Shipping by an option (none: nothing charged): its price, 0 when `netAfterDiscounts` reaches the option's
 * `freeAboveCents`, taxed at the destination's standard rate rounded half up. Carts and orders price it alike.
 */
export function shippingCharge(option: ShippingOption | null, region: TaxRegion | null, netAfterDiscounts: number): ShippingCharge {
  if (!option) return { option: null, cents: 0, taxCents: 0 };
  const free = option.freeAboveCents !== null && option.freeAboveCents !== undefined && netAfterDiscounts >= option.freeAboveCents;
  const cents = free ? 0 : option.priceCents;
  const taxCents = Number(lineTaxCents(BigInt(cents), BigInt(shippingRate(region))));
  return { option: { id: option.id, name: option.name, priceCents: option.priceCents, taxCents }, cents, taxCents };
}
