import type { AuthProvider } from 'react-admin';
import { api } from '../api/client.js';
import { session, type Me } from '../api/session.js';

export interface AuthConfig {
  testKey: boolean;
  oidc: { issuer: string; clientId: string; scope: string } | null;
}

/** GET /auth/config: whether the test key is accepted and the identity provider, if any. */
export const authConfig = (): Promise<AuthConfig> => api<AuthConfig>('/auth/config', { noTenant: true });

/**
 * Why the last OIDC sign-in failed on /admin/callback, for the sign-in page (kept for this page load, so that a
 * sign-in page mounted again still says it; cleared by a sign-in).
 */
export const oidcFailure: { message: string | null } = { message: null };

/** Checks a token with GET /auth/me and starts the session with it. */
export async function signInWithToken(token: string): Promise<Me> {
  const me = await api<Me>('/auth/me', { token, noTenant: true });
  oidcFailure.message = null;
  session.signIn(token, me);
  return me;
}

/** The OIDC client (authorization code with PKCE), loaded only when an identity provider is configured. */
export async function oidcClient(config: NonNullable<AuthConfig['oidc']>) {
  const { UserManager, WebStorageStateStore } = await import('oidc-client-ts');
  return new UserManager({
    authority: config.issuer,
    client_id: config.clientId,
    redirect_uri: `${window.location.origin}/admin/callback`,
    post_logout_redirect_uri: `${window.location.origin}/admin/`,
    response_type: 'code',
    scope: config.scope,
    // The PKCE verifier and state live in sessionStorage, like the token.
    userStore: new WebStorageStateStore({ store: window.sessionStorage }),
    stateStore: new WebStorageStateStore({ store: window.sessionStorage }),
    automaticSilentRenew: false,
  });
}

/** Finishes an OIDC sign-in on /admin/callback: trades the code for tokens, then checks the access token. */
export async function completeOidcSignIn(): Promise<void> {
  const config = await authConfig();
  if (!config.oidc) throw new Error('No identity provider is configured');
  const user = await (await oidcClient(config.oidc)).signinRedirectCallback();
  await signInWithToken(user.access_token);
}

export const authProvider: AuthProvider = {
  async login(params: { token: string }) {
    await signInWithToken(params.token.trim());
  },
  async logout() {
    session.signOut();
  },
  async checkAuth() {
    if (!session.token) throw new Error('Sign in first');
  },
  async checkError(error: { status?: number }) {
    if (error?.status === 401) {
      session.signOut();
      throw new Error('Your session has ended: sign in again');
    }
  },
  async getIdentity() {
    const me = session.me;
    if (!me) throw new Error('Not signed in');
    return { id: me.userId, fullName: me.name ?? me.email ?? me.userId };
  },
  // No getPermissions: the screens read the role from the session (session.can), and react-admin waits for
  // permissions it is given before it registers the resources (one more render of the first screen).
};
