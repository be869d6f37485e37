import { lineTaxCents } from './invoice-totals.js';
import { orderLine, orderTotals, type OrderLineAmounts } from './order-totals.js';
import type { ShippingOption } from './shipping-options.service.js';
import { lineRate, shippingRate, type TaxRegion } from './tax-rates.js';

/** What pricing reads of a product. */
export interface PricedProduct {
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
  let shippingOption: CartPrice['shippingOption'] = null;
  let shippingCents = 0;
  let shippingTax = 0;
  if (context.option) {
    const netAfterDiscounts = totals.subtotalCents - totals.discountCents;
    const free = context.option.freeAboveCents !== null && context.option.freeAboveCents !== undefined && netAfterDiscounts >= context.option.freeAboveCents;
    shippingCents = free ? 0 : context.option.priceCents;
    shippingTax = Number(lineTaxCents(BigInt(shippingCents), BigInt(shippingRate(context.region))));
    shippingOption = { id: context.option.id, name: context.option.name, priceCents: context.option.priceCents, taxCents: shippingTax };
  }
  return {
    items, shippingOption,
    subtotalCents: totals.subtotalCents, discountCents: totals.discountCents, shippingCents,
    taxCents: totals.taxCents + shippingTax, totalCents: totals.totalCents + shippingCents + shippingTax,
  };
}
