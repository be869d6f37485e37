import { ValidationFailed, type PackContext, type RequestContext } from '../../core/pack-api.js';
import productDefinition from '../../schemas/erp/product.schema.json' with { type: 'json' };

export interface SalesDay {
  day: string;
  currency: string;
  orders: number;
  grossCents: number;
  refundedCents: number;
  netCents: number;
}

export interface LowStockProduct {
  id: string;
  number: number;
  sku: string;
  name: string;
  availableStock: number;
}

/** At most this many days a sales report (CONTRACT 15.5). */
export const MAX_REPORT_DAYS = 366;
const DEFAULT_DAYS = 30;
const DAY_MS = 86400000;
/** The currency of a day without orders when the period has none at all: the products' default. */
const DEFAULT_CURRENCY = productDefinition.schema.properties.currency.default;

/**
 * The dashboards' reports (CONTRACT 15.5): sales per day in the tenant's timezone, and low stock. Each is one
 * grouped or listed read of the records service, however many orders there are.
 */
export class ReportsService {
  constructor(private readonly pack: PackContext) {}

  /**
   * Orders not cancelled, per day of `createdAt` in the tenant's timezone (site config, else UTC) and currency:
   * their count, `totalCents` (gross), `refundedCents` (what succeeded refunds gave back) and the difference.
   * Every day of the period is listed; a day without orders has zeros in each currency of the period.
   */
  async salesByDay(rc: RequestContext, range: { from?: string; to?: string }): Promise<SalesDay[]> {
    const timeZone = await this.timeZone(rc);
    const to = range.to ?? (range.from ? addDays(range.from, DEFAULT_DAYS - 1) : localToday(timeZone));
    const from = range.from ?? addDays(to, 1 - DEFAULT_DAYS);
    const days = (Date.parse(to) - Date.parse(from)) / DAY_MS + 1;
    if (days < 1) throw ValidationFailed('from must not be after to', [{ path: '/from', message: `is after to (${to})` }]);
    if (days > MAX_REPORT_DAYS) throw ValidationFailed(`At most ${MAX_REPORT_DAYS} days`, [{ path: '/to', message: `is ${days} days after from, at most ${MAX_REPORT_DAYS}` }]);
    // The UTC instants a day before `from` and after `to` bound every local day of the period in any timezone (±14 h).
    const groups = await this.pack.records.group(rc, 'erp', 'order', {
      by: 'createdAt', byDay: true, timeZone, thenBy: 'currency', sum: ['totalCents', 'refundedCents'], order: 'key', limit: 2 * MAX_REPORT_DAYS * 20,
      filter: [
        { field: 'status', op: 'ne', value: 'cancelled' },
        { field: 'createdAt', op: 'gte', value: `${addDays(from, -1)}T00:00:00.000Z` },
        { field: 'createdAt', op: 'lt', value: `${addDays(to, 2)}T00:00:00.000Z` },
      ],
    });
    const inPeriod = groups.filter((g) => String(g.key) >= from && String(g.key) <= to);
    const currencies = [...new Set(inPeriod.map((g) => String(g.thenKey)))].sort();
    if (!currencies.length) currencies.push(DEFAULT_CURRENCY);
    const found = new Map(inPeriod.map((g) => [`${String(g.key)} ${String(g.thenKey)}`, g]));
    const items: SalesDay[] = [];
    for (let day = from; day <= to; day = addDays(day, 1)) {
      for (const currency of currencies) {
        const g = found.get(`${day} ${currency}`);
        const grossCents = g?.sum.totalCents ?? 0;
        const refundedCents = g?.sum.refundedCents ?? 0;
        items.push({ day, currency, orders: g?.count ?? 0, grossCents, refundedCents, netCents: grossCents - refundedCents });
      }
    }
    return items;
  }

  /** Active products whose available stock is below `below`, the lowest first (at most `limit`). */
  async lowStock(rc: RequestContext, below: number, limit: number): Promise<LowStockProduct[]> {
    const page = await this.pack.records.list(rc, 'erp', 'product', {
      filter: [{ field: 'status', op: 'eq', value: 'active' }, { field: 'physicalStock', op: 'lt', value: below }],
      sort: [{ field: 'physicalStock' }, { field: 'number' }], fields: ['number', 'sku', 'name', 'physicalStock'], limit, count: false,
    });
    return page.items.map((p) => ({ id: p.id, number: p.number, sku: p.sku, name: p.name, availableStock: p.physicalStock ?? 0 }));
  }

  /** The tenant's site-config timezone when the Intl database knows it, else UTC. */
  private async timeZone(rc: RequestContext): Promise<string> {
    const siteProfile = this.pack.use('tenant-admin.siteProfile?');
    if (!siteProfile) return 'UTC';
    const { timezone } = await siteProfile.getSiteConfig(rc, rc.tenantId!);
    if (typeof timezone !== 'string') return 'UTC';
    try {
      new Intl.DateTimeFormat('en', { timeZone: timezone });
      return timezone;
    } catch {
      return 'UTC';
    }
  }
}

/** The day `n` days after the day `day` (YYYY-MM-DD). */
function addDays(day: string, n: number): string {
  return new Date(Date.parse(day) + n * DAY_MS).toISOString().slice(0, 10);
}

/** Today's date on the wall clock of `timeZone`. */
function localToday(timeZone: string): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date());
}
