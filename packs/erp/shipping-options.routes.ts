import { listQueryOf, pageResponse, queryFromString, recordResponse, type PackContext, type PackRouter } from '../../core/pack-api.js';
import optionDefinition from '../../schemas/erp/shipping_option.schema.json' with { type: 'json' };

export const shippingOptionResponse = recordResponse(optionDefinition);
const writable = optionDefinition.schema.properties;
/** A merge patch may also set an optional field to null. */
const patchable = { ...writable, freeAboveCents: { type: ['integer', 'null'], minimum: 0, maximum: 100000000000 } };

const publicOption = {
  type: 'object',
  required: ['id', 'name', 'priceCents', 'currency', 'freeAboveCents'],
  properties: {
    id: { type: 'string', format: 'uuid' }, name: { type: 'string' }, priceCents: { type: 'integer', description: 'Net of VAT' },
    currency: { type: 'string' }, freeAboveCents: { type: ['integer', 'null'], description: 'Shipping is free when the cart\'s net after discounts reaches this' },
  },
};

/** /erp/shipping-options (admin writes, viewer reads) and the storefront's list of a destination's options. */
export function shippingOptionsRoutes(router: PackRouter, pack: PackContext): void {
  const options = pack.use('erp.shippingOptions');
  const tags = ['erp'];
  const withEtag = <T extends { version: number }>(ctx: { set(k: string, v: string): void }, item: T) => {
    ctx.set('ETag', `"${item.version}"`);
    return item;
  };

  router.post('/erp/shipping-options', {
    summary: 'Create a shipping option (admin): a net price in one currency for the listed countries, free above an amount',
    tags, auth: 'tenant', role: 'admin', status: 201, idempotent: true,
    body: { type: 'object', required: ['name', 'priceCents', 'countries'], additionalProperties: false, properties: writable },
    response: shippingOptionResponse, errors: ['validation_failed'],
  }, async (ctx) => withEtag(ctx, await options.create(ctx.state.rc, ctx.state.body)));

  router.get('/erp/shipping-options', {
    summary: 'List shipping options (filter[active]=true, filter[currency]=EUR, limit, offset, cursor, sort)',
    tags, auth: 'tenant', query: listQueryOf(shippingOptionResponse), response: pageResponse(shippingOptionResponse),
    errors: ['invalid_filter', 'invalid_cursor'],
  }, async (ctx) => options.list(ctx.state.rc, queryFromString(ctx.query)));

  router.get('/erp/shipping-options/:id', {
    summary: 'Read a shipping option', tags, auth: 'tenant', response: shippingOptionResponse, errors: ['not_found'],
  }, async (ctx) => withEtag(ctx, await options.get(ctx.state.rc, ctx.params.id)));

  router.patch('/erp/shipping-options/:id', {
    summary: 'Change a shipping option with a JSON merge patch (admin; If-Match optional)',
    tags, auth: 'tenant', role: 'admin',
    body: { type: 'object', additionalProperties: false, description: 'A JSON merge patch (RFC 7396) of the option', properties: patchable },
    response: shippingOptionResponse, errors: ['validation_failed', 'not_found', 'version_mismatch'],
  }, async (ctx) => withEtag(ctx, await options.update(ctx.state.rc, ctx.params.id, ctx.state.body, ctx.get('If-Match') || null)));

  router.delete('/erp/shipping-options/:id', {
    summary: 'Delete a shipping option (admin; If-Match optional); carts that chose it show no option any more',
    tags, auth: 'tenant', role: 'admin', response: { type: 'null' }, errors: ['not_found', 'version_mismatch'],
  }, async (ctx) => {
    await options.remove(ctx.state.rc, ctx.params.id, ctx.get('If-Match') || null);
    return null;
  });

  router.get('/public/tenant/:tenantId/shipping-options', {
    summary: 'The active shipping options of a storefront for a destination country and currency (cheapest first)',
    tags: ['public'], auth: 'public', tenantParam: 'tenantId', module: 'erp', absentWithoutModule: 'No storefront',
    query: {
      type: 'object', additionalProperties: false, required: ['country'],
      properties: { country: { type: 'string', pattern: '^[A-Z]{2}$' }, currency: { type: 'string', pattern: '^[A-Z]{3}$', default: 'EUR' } },
    },
    response: pageResponse(publicOption), errors: ['validation_failed', 'not_found'],
  }, async (ctx) => {
    const items = await options.forDestination(ctx.state.rc, ctx.state.query.country, ctx.state.query.currency);
    return { items, pagination: { limit: items.length, offset: 0, total: items.length, hasMore: false, nextCursor: null } };
  });
}
