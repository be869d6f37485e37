import type { PackRouter } from '../http/route.js';
import { PAGE_QUERY_PROPERTIES, pageResponse } from '../http/response-schemas.js';
import type { AuditLog, AuditQuery } from './audit-log.repository.js';

const entrySchema = {
  type: 'object',
  required: ['id', 'at', 'actor', 'action', 'target', 'requestId'],
  properties: {
    id: { type: 'string' },
    at: { type: 'string', format: 'date-time' },
    actor: {
      type: 'object', required: ['type', 'id'],
      properties: { type: { type: 'string', enum: ['user', 'token', 'system'] }, id: { type: 'string' }, email: { type: 'string' } },
    },
    action: { type: 'string', description: '`<area>.<verb>`: record.created, record.updated, record.deleted, record.restored, …' },
    target: { type: 'string', description: 'What the change acted on: `<ns>.<schema>/<id>` for a record' },
    requestId: { type: 'string', description: 'The X-Request-Id of the request that made the change' },
  },
} as const;

/** GET /tenants/{id}/audit-log (CONTRACT.md 16.4): read-only, no route changes or deletes an entry. */
export function auditLogRoutes(router: PackRouter, log: AuditLog): void {
  const query = {
    type: 'object', additionalProperties: false,
    properties: {
      ...PAGE_QUERY_PROPERTIES,
      actor: { type: 'string', maxLength: 255, description: 'the actor\'s id' },
      action: { type: 'string', maxLength: 64 },
      target: { type: 'string', maxLength: 255, description: 'exact, e.g. shop.product/<id>' },
      from: { type: 'string', format: 'date-time' },
      to: { type: 'string', format: 'date-time' },
    },
  };
  router.get('/audit-log', {
    summary: 'The platform\'s audit log (superadmin), newest first: tenant.created, platform_settings.updated, …',
    description: 'Actions of no tenant, with the filters of a tenant\'s log; append-only.',
    tags: ['platform'], auth: 'superadmin', query, response: pageResponse(entrySchema),
    errors: ['validation_failed', 'invalid_cursor'],
  }, async (ctx) => log.list(null, ctx.state.query as AuditQuery));

  router.get('/tenants/:id/audit-log', {
    summary: 'The tenant\'s audit log, newest first: every change with its actor, action, target and request id (append-only)',
    tags: ['tenants'], auth: 'tenant', tenantParam: 'id', role: 'admin', query,
    response: pageResponse(entrySchema),
    errors: ['validation_failed', 'invalid_cursor'],
  }, async (ctx) => log.list(ctx.params.id, ctx.state.query as AuditQuery));
}
