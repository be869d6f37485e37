import type { ParameterizedContext } from 'koa';
import type { RouteFamily } from './envelope.js';
import type { Principal, RequestContext } from '../base/request-context.js';
import type { TenantRecord } from '../tenants/tenants.repository.js';

/** Typed per-request state, initialised by the first middleware (request-id). */
export interface AppState {
  requestId: string;
  family: RouteFamily;
  startedAt: bigint;
  /** ctx.path, read once (Koa's getter parses the URL's cached parts again on every read). */
  path: string;
  principal?: Principal | null;
  tenant?: TenantRecord | null;
  rc: RequestContext;
  /** Parsed and validated inputs of the matched route. */
  body?: any;
  query?: any;
  /**
   * The data an Idempotency-Key keeps and replays in place of the answer's, set by a handler whose answer
   * holds a secret shown only once (a new API token): the secret is never stored with the key.
   */
  keptData?: unknown;
  /** Declared route path (for logs and metrics), e.g. /api/v1/data/:ns/:schema. */
  routePath?: string;
  /** The request path as logs show it: the route's sensitive parameters (tokens) masked. */
  logPath?: string;
}

export type AppContext = ParameterizedContext<AppState>;
