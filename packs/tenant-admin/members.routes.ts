import { ValidationFailed, type PackContext, type PackRouter } from '../../core/pack-api.js';
import { AlreadyMember } from './tenant-admin.errors.js';
import { INVITATION_RATE } from './invitations.service.js';

const roleSchema = { type: 'string', description: 'admin, editor, viewer or a custom role of the tenant (CONTRACT.md 16.1)' };
const roleInput = { type: 'string', minLength: 1, maxLength: 40, description: 'admin, editor, viewer or a custom role of the tenant' };
const invitationSchema = {
  type: 'object',
  properties: {
    id: { type: 'string' }, email: { type: 'string', format: 'email' }, role: roleSchema,
    status: { type: 'string', enum: ['pending', 'accepted', 'revoked', 'expired'] },
    expiresAt: { type: 'string', format: 'date-time' }, createdAt: { type: 'string', format: 'date-time' },
  },
};

/** Members (local store or identity provider) and invitations. */
export function membersRoutes(router: PackRouter, pack: PackContext): void {
  const directory = pack.use('tenant-admin.directory');
  const invitations = pack.use('tenant-admin.invitations');

  router.get('/tenants/:id/members', {
    summary: 'List the members',
    description: 'From the member directory: the local store, or Keycloak when KEYCLOAK_* is configured (users whose attribute tenant_id names the tenant).',
    tags: ['members'], auth: 'tenant', tenantParam: 'id', role: 'admin',
    response: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          id: { type: 'string' }, email: { type: 'string' }, name: { type: ['string', 'null'] }, role: roleSchema,
          status: { type: 'string' }, source: { type: 'string', enum: ['local', 'idp'] },
        },
      },
    },
    errors: ['unauthenticated', 'forbidden', 'tenant_not_found', 'upstream_failed'],
  }, (ctx) => directory.list(null, ctx.params.id));

  router.get('/tenants/:id/invitations', {
    summary: 'List the invitations', tags: ['members'], auth: 'tenant', tenantParam: 'id', role: 'admin',
    response: { type: 'array', items: invitationSchema }, errors: ['unauthenticated', 'forbidden', 'tenant_not_found'],
  }, (ctx) => invitations.list(null, ctx.params.id));

  router.post('/tenants/:id/invitations', {
    summary: 'Invite a member',
    description: 'Mails a link to INVITE_LOGIN_URL?invitation=<token> (text and HTML) through the outbox in the same transaction, and emits '
      + `tenant.member.invited. 409 already_member for a member or a pending invitation; at most ${INVITATION_RATE.limit} invitations per tenant `
      + `in ${INVITATION_RATE.windowMs / 60000} minutes (429 with Retry-After). The invitation is valid for 7 days.`,
    tags: ['members'], auth: 'tenant', tenantParam: 'id', role: 'admin', status: 201, idempotent: true,
    body: {
      type: 'object', required: ['email', 'role'], additionalProperties: false,
      properties: { email: { type: 'string', format: 'email', maxLength: 254 }, role: roleInput },
    },
    response: { ...invitationSchema, properties: { ...invitationSchema.properties, delivery: { type: 'string', enum: ['sent', 'queued'] } } },
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'tenant_not_found', AlreadyMember, 'rate_limited', 'upstream_failed'],
  }, async (ctx) => {
    const role: string = ctx.state.body.role;
    if (role === 'superadmin' || !(await pack.memberships.roles.exists(null, ctx.params.id, role))) {
      const names = await pack.memberships.roles.describe(null, ctx.params.id);
      throw ValidationFailed('Invalid role', [{ path: '/role', message: `must be a role of the tenant: ${names.join(', ')}` }]);
    }
    const { createdAt: _createdAt, ...created } = await invitations.invite(ctx.state.rc, ctx.state.tenant!, ctx.state.body);
    return created;
  });

  router.delete('/tenants/:id/invitations/:invitationId', {
    summary: 'Revoke an invitation', description: 'Only a pending invitation can be revoked (else 409).',
    tags: ['members'], auth: 'tenant', tenantParam: 'id', role: 'admin', response: invitationSchema,
    errors: ['unauthenticated', 'forbidden', 'tenant_not_found', 'not_found', 'conflict'],
  }, (ctx) => invitations.revoke(ctx.state.rc, ctx.params.id, ctx.params.invitationId));

  router.post('/invitations/:token/accept', {
    summary: 'Accept an invitation',
    description: 'The signed-in user whose token e-mail is the invited one (not `email_verified: false`) becomes an active member with the '
      + 'invited role, and from then on acts on the tenant with that role (X-Tenant-Id) even when its token has no tenant claim. '
      + 'Unknown token 404; a used, revoked or expired invitation 409 conflict; another e-mail 403; already a member 409 already_member.',
    tags: ['members'], auth: 'user', sensitiveParams: ['token'],
    response: {
      type: 'object',
      required: ['tenantId', 'role', 'status'],
      properties: {
        tenantId: { type: 'string' }, role: roleSchema, status: { type: 'string', enum: ['active'] },
        member: { type: 'object', properties: { id: { type: 'string' }, email: { type: 'string' }, role: roleSchema, status: { type: 'string' } } },
      },
    },
    errors: ['unauthenticated', 'forbidden', 'not_found', 'conflict', AlreadyMember],
  }, async (ctx) => {
    const { tenantId, member } = await invitations.accept(ctx.state.rc, ctx.params.token);
    return { tenantId, role: member.role, status: member.status, member: { id: member.id, email: member.email, name: member.name, role: member.role, status: member.status } };
  });
}
