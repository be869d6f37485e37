import type { Middleware } from 'koa';
import type Router from '@koa/router';
import type { AppContext, AppState } from './app-state.js';

/** How many leading path segments pick the routers a request may match (`api/v1/erp`). */
const KEY_SEGMENTS = 3;

/** The dispatch key of a request path, lower-cased (the routers match case-insensitively). */
function keyOfPath(path: string): string {
  const parts = path.toLowerCase().split('/', KEY_SEGMENTS + 1).slice(1);
  if (parts.length > 1 && parts[parts.length - 1] === '') parts.pop();
  return parts.join('/');
}

/** A declared route's key, or null when one of its leading segments is a parameter (it may match any key). */
function keyOfRoute(path: string): string | null {
  const parts = path.toLowerCase().split('/', KEY_SEGMENTS + 1).slice(1);
  return parts.some((p) => /[:*(?]/.test(p)) ? null : keyOfPath(path);
}

/**
 * Runs the routers in their order, but only those with a route that can match the request: a request for
 * `/api/v1/erp/...` never tests the routes of `/api/v1/crm/...`. The same answers as `koa.use` of every
 * router (a router without a matching route only calls `next`), without testing each router's every
 * route on every request.
 */
export function routeDispatch(routers: Array<Router<AppState, AppContext>>): Middleware<AppState> {
  const keyed = routers.map((router) => {
    const keys = router.stack.map((layer) => (typeof layer.path === 'string' ? keyOfRoute(layer.path) : null));
    return { middleware: router.routes() as unknown as Middleware<AppState>, any: keys.includes(null), keys: new Set(keys) };
  });
  const chainFor = (key: string) => keyed.filter((r) => r.any || r.keys.has(key)).map((r) => r.middleware);
  const known = new Map<string, Array<Middleware<AppState>>>();
  for (const r of keyed) for (const key of r.keys) if (key !== null) known.set(key, chainFor(key));
  const fallback = chainFor('\u0000');
  return function routeDispatch(ctx, next) {
    const chain = known.get(keyOfPath(ctx.path)) ?? fallback;
    const step = (i: number): Promise<unknown> => (i === chain.length ? next() : Promise.resolve(chain[i]!(ctx, () => step(i + 1) as Promise<void>)));
    return step(0) as Promise<void>;
  } as Middleware<AppState>;
}

