import type { Config } from '../../config/index.js';
import type { PackRouter } from './route.js';

/** What a browser client needs to sign in; nothing here is a secret. */
export interface AuthConfig {
  /** The development test key is accepted (never in production). The key itself is not shown. */
  testKey: boolean;
  /** OpenID Connect authorization code with PKCE, when an identity provider is configured. */
  oidc: { issuer: string; clientId: string; scope: string } | null;
}

export function authConfigOf(config: Config): AuthConfig {
  const { issuer, consoleClientId } = config.auth;
  return {
    testKey: config.testApiKey !== null,
    oidc: issuer && consoleClientId ? { issuer, clientId: consoleClientId, scope: 'openid profile email' } : null,
  };
}

const PRINCIPAL = {
  type: 'object',
  required: ['userId', 'tenantId', 'isSuperadmin', 'role', 'roles'],
  properties: {
    userId: { type: 'string' },
    email: { type: ['string', 'null'] },
    name: { type: ['string', 'null'] },
    tenantId: { type: ['string', 'null'] },
    isSuperadmin: { type: 'boolean' },
    role: { enum: ['admin', 'editor', 'viewer'] },
    roles: { type: 'array', items: { type: 'string' } },
  },
};

/**
 * GET /auth/config: how to sign in (the admin console reads it, so can any other client).
 * GET /auth/me: who the bearer token is, as the service understands it.
 */
export function authConfigRoutes(router: PackRouter, config: Config): void {
  const answer = authConfigOf(config);
  router.get('/auth/config', {
    summary: 'How clients sign in: whether the test key is accepted, and the OpenID Connect provider (issuer, public client id)',
    tags: ['auth'], auth: 'public',
    response: {
      type: 'object', required: ['testKey', 'oidc'],
      properties: {
        testKey: { type: 'boolean' },
        oidc: {
          anyOf: [{ type: 'null' }, {
            type: 'object', required: ['issuer', 'clientId', 'scope'],
            properties: { issuer: { type: 'string' }, clientId: { type: 'string' }, scope: { type: 'string' } },
          }],
        },
      },
    },
  }, (ctx) => {
    ctx.set('Cache-Control', 'public, max-age=60');
    return answer;
  });

  router.get('/auth/me', {
    summary: 'The caller as the service sees its token: user id, tenant claim, superadmin, strongest tenant role',
    tags: ['auth'], auth: 'user', response: PRINCIPAL, errors: ['unauthenticated', 'invalid_token'],
  }, (ctx) => {
    const p = ctx.state.principal!;
    return { userId: p.userId, email: p.email, name: p.name, tenantId: p.tenantId, isSuperadmin: p.isSuperadmin, role: p.role, roles: p.roles };
  });
}
