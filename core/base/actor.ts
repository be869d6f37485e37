import type { RequestContext } from './request-context.js';

/** Who made a change, as revisions and the audit log name it (CONTRACT.md 16.3). */
export interface Actor {
  type: 'user' | 'token' | 'system';
  id: string;
  email?: string;
}

/**
 * The actor of rc's principal: background work (no principal, or the system context) is `system`, an API token
 * (`via: 'api_token'`) is `token` with the token's id, anyone else a `user` with the token's `sub` and email.
 */
export function actorOf(rc: RequestContext): Actor {
  const p = rc.principal;
  if (!p || rc.requestId === 'system') return { type: 'system', id: 'system' };
  if ((p.via as string) === 'api_token') return { type: 'token', id: p.userId };
  return p.email ? { type: 'user', id: p.userId, email: p.email } : { type: 'user', id: p.userId };
}
