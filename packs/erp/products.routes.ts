import { listQueryOf, LOCALE_QUERY_PROPERTIES, OFFSET_QUERY, pageResponse, queryFromString, recordResponse, splitLocale, WRITE_LOCALE_QUERY, type AppContext, type PackContext, type PackRouter } from '../../core/pack-api.js';
import { InsufficientStock } from './erp.errors.js';
import productDefinition from '../../schemas/erp/product.schema.json' with { type: 'json' };

const product = recordResponse(productDefinition);
const { number: _number, ...writable } = productDefinition.schema.properties;
const required = new Set<string>(productDefinition.schema.required ?? []);
/** A merge patch may also set a field to null (to remove it), but not a required one: the patched product must hold it. */
const patchable = Object.fromEntries(Object.entries(writable).map(([name, schema]) => [name, required.has(name) ? schema : { anyOf: [schema, { type: 'null' }] }]));

const movement = {
  type: 'object',
  properties: {
    id: { type: 'string', format: 'uuid' }, delta: { type: 'integer' },
    reason: { type: 'string', enum: ['initial', 'order', 'cancel', 'patch', 'restock', 'correction', 'damage', 'return'] },
    orderId: { type: ['string', 'null'] }, note: { type: ['string', 'null'] }, stockAfter: { type: 'integer' },
    createdAt: { type: 'string', format: 'date-time' },
  },
};

const adjustmentBody = {
  type: 'object',
  required: ['delta', 'reason'],
  additionalProperties: false,
  properties: {
    delta: { type: 'integer', minimum: -1000000000, maximum: 1000000000, not: { const: 0 } },
    reason: { type: 'string', enum: ['restock', 'correction', 'damage', 'return'] },
    note: { type: 'string', maxLength: 2000 },
  },
};

const pagingQuery = {
  type: 'object',
  properties: { limit: { type: 'integer', minimum: 1, maximum: 200, default: 50 }, offset: OFFSET_QUERY },
};

/** Products (`erp.product` records) with server numbers, and the stock ledger. `{id}` is the UUID or the number. */
export function productsRoutes(router: PackRouter, pack: PackContext): void {
  const catalog = pack.use('erp.catalog');
  const tags = ['erp'];
  const withEtag = <T extends { version: number }>(ctx: { set(k: string, v: string): void }, item: T) => {
    ctx.set('ETag', `"${item.version}"`);
    return item;
  };

  // `?locale=` (CONTRACT.md 17.2): name and description in a locale of the site; reads also `*` and `fallback`.
  const readLocale = (ctx: AppContext) => pack.records.chooseLocale(ctx.state.rc, { locale: ctx.query.locale, fallback: ctx.query.fallback });
  const writeLocale = (ctx: AppContext) => pack.records.chooseLocale(ctx.state.rc, { locale: ctx.query.locale }, { all: false });
  const writeQuery = { type: 'object', additionalProperties: false, properties: { locale: WRITE_LOCALE_QUERY } };

  router.get('/erp/products', {
    summary: 'List products (filter[status]=active, filter[sku]=…, sort=-priceCents, limit, offset, cursor, fields, count; locale, fallback)',
    tags, auth: 'tenant', query: listQueryOf(product, { locales: true }), response: pageResponse(product),
    errors: ['invalid_filter', 'invalid_cursor', 'validation_failed'],
  }, async (ctx) => catalog.list(ctx.state.rc, queryFromString(splitLocale(ctx.query).rest), await readLocale(ctx)));

  router.post('/erp/products', {
    summary: 'Create a product (the server assigns its number; an initial physicalStock is the first movement of its ledger; ?locale=: the name and description are that locale\'s and the default\'s)',
    tags, auth: 'tenant', role: 'editor', status: 201, idempotent: true, query: writeQuery,
    body: { type: 'object', required: productDefinition.schema.required, additionalProperties: false, properties: writable },
    response: product, errors: ['conflict', 'validation_failed'],
  }, async (ctx) => withEtag(ctx, await catalog.create(ctx.state.rc, ctx.state.body, await writeLocale(ctx))));

  router.get('/erp/products/:id', {
    summary: 'Read a product by UUID or number (locale, fallback)', tags, auth: 'tenant', response: product,
    query: { type: 'object', additionalProperties: false, properties: LOCALE_QUERY_PROPERTIES }, errors: ['not_found', 'validation_failed'],
  }, async (ctx) => withEtag(ctx, await catalog.get(ctx.state.rc, ctx.params.id, await readLocale(ctx))));

  router.patch('/erp/products/:id', {
    summary: 'Change a product with a JSON merge patch (If-Match optional; ?locale=: the name and description set are that locale\'s); changing physicalStock needs admin and is a `patch` movement',
    tags, auth: 'tenant', role: 'editor', query: writeQuery,
    // Unknown keys answer 400, as the patched product is checked against its schema (the document says so now).
    body: { type: 'object', description: 'A JSON merge patch (RFC 7396) of the product; number may not change', additionalProperties: false, properties: patchable },
    response: product, errors: ['not_found', 'conflict', 'version_mismatch', 'forbidden', 'validation_failed'],
  }, async (ctx) => withEtag(ctx, await catalog.update(ctx.state.rc, ctx.params.id, ctx.state.body, ctx.get('If-Match') || null, await writeLocale(ctx))));

  router.post('/erp/products/:id/stock-adjustments', {
    summary: 'Adjust a product\'s stock by hand (admin): one movement; below 0 answers 409 insufficient_stock and writes nothing',
    tags, auth: 'tenant', role: 'admin', status: 201, idempotent: true, body: adjustmentBody,
    response: { type: 'object', properties: { product, movement } }, errors: ['not_found', InsufficientStock],
  }, async (ctx) => {
    // The administration's audit entry (CONTRACT 16.4) with the adjustment, whichever way the product was named.
    const { product: p, movement: m } = await pack.audit.within<Awaited<ReturnType<typeof catalog.adjust>>>(ctx.state.rc, (made) => ({ action: 'stock.adjusted', target: `erp.product/${made.product.id}` }),
      (rc) => catalog.adjust(rc, ctx.params.id, ctx.state.body));
    const { productId: _p, ...shown } = m;
    return { product: p, movement: shown };
  });

  router.get('/erp/products/:id/stock-movements', {
    summary: 'The stock ledger of a product, oldest first: { id, delta, reason, orderId, note, stockAfter, createdAt }',
    tags, auth: 'tenant', query: pagingQuery, response: pageResponse(movement), errors: ['not_found'],
  }, async (ctx) => catalog.movements(ctx.state.rc, ctx.params.id, ctx.state.query.limit, ctx.state.query.offset));
}
