import type { PackRouter } from '../http/route.js';
import { IDENTIFIER } from '../metadata/schema-definition.js';
import type { PreviewsService } from './previews.service.js';

const identifier = { type: 'string', pattern: IDENTIFIER.source, 'x-error': 'invalid_identifier' } as const;

/** /previews (CONTRACT.md 17.3): tokens that show drafts on the public runtime, the storefront and the public MCP. */
export function previewsRoutes(router: PackRouter, previews: PreviewsService): void {
  const tags = ['releases'];
  router.post('/previews', {
    summary: 'Create a preview of a release\'s drafts, or of some records\' drafts: its token is shown once',
    description: 'Public reads given `?preview=<token>` or `X-Preview-Token` show those drafts in place of the live records (draft-only '
      + 'records as if published), with `Cache-Control: no-store`; an unknown or expired token answers 404. Knowledge search ignores previews.',
    tags, auth: 'tenant', role: 'editor', status: 201,
    body: {
      type: 'object', additionalProperties: false,
      // A release or some items, not both (the service says so too).
      oneOf: [{ required: ['releaseId'] }, { required: ['items'] }],
      properties: {
        releaseId: { type: 'string', maxLength: 36 },
        items: {
          type: 'array', minItems: 1, maxItems: 200,
          items: {
            type: 'object', required: ['namespace', 'schema', 'id'], additionalProperties: false,
            properties: { namespace: identifier, schema: identifier, id: { type: 'string', maxLength: 36 } },
          },
        },
        expiresInMinutes: { type: 'number', minimum: 0.05, maximum: 10080, default: 60 },
      },
    },
    response: {
      type: 'object', required: ['id', 'token', 'expiresAt'],
      properties: { id: { type: 'string' }, token: { type: 'string', description: 'Shown only here' }, expiresAt: { type: 'string', format: 'date-time' } },
    },
    errors: ['validation_failed', 'invalid_identifier', 'schema_not_found', 'not_found'],
  }, async (ctx) => previews.create(ctx.state.rc, ctx.state.body));

  router.delete('/previews/:id', {
    summary: 'Revoke a preview', tags, auth: 'tenant', role: 'editor', errors: ['not_found'],
  }, async (ctx) => {
    await previews.revoke(ctx.state.rc, ctx.params.id);
    return null;
  });
}
