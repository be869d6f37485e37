import type { PackRouter } from '../http/route.js';
import { pageResponse } from '../http/response-schemas.js';
import { LIST_LIMITS } from '../http/response-schemas.js';
import type { ApiTokensService } from './api-tokens.service.js';

const nullableTime = { type: ['string', 'null'], format: 'date-time' };
const tokenView = {
  type: 'object',
  required: ['id', 'name', 'role', 'prefix', 'createdAt', 'expiresAt', 'lastUsedAt', 'revokedAt', 'createdBy'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    name: { type: 'string' },
    role: { type: 'string', description: 'admin, editor or viewer' },
    prefix: { type: 'string', description: 'the first 8 characters of the secret after pat_, to tell tokens apart' },
    createdAt: { type: 'string', format: 'date-time' },
    expiresAt: nullableTime,
    lastUsedAt: { ...nullableTime, description: 'written at most once a minute per token: it may lag by up to a minute' },
    revokedAt: nullableTime,
    createdBy: { type: 'string', description: 'the id (sub) of the caller who created it' },
  },
};

const tags = ['api-tokens'];

/** API tokens of a tenant (CONTRACT.md 16.2): `Authorization: Bearer pat_…` for integrations. */
export function apiTokensRoutes(router: PackRouter, tokens: ApiTokensService): void {
  router.get('/tenants/:id/api-tokens', {
    summary: 'List the API tokens',
    description: 'Newest first, revoked ones with revokedAt; never the secret.',
    tags, auth: 'tenant', tenantParam: 'id', role: 'admin',
    query: {
      type: 'object', additionalProperties: false,
      properties: {
        limit: { type: 'integer', minimum: 1, maximum: LIST_LIMITS.maxLimit, default: LIST_LIMITS.defaultLimit },
        offset: { type: 'integer', minimum: 0, maximum: LIST_LIMITS.maxOffset, default: 0 },
      },
    },
    response: pageResponse(tokenView),
    errors: ['validation_failed'],
  }, (ctx) => tokens.list(ctx.state.rc, ctx.params.id, ctx.state.query.limit, ctx.state.query.offset));

  router.post('/tenants/:id/api-tokens', {
    summary: 'Create an API token',
    description: 'The answer holds the secret (`token`: pat_ and 40 base62 characters) once; only its SHA-256 is stored, and a replay '
      + 'under the same Idempotency-Key answers token: null. The token acts for this tenant with its role (admin, editor or viewer), '
      + 'also in production, until it expires or is revoked. An API token may not create tokens (403), whatever its role.',
    tags, auth: 'tenant', tenantParam: 'id', role: 'admin', noApiTokens: true, status: 201, idempotent: 'in-transaction',
    body: {
      type: 'object', required: ['name', 'role'], additionalProperties: false,
      properties: {
        name: { type: 'string', minLength: 1, maxLength: 100, pattern: '\\S' },
        role: { type: 'string', minLength: 1, maxLength: 40, description: 'a role of the tenant: admin, editor or viewer (never superadmin)' },
        expiresAt: { type: 'string', format: 'date-time', description: 'in the future; without it the token does not expire' },
      },
    },
    response: { ...tokenView, required: [...tokenView.required, 'token'], properties: { ...tokenView.properties, token: { type: ['string', 'null'], description: 'the secret, shown only in this answer (null in a replay)' } } },
    errors: ['validation_failed', 'idempotency_key_reused', 'conflict'],
  }, async (ctx) => {
    const created = await tokens.create(ctx.state.rc, ctx.params.id, ctx.state.body);
    // A replay under Idempotency-Key shows the token without its secret, which is never stored.
    ctx.state.keptData = { ...created, token: null };
    return created;
  });

  router.delete('/tenants/:id/api-tokens/:tokenId', {
    summary: 'Revoke an API token',
    description: 'Every process refuses the token (401 invalid_token) for requests that start 1 s after the revocation. Revoking a '
      + 'revoked token changes nothing. An API token may not revoke tokens (403), whatever its role.',
    tags, auth: 'tenant', tenantParam: 'id', role: 'admin', noApiTokens: true,
    response: tokenView,
    errors: ['not_found'],
  }, (ctx) => tokens.revoke(ctx.state.rc, ctx.params.id, ctx.params.tokenId));
}
