import { NotFound } from '../../core/pack-api.js';
import type { Page, PackContext, RecordQuery, RequestContext } from '../../core/pack-api.js';
import type { CheckoutConfigCache } from './checkout-config.js';
import type { ShippingOption } from './generated/shipping_option.js';

/** A shipping option as `erp.shipping_option` holds it. */
export type { ShippingOption } from './generated/shipping_option.js';

/** What a storefront sees of an option. */
export interface PublicShippingOption {
  id: string;
  name: string;
  priceCents: number;
  currency: string;
  freeAboveCents: number | null;
}

/** Whether an option serves a cart of this currency shipping to this country. */
export function serves(option: ShippingOption, currency: string, country: string | null): boolean {
  return option.active && option.currency === currency && country !== null && option.countries.includes(country);
}

/**
 * Shipping options: `erp.shipping_option` records, sealed (written only through /erp/shipping-options, by
 * the records service with the pack's authority); the storefront lists the active ones for a destination.
 */
export class ShippingOptionsService {
  constructor(private readonly pack: PackContext, private readonly config: CheckoutConfigCache) {}

  async create(rc: RequestContext, input: unknown): Promise<ShippingOption> {
    return (await this.config.writing(rc, (rc) => this.pack.records.create(rc, 'erp', 'shipping_option', input))) as ShippingOption;
  }

  list(rc: RequestContext, query: RecordQuery): Promise<Page<Record<string, unknown>>> {
    return this.pack.records.list(rc, 'erp', 'shipping_option', query);
  }

  async get(rc: RequestContext, id: string): Promise<ShippingOption> {
    return (await this.pack.records.get(rc, 'erp', 'shipping_option', id)) as ShippingOption;
  }

  /** The option with this id, or null (an id that is not a UUID is none). */
  async find(rc: RequestContext, id: string): Promise<ShippingOption | null> {
    return (await this.pack.records.find(rc, 'erp', 'shipping_option', id)) as ShippingOption | null;
  }

  async update(rc: RequestContext, id: string, patch: unknown, ifMatch: string | null): Promise<ShippingOption> {
    return (await this.config.writing(rc, (rc) => this.pack.records.update(rc, 'erp', 'shipping_option', id, patch, { ifMatch }))) as ShippingOption;
  }

  async remove(rc: RequestContext, id: string, ifMatch: string | null): Promise<void> {
    await this.config.writing(rc, (rc) => this.pack.records.delete(rc, 'erp', 'shipping_option', id, { ifMatch }));
  }

  /** The active options of a currency that serve a country, cheapest first (then by name). */
  async forDestination(rc: RequestContext, country: string, currency: string): Promise<PublicShippingOption[]> {
    const page = await this.pack.records.list(rc, 'erp', 'shipping_option', {
      filter: [{ field: 'active', op: 'eq', value: true }, { field: 'currency', op: 'eq', value: currency }],
      sort: [{ field: 'priceCents' }], limit: 200, count: false,
    });
    return (page.items as ShippingOption[])
      .filter((o) => serves(o, currency, country))
      .sort((a, b) => a.priceCents - b.priceCents || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      .map((o) => ({ id: o.id, name: o.name, priceCents: o.priceCents, currency: o.currency, freeAboveCents: o.freeAboveCents ?? null }));
  }
}

/** 404 for an id that names no option of the tenant. */
export function noOption(id: string): never {
  throw NotFound(`No shipping option "${id.slice(0, 40)}"`);
}
