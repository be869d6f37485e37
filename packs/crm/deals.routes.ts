import { type AppContext, type DataRecord, listQueryOf, type PackContext, type PackRouter, pageResponse, queryFromString, recordResponse } from '../../core/pack-api.js';
import dealDefinition from '../../schemas/crm/deal.schema.json' with { type: 'json' };

const dealFields = dealDefinition.schema.properties;
const dealResponse = recordResponse(dealDefinition);
const dealTickets = {
  type: 'array',
  description: 'The support tickets whose dealId is this deal (the first 200, oldest first)',
  items: { type: 'object', properties: { id: { type: 'string', format: 'uuid' }, number: { type: 'string' }, status: { type: 'string' } } },
};

/**
 * The deal bodies. The record schema (schemas/crm/deal.schema.json) validates the stored document in the
 * records service; these only describe the request for the OpenAPI document, and keep `closedAt`
 * (owned by the server) out of it.
 */
const { closedAt: _closedAt, ...writableFields } = dealFields;
const createBody = { type: 'object', required: ['title'], additionalProperties: false, properties: writableFields };
/** A merge patch (RFC 7396): the deal's fields, `null` removes one; the merged deal is validated by the record schema. */
const patchBody = {
  type: 'object',
  minProperties: 1,
  description: `A JSON merge patch of a deal with these fields: ${Object.keys(writableFields).join(', ')}`,
};

function withEtag(ctx: AppContext, deal: DataRecord): DataRecord {
  ctx.set('ETag', `"${deal.version}"`);
  return deal;
}

/** Deals: listed, created and changed through the same records service as /data/crm/deal. */
export function dealsRoutes(router: PackRouter, pack: PackContext): void {
  const tags = ['crm'];

  router.get('/crm/deals', {
    summary: 'List deals (filter[stage]=won, sort=-valueCents, limit, offset, cursor, fields, count)',
    tags, auth: 'tenant', query: listQueryOf(dealResponse), response: pageResponse(dealResponse),
    errors: ['validation_failed', 'module_disabled', 'invalid_filter', 'invalid_cursor', 'unauthenticated', 'tenant_required'],
  }, async (ctx) => pack.records.list(ctx.state.rc, 'crm', 'deal', queryFromString(ctx.query)));

  router.post('/crm/deals', {
    summary: 'Create a deal', tags, auth: 'tenant', role: 'editor', status: 201, idempotent: true, body: createBody,
    response: dealResponse,
    errors: ['validation_failed', 'module_disabled', 'forbidden', 'unauthenticated', 'tenant_required'],
  }, async (ctx) => withEtag(ctx, await pack.records.create(ctx.state.rc, 'crm', 'deal', ctx.state.body)));

  router.get('/crm/deals/:dealId', {
    summary: 'Read a deal with the support tickets that refer to it',
    tags, auth: 'tenant',
    response: { ...dealResponse, properties: { ...(dealResponse.properties as object), tickets: dealTickets } },
    errors: ['not_found', 'module_disabled', 'unauthenticated', 'tenant_required'],
  }, async (ctx) => {
    const rc = ctx.state.rc;
    const deal = await pack.records.get(rc, 'crm', 'deal', ctx.params.dealId);
    const tickets = await pack.records.list(rc, 'crm', 'ticket', {
      filter: [{ field: 'dealId', op: 'eq', value: deal.id }], fields: ['number', 'status'], sort: [{ field: 'createdAt' }], limit: 200, count: false,
    });
    return { ...withEtag(ctx, deal), tickets: tickets.items };
  });

  router.patch('/crm/deals/:dealId', {
    summary: 'Update a deal with a JSON merge patch (If-Match: "<version>" optional)',
    tags, auth: 'tenant', role: 'editor', body: patchBody, response: dealResponse,
    errors: ['validation_failed', 'not_found', 'version_mismatch', 'conflict', 'module_disabled', 'forbidden', 'unauthenticated'],
  }, async (ctx) => {
    const ifMatch = ctx.get('If-Match') || null;
    return withEtag(ctx, await pack.records.update(ctx.state.rc, 'crm', 'deal', ctx.params.dealId, ctx.state.body, { ifMatch }));
  });
}
