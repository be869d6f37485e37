import { ValidationFailed, type PackContext, type PackRouter } from '../../core/pack-api.js';
import regionDefinition from '../../schemas/erp/tax_region.schema.json' with { type: 'json' };

const fields = regionDefinition.schema.properties;

export const taxRegionResponse = {
  type: 'object',
  required: ['country', 'name', 'standardRateBasisPoints', 'reducedRateBasisPoints'],
  properties: {
    country: fields.country, name: fields.name,
    standardRateBasisPoints: fields.standardRateBasisPoints, reducedRateBasisPoints: fields.reducedRateBasisPoints,
  },
};

const putBody = {
  type: 'object',
  additionalProperties: false,
  required: ['standardRateBasisPoints'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 200, description: 'Default: the country code' },
    standardRateBasisPoints: { title: 'Standard rate', type: 'integer', minimum: 0, maximum: 10000, 'x-percent-basis-points': true },
    reducedRateBasisPoints: {
      title: 'Reduced rate', type: ['integer', 'null'], minimum: 0, maximum: 10000, 'x-percent-basis-points': true,
      description: 'For products of taxClass reduced; without it they pay the standard rate',
    },
  },
} as const;

/** A path's country: ISO 3166-1 alpha-2 in upper case, else 400 at /country. */
const countryParam = { name: 'country', pattern: /^[A-Z]{2}$/ };
/** The path's country as the router checks it and the document shows it. */
const params = { country: { type: 'string', pattern: countryParam.pattern.source } } as const;

/** /erp/tax-regions: the only way `erp.tax_region` records are written (admin); viewers read. */
export function taxRegionsRoutes(router: PackRouter, pack: PackContext): void {
  const regions = pack.use('erp.taxRegions');
  const tags = ['erp'];
  const country = (value: string) => checkCountry(value);

  router.get('/erp/tax-regions', {
    summary: 'The tenant\'s tax regions by destination country', tags, auth: 'tenant',
    response: { type: 'object', properties: { items: { type: 'array', items: taxRegionResponse } } },
  }, async (ctx) => ({ items: await regions.list(ctx.state.rc) }));

  router.get('/erp/tax-regions/:country', {
    summary: 'The tax region of a country (ISO 3166-1 alpha-2, upper case)', tags, auth: 'tenant', params,
    response: taxRegionResponse, errors: ['validation_failed', 'not_found'],
  }, async (ctx) => regions.get(ctx.state.rc, country(ctx.params.country)));

  router.put('/erp/tax-regions/:country', {
    summary: 'Create or replace the tax region of a country (admin): standard and reduced rates in basis points',
    tags, auth: 'tenant', role: 'admin', params, body: putBody, response: taxRegionResponse, errors: ['validation_failed'],
  }, async (ctx) => regions.put(ctx.state.rc, country(ctx.params.country), ctx.state.body));

  router.delete('/erp/tax-regions/:country', {
    summary: 'Delete the tax region of a country (admin): its lines are taxed at the products\' own rates again',
    tags, auth: 'tenant', role: 'admin', params, response: { type: 'null' }, errors: ['validation_failed', 'not_found'],
  }, async (ctx) => {
    await regions.remove(ctx.state.rc, country(ctx.params.country));
    return null;
  });
}

/** The country of a path, checked: 400 validation_failed at /country unless two upper-case letters. */
export function checkCountry(value: string): string {
  if (!countryParam.pattern.test(value)) {
    throw ValidationFailed('The country must be an ISO 3166-1 alpha-2 code in upper case', [{ path: '/country', message: 'must match ^[A-Z]{2}$' }]);
  }
  return value;
}
