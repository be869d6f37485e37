import { pageResponse, sendCacheable, sendCacheableBody, type PackContext, type PackRouter } from '../../core/pack-api.js';

/** `?locale=` (CONTRACT.md 17.2): a locale of the site, default its defaultLocale; unknown: 400 at /locale. */
const LOCALE_QUERY = { type: 'string', 'x-locale': 'one', minLength: 1, maxLength: 35, description: 'A locale of the site (default: its defaultLocale): name and description in it' };

/** Seconds a storefront answer may be cached: short, so that a stock change shows at once. */
const MAX_AGE = 5;

export const storefrontProduct = {
  type: 'object',
  properties: {
    number: { type: 'integer' }, sku: { type: 'string' }, name: { type: 'string' }, description: { type: ['string', 'null'] },
    priceCents: { type: 'integer' }, currency: { type: 'string' }, taxRateBasisPoints: { type: 'integer' },
    grossPriceCents: { type: 'integer', description: 'priceCents plus its VAT rounded half up' },
    inStock: { type: 'boolean' }, availableStock: { type: 'integer' }, imageUrls: { type: 'array', items: { type: 'string', format: 'uri' } },
  },
};

/** The storefront catalogue of the public runtime: active products, real time, cacheable for a few seconds. */
export function storefrontRoutes(router: PackRouter, pack: PackContext): void {
  const catalog = pack.use('erp.catalog');
  const tags = ['public'];
  // Without `erp` the storefront does not exist for the tenant: 404, not 403 (CONTRACT 11.1).
  const gate = { auth: 'public', tenantParam: 'tenantId', module: 'erp', absentWithoutModule: 'No storefront' } as const;

  router.get('/public/tenant/:tenantId/products', {
    summary: 'Active products of a storefront (?sku=, ?q= case-insensitive on name and sku, limit, offset)',
    tags, ...gate,
    query: {
      type: 'object',
      properties: {
        sku: { type: 'string', maxLength: 64 }, q: { type: 'string', minLength: 1, maxLength: 200 },
        limit: { type: 'integer', minimum: 1, maximum: 100, default: 20 }, offset: { type: 'integer', minimum: 0, maximum: 100000, default: 0 },
        locale: LOCALE_QUERY,
      },
    },
    response: pageResponse(storefrontProduct), errors: ['not_found', 'validation_failed'],
  }, async (ctx) => {
    const { locale, ...query } = ctx.state.query as { sku?: string; q?: string; limit: number; offset: number; locale?: string };
    const chosen = await pack.records.chooseLocale(ctx.state.rc, { locale }, { all: false });
    sendCacheable(ctx, await catalog.storefrontList(ctx.state.rc, query, chosen), MAX_AGE);
  });

  router.get('/public/tenant/:tenantId/products/:sku', {
    summary: 'One active product of a storefront by sku, with gross price and stock (ETag; If-None-Match answers 304)',
    tags, ...gate, response: storefrontProduct, errors: ['not_found', 'validation_failed'],
    query: { type: 'object', additionalProperties: false, properties: { locale: LOCALE_QUERY } },
    answers: { 304: 'Not modified (If-None-Match)' },
  }, async (ctx) => {
    // Most requests ask for no locale: the site's default, without a step of its own.
    const asked = (ctx.state.query as { locale?: string }).locale;
    const locale = asked === undefined ? null : await pack.records.chooseLocale(ctx.state.rc, { locale: asked }, { all: false });
    const answer = await catalog.storefrontAnswer(ctx.state.rc, ctx.params.sku, locale);
    sendCacheableBody(ctx, answer.body, answer.tag, MAX_AGE);
  });
}
