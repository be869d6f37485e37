import { LRUCache } from 'lru-cache';
import { AppError, Forbidden, NotFound, ROLE_RANK, UUID_PATTERN, ValidationFailed, bffSuccess, nowIso, type HookPayload, type LocaleChoice, type PackContext, type Page, type ReadOptions, type RecordQuery, type RecordOf, type RequestContext } from '../../core/pack-api.js';
import { InsufficientStock } from './erp.errors.js';
import { CatalogRepository, type MovementReason, type StockMovement } from './catalog.repository.js';
import type { Product } from './generated/product.js';
import { lineTaxCents } from './invoice-totals.js';
import { lineRate } from './tax-rates.js';

export type { Product } from './generated/product.js';

/** What changeStock tells the product's update hook (HookPayload.note.stock): the change is the catalogue's own. */
interface StockNote {
  reason: MovementReason;
}

export interface StockAdjustment {
  delta: number;
  reason: Extract<MovementReason, 'restock' | 'correction' | 'damage' | 'return'>;
  note?: string;
}

/** What a storefront shows of a product (CONTRACT 11.1). */
export interface StorefrontProduct {
  number: number;
  sku: string;
  name: string;
  description: string | null;
  priceCents: number;
  currency: string;
  taxRateBasisPoints: number;
  grossPriceCents: number;
  inStock: boolean;
  availableStock: number;
  imageUrls: string[];
}

/** What the storefront reads of a product: its stored fields, id and version. */
export type StorefrontSource = Pick<Product, 'id' | 'number' | 'sku' | 'name' | 'description' | 'priceCents' | 'currency' | 'physicalStock' | 'taxRateBasisPoints' | 'taxClass' | 'status' | 'imageKeys' | 'version'>;

/** The storefront view of a product whose image URLs are known (none for a product without images). */
export function storefrontViewOf(p: StorefrontSource, imageUrls: string[]): StorefrontProduct {
  // Without a destination: the product's own rate, 0 for taxClass zero (CONTRACT 15.1).
  const tax = lineTaxCents(BigInt(p.priceCents), BigInt(lineRate(p, null)));
  return {
    number: p.number, sku: p.sku, name: p.name, description: p.description ?? null, priceCents: p.priceCents, currency: p.currency,
    taxRateBasisPoints: p.taxRateBasisPoints, grossPriceCents: Number(BigInt(p.priceCents) + tax),
    inStock: p.physicalStock > 0, availableStock: p.physicalStock, imageUrls,
  };
}

/** Names the shape of the storefront view in its ETags: change it when the view's fields change. */
const STOREFRONT_VIEW = 'sf1';

/** A storefront answer: its ETag (null: hash the body) and its JSON body, the envelope included. */
export interface StorefrontAnswer {
  tag: string | null;
  body: string;
}

/** The locale a storefront answers in (CONTRACT.md 17.2; `records.chooseLocale`): null for the site's default. */
export type StorefrontLocale = Awaited<ReturnType<PackContext['records']['chooseLocale']>>;

/** A storefront answer kept for the product's id and version it was rendered from. */
interface KeptAnswer extends StorefrontAnswer {
  id: string;
  version: number;
}

/** What the kept storefront answers of a process may take (their bodies' characters): ~10,000 products of ~350. */
const KEPT_ANSWERS_SIZE = 4 * 1024 * 1024;

/** The fields whose change (or the creation) is announced as `erp.inventory.updated`. */
const INVENTORY_FIELDS = ['physicalStock', 'priceCents', 'taxRateBasisPoints', 'status'] as const;

/**
 * The product catalogue: products are `erp.product` records (the records service runs validation, hooks and
 * the record events); this adds what the generic API cannot say — numbers, the stock ledger, stock taken and
 * given back by one conditional statement each, `erp.inventory.updated`, and the storefront's view.
 */
export class Catalog {
  readonly repository: CatalogRepository;
  /**
   * Storefront answers rendered before, by tenant and sku, each valid while the product keeps the id and
   * version it was rendered from: every write raises the version (the ETag stands on the same rule).
   */
  private readonly keptAnswers = new LRUCache<string, KeptAnswer>({ maxSize: KEPT_ANSWERS_SIZE, sizeCalculation: (a) => a.body.length + 64 });

  constructor(private readonly pack: PackContext) {
    this.repository = new CatalogRepository(pack.db);
  }

  /** A product by UUID or number; 404 not_found. */
  /** A product by UUID or number; `locale`: its localised fields in that locale (CONTRACT.md 17.2). */
  async get(rc: RequestContext, ref: string, locale: LocaleChoice | null = null): Promise<Product> {
    const parsed = parseRef(ref);
    const [found] = parsed === null ? [] : await findByRefs(this.pack.records, rc, 'product', [parsed], { locale });
    if (!found) throw NotFound(`No product "${ref.slice(0, 40)}"`);
    return found;
  }

  /** Products by UUID or number, keyed by the reference given. */
  async findMany(rc: RequestContext, refs: Array<string | number>): Promise<Map<string | number, Product>> {
    const found = await findByRefs(this.pack.records, rc, 'product', refs);
    const byRef = new Map<string | number, Product>();
    for (const p of found) {
      byRef.set(p.id, p);
      byRef.set(p.number, p);
    }
    return byRef;
  }

  list(rc: RequestContext, query: RecordQuery, locale: LocaleChoice | null = null): Promise<Page<Record<string, unknown>>> {
    return this.pack.records.list(rc, 'erp', 'product', query, { locale });
  }

  async create(rc: RequestContext, input: unknown, locale: LocaleChoice | null = null): Promise<Product> {
    return this.pack.records.create(rc, 'erp', 'product', input, { locale });
  }

  async update(rc: RequestContext, ref: string, patch: unknown, ifMatch: string | null, locale: LocaleChoice | null = null): Promise<Product> {
    const product = await this.get(rc, ref);
    return this.pack.records.update(rc, 'erp', 'product', product.id, patch, { ifMatch, locale });
  }

  /** A stock adjustment by hand: one conditional update and one movement, or 409 insufficient_stock and nothing. */
  async adjust(rc: RequestContext, ref: string, input: StockAdjustment): Promise<{ product: Product; movement: StockMovement }> {
    const product = await this.get(rc, ref);
    return this.pack.db.transaction(rc, async (rc) => {
      const changed = await this.changeStock(rc, product.id, input.delta, input.reason, { note: input.note ?? null });
      if (!changed) {
        const now = await this.get(rc, product.id);
        throw InsufficientStock(`Stock of ${now.sku} is ${now.physicalStock}; a change of ${input.delta} would take it below 0`,
          [{ path: '/delta', message: `must be at least ${-now.physicalStock}`, sku: now.sku, available: now.physicalStock }]);
      }
      return changed;
    });
  }

  async movements(rc: RequestContext, ref: string, limit: number, offset: number): Promise<Page<StockMovement>> {
    const product = await this.get(rc, ref);
    const { items, total } = await this.repository.listMovements(rc, product.id, limit, offset);
    const publicItems = items.map(({ productId: _p, ...m }) => m) as StockMovement[];
    return { items: publicItems, pagination: { limit, offset, total, hasMore: offset + items.length < total, nextCursor: null } };
  }

  /**
   * Adds `delta` to a product's stock by a conditional change through the records service (never below 0;
   * `expect` adds conditions, such as the price an order was placed at), under the product's row lock, and
   * writes the movement, in the caller's transaction. The records service raises `erp.product.updated` (with
   * `previous`); the update hook raises `erp.inventory.updated`. Null when the product is missing or a
   * condition failed: then nothing was written.
   */
  async changeStock(
    rc: RequestContext, productId: string, delta: number, reason: MovementReason,
    options: { orderId?: string | null; note?: string | null; expect?: { priceCents?: number; active?: boolean } } = {},
  ): Promise<{ product: Product; movement: StockMovement } | null> {
    const where: Array<[string, '=' | '>=', number | string]> = [];
    if (delta < 0) where.push(['physicalStock', '>=', -delta]);
    if (options.expect?.active) where.push(['status', '=', 'active']);
    if (options.expect?.priceCents !== undefined) where.push(['priceCents', '=', options.expect.priceCents]);
    const changed = await this.moveStock(rc, productId, reason, [{ delta, orderId: options.orderId ?? null, note: options.note ?? null }], where);
    return changed && { product: changed.product, movement: changed.movements[0] };
  }

  /**
   * Puts units of several orders back into one product's stock at once (cancellations): one change of the
   * product (its event and `erp.inventory.updated` once, for the sum) and a movement per order, each with the
   * stock after it, in the orders' order. Null when the product is gone (nothing written).
   */
  async returnStock(rc: RequestContext, productId: string, parts: ReadonlyArray<{ orderId: string; units: number }>, reason: MovementReason): Promise<Product | null> {
    const changed = await this.moveStock(rc, productId, reason, parts.map((p) => ({ delta: p.units, orderId: p.orderId, note: null })), []);
    return changed?.product ?? null;
  }

  /**
   * The one stock write: a conditional change of the product by the sum of the parts' deltas, then a movement per
   * part with the stock after it, in the parts' order. Null (nothing written) when the product is gone or `where` failed.
   */
  private async moveStock(
    rc: RequestContext, productId: string, reason: MovementReason,
    parts: ReadonlyArray<{ delta: number; orderId: string | null; note: string | null }>, where: Array<[string, '=' | '>=', number | string]>,
  ): Promise<{ product: Product; movements: StockMovement[] } | null> {
    const total = parts.reduce((sum, p) => sum + p.delta, 0);
    const stock: StockNote = { reason };
    const product = await this.pack.records.change(rc, 'erp', 'product', productId, { add: { physicalStock: total }, where }, { note: { stock } });
    if (!product) return null;
    const movements: StockMovement[] = [];
    let after = product.physicalStock - total;
    for (const part of parts) {
      after += part.delta;
      movements.push(await this.repository.addMovement(rc, {
        productId, delta: part.delta, reason, orderId: part.orderId, note: part.note, stockAfter: after, createdAt: product.updatedAt,
      }));
    }
    return { product, movements };
  }

  /** `erp.inventory.updated` with the payload of CONTRACT 11.1. */
  async publishInventory(rc: RequestContext, p: Omit<Product, 'createdAt' | 'updatedAt'>): Promise<void> {
    await this.pack.events.publish(rc, {
      name: 'erp.inventory.updated',
      payload: {
        productId: p.id, number: p.number, sku: p.sku, physicalStock: p.physicalStock, priceCents: p.priceCents,
        currency: p.currency, taxRateBasisPoints: p.taxRateBasisPoints, status: p.status, version: p.version,
      },
    });
  }

  /**
   * `erp.product.create`, in the write transaction: the server assigns the number, a duplicate sku is 409
   * (the unique index is the backstop), the initial stock is the ledger's first movement.
   */
  async beforeCreate(rc: RequestContext, id: string, data: Record<string, unknown>): Promise<Record<string, unknown>> {
    if (data.number !== undefined) throw ValidationFailed('number is assigned by the server', [{ path: '/number', message: 'may not be set' }]);
    await this.assertSkuFree(rc, id, data.sku as string);
    const number = await this.repository.nextNumber(rc, 'product');
    const product = { id, ...data, number, version: 1 } as Product;
    if (product.physicalStock) {
      await this.repository.addMovement(rc, {
        productId: id, delta: product.physicalStock, reason: 'initial', orderId: null, note: null, stockAfter: product.physicalStock, createdAt: nowIso(),
      });
    }
    await this.publishInventory(rc, product);
    return { ...data, number };
  }

  /**
   * `erp.product.update`, in the write transaction (the records service writes only if the version it read
   * is still current, so a racing order makes this fail whole): number stays, a stock change needs `admin`
   * and becomes a `patch` movement, a change of stock, price, tax rate or status raises erp.inventory.updated.
   */
  async beforeUpdate(
    rc: RequestContext, { id, data, previous, version, writer, note }: Pick<HookPayload, 'id' | 'data' | 'version' | 'writer' | 'note'> & { previous: Record<string, unknown> },
  ): Promise<void> {
    if (data.number !== previous.number) throw ValidationFailed('number is assigned by the server', [{ path: '/number', message: 'may not change' }]);
    if (data.sku !== previous.sku) await this.assertSkuFree(rc, id, data.sku as string);
    const delta = Number(data.physicalStock) - Number(previous.physicalStock);
    // A change of stock by this pack's catalogue (an order, a cancellation, an adjustment) writes its own movement.
    const byCatalog = writer === this.pack.name && note?.stock !== undefined;
    if (delta !== 0 && !byCatalog) {
      assertMayChangeStock(rc);
      await this.repository.addMovement(rc, {
        productId: id, delta, reason: 'patch', orderId: null, note: null, stockAfter: Number(data.physicalStock), createdAt: nowIso(),
      });
    }
    if (INVENTORY_FIELDS.some((f) => data[f] !== previous[f])) {
      await this.publishInventory(rc, { id, ...data, version } as Product);
    }
  }

  private async assertSkuFree(rc: RequestContext, id: string, sku: string): Promise<void> {
    const page = await this.pack.records.list(rc, 'erp', 'product', { filter: [{ field: 'sku', op: 'eq', value: sku }], limit: 1, count: false, fields: ['sku'] });
    const other = page.items[0];
    if (other && other.id !== id) {
      throw new AppError('conflict', 409, `Another product has the sku "${sku}"`, [{ path: '/sku', message: 'must be unique for the tenant' }]);
    }
  }

  /** The storefront's product: active only; gross price and image URLs of public objects. */
  async storefrontProduct(rc: RequestContext, sku: string): Promise<StorefrontProduct> {
    return this.storefrontView(rc, await this.storefrontRecord(rc, sku));
  }

  /** The active product with this sku, its stored fields, id and version; 404 not_found. */
  async storefrontRecord(rc: RequestContext, sku: string, locale: StorefrontLocale = null): Promise<StorefrontSource> {
    // By the sku alone, the unique index's statement (the status checked here): a bound status beside it let
    // SQLite's planner pick the status index and scan every active product.
    const product = await this.pack.records.findBy(rc, 'erp', 'product', { sku }, { locale });
    if (!product || product.status !== 'active') throw NotFound(`No product with the sku "${sku.slice(0, 64)}"`);
    return product;
  }

  /**
   * The storefront's answer for the active product with this sku; 404 not_found. The answer of a product
   * without images is rendered once per version: a later request reads only the product's id and version (the
   * sku index and the row's header, never its JSON) and, when they are still those it was rendered from,
   * answers what it rendered then; so a stock or price change shows on the next request, here or in any other
   * process. Its ETag is known from the version too. A product with images is rendered on every request: the
   * URLs depend on its storage objects, which its version does not follow (its ETag is a hash of the body).
   */
  async storefrontAnswer(rc: RequestContext, sku: string, locale: StorefrontLocale = null): Promise<StorefrontAnswer> {
    // Each locale's answer is its own (name and description in it), kept and tagged apart.
    const inLocale = locale ? `.${locale.locale}` : '';
    const key = `${rc.tenantId}/${sku}${inLocale}`;
    // A preview's drafts (CONTRACT.md 17.3) are rendered for it alone, never kept.
    const kept = rc.preview ? undefined : this.keptAnswers.get(key);
    if (kept) {
      const now = await this.pack.records.versionBy(rc, 'erp', 'product', { sku });
      if (now && now.id === kept.id && now.version === kept.version) return kept;
      this.keptAnswers.delete(key);
    }
    const product = await this.storefrontRecord(rc, sku, locale);
    if (product.imageKeys?.length) return { tag: null, body: JSON.stringify(bffSuccess(await this.storefrontView(rc, product))) };
    const answer: KeptAnswer = {
      id: product.id, version: product.version,
      tag: `${STOREFRONT_VIEW}.${product.number}.${product.version}${inLocale}`,
      body: JSON.stringify(bffSuccess(storefrontViewOf(product, []))),
    };
    if (!rc.preview) this.keptAnswers.set(key, answer);
    return answer;
  }

  async storefrontList(rc: RequestContext, query: { sku?: string; q?: string; limit: number; offset: number }, locale: StorefrontLocale = null): Promise<Page<StorefrontProduct>> {
    const filter: NonNullable<RecordQuery['filter']> = [{ field: 'status', op: 'eq', value: 'active' }];
    if (query.sku !== undefined) filter.push({ field: 'sku', op: 'eq', value: query.sku });
    // A case-insensitive substring of the name (the default locale's) or the sku.
    const anyOf = query.q === undefined ? undefined : [{ field: 'name', op: 'contains' as const, value: query.q }, { field: 'sku', op: 'contains' as const, value: query.q }];
    const { items, pagination } = await this.pack.records.list(rc, 'erp', 'product', { filter, anyOf, sort: [{ field: 'number' }], limit: query.limit, offset: query.offset }, { locale });
    const views = await Promise.all(items.map((p) => this.storefrontView(rc, p)));
    return { items: views, pagination: { ...pagination, nextCursor: null } };
  }

  async storefrontView(rc: RequestContext, p: StorefrontSource): Promise<StorefrontProduct> {
    return storefrontViewOf(p, p.imageKeys?.length ? await this.imageUrls(rc.tenantId!, p.imageKeys) : []);
  }

  /** URLs of the product's images that are public objects of the tenant (others are left out). */
  private async imageUrls(tenantId: string, keys: string[]): Promise<string[]> {
    const prefix = `tenants/${tenantId}/`;
    const urls = await Promise.all(keys.map(async (key) => {
      const path = key.startsWith(prefix) ? key.slice(prefix.length) : key;
      const object = await this.pack.storage.findPublic(tenantId, path).catch(() => null);
      return object ? this.pack.storage.publicUrl(tenantId, object.key) : null;
    }));
    return urls.filter((u): u is string => u !== null);
  }
}

/** Changing stock by hand (a PATCH of physicalStock, an adjustment) needs `admin`. */
export function assertMayChangeStock(rc: RequestContext): void {
  const p = rc.principal;
  if (p && !p.isSuperadmin && ROLE_RANK[p.role] < ROLE_RANK.admin) throw Forbidden('Changing stock by hand needs the admin role');
}

/** `in` filters hold at most this many values (the list query's limit). */
const REFS_PER_QUERY = 100;

/** Records of erp.<name> (products, orders) by UUID or number, a list query per hundred of each. */
export async function findByRefs<S extends 'product' | 'order'>(
  records: PackContext['records'], rc: RequestContext, name: S, refs: Array<string | number>, read: ReadOptions = {},
): Promise<Array<RecordOf<'erp', S>>> {
  const ids = [...new Set(refs.filter((r): r is string => typeof r === 'string' && UUID_PATTERN.test(r)))];
  const numbers = [...new Set(refs.filter((r): r is number => typeof r === 'number'))];
  const found = new Map<string, RecordOf<'erp', S>>();
  for (const [field, values] of [['id', ids], ['number', numbers]] as const) {
    for (let i = 0; i < values.length; i += REFS_PER_QUERY) {
      const value = values.slice(i, i + REFS_PER_QUERY);
      const { items } = await records.list(rc, 'erp', name, { filter: [{ field, op: 'in', value }], limit: REFS_PER_QUERY, count: false }, read);
      for (const record of items) found.set(record.id, record);
    }
  }
  return [...found.values()];
}

/** A product reference of a path: a UUID, or a number. */
export function parseRef(ref: string | number): string | number | null {
  if (typeof ref === 'number') return Number.isSafeInteger(ref) && ref >= 1 ? ref : null;
  if (UUID_PATTERN.test(ref)) return ref;
  if (/^[1-9][0-9]{0,15}$/.test(ref)) return Number(ref);
  return null;
}
