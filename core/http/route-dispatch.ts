import type { Middleware } from 'koa';
import type Router from '@koa/router';
import type { AppContext, AppState } from './app-state.js';
import { MethodNotAllowed } from '../base/errors.js';

/** How many leading path segments pick the routes a request may match (`api/v1/erp`). */
const KEY_SEGMENTS = 3;

/**
 * The dispatch key of a request path, lower-cased (the routes match case-insensitively): its first
 * KEY_SEGMENTS segments, without a trailing empty one.
 */
function keyOfPath(path: string): string {
  if (path.charCodeAt(0) !== 0x2f) return keyOfParts(path);
  // The usual path, `/a/b/c/...`: one slice up to the slash after the third segment (what keyOfParts gives).
  let end = 0;
  for (let n = 0; n < KEY_SEGMENTS && end !== -1; n++) end = path.indexOf('/', end + 1);
  let key = end === -1 ? path.slice(1) : path.slice(1, end);
  if (key.endsWith('/')) key = key.slice(0, -1);
  return key.toLowerCase();
}

function keyOfParts(path: string): string {
  const parts = path.toLowerCase().split('/', KEY_SEGMENTS + 1).slice(1);
  if (parts.length > 1 && parts[parts.length - 1] === '') parts.pop();
  return parts.join('/');
}

/** A declared route's key, or null when one of its leading segments is a parameter (it may match any key). */
function keyOfRoute(path: string): string | null {
  const parts = path.toLowerCase().split('/', KEY_SEGMENTS + 1).slice(1);
  return parts.some((p) => /[:*(?{]/.test(p)) ? null : keyOfPath(path);
}

/**
 * The segments of a path: its slashes, a trailing one not counted (the router matches a path with or
 * without it alike).
 */
function depthOf(path: string): number {
  let n = 0;
  for (let i = 0; i < path.length - 1; i++) if (path.charCodeAt(i) === 0x2f) n++;
  return n;
}

/**
 * The depth of every path a declared route can match (see depthOf), or null when it may match any depth (a
 * wildcard or an optional part). A plain route's parameters match no slash.
 */
function depthOfRoute(path: string): number | null {
  return /[*{}()?\\]/.test(path) ? null : depthOf(path);
}

interface Route {
  key: string | null;
  /** See depthOfRoute. */
  depth: number | null;
  regexp: RegExp;
  methods: Set<string>;
  paramNames: string[];
  handler: Middleware<AppState>;
  /**
   * The routes of the same depth that name a literal segment where this one has a parameter, and agree on the rest
   * (`/data/:ns/:schema/bulk` for `/data/:ns/:schema/:id`): a path one of them matches is theirs, never this
   * route's (GET /data/a/b/bulk is 405 with their methods in `Allow`, not a read of the record "bulk").
   */
  shadows: Route[];
  /** The declared path, when it is a string. */
  path: string | null;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/**
 * Whether the plain route `a` takes paths from the plain route `b`: the same number of segments, a literal segment
 * of `a` where `b` has a parameter at least once, and otherwise the same literals and parameters where `b` has them.
 */
function shadows(a: string | null, b: string | null): boolean {
  if (a === null || b === null || depthOfRoute(a) === null || depthOfRoute(b) === null) return false;
  const sa = a.split('/');
  const sb = b.split('/');
  if (sa.length !== sb.length) return false;
  let more = false;
  for (let i = 0; i < sa.length; i++) {
    const paramA = sa[i].startsWith(':');
    const paramB = sb[i].startsWith(':');
    if (paramB && !paramA) more = true;
    else if (paramA && !paramB) return false;
    else if (!paramA && sa[i].toLowerCase() !== sb[i].toLowerCase()) return false;
  }
  return more;
}

/**
 * Finds the route of a request and runs its handler, as `koa.use(router.routes())` of every router in
 * their order would (the first route, in router and declaration order, whose path and method match; its
 * parameters decoded into ctx.params), but testing only the routes that can match the request's first
 * path segments (a request for `/api/v1/erp/...` never tests the routes of `/api/v1/crm/...`) and its
 * number of segments (see depthOfRoute), and with no promise layer per router. A path some route serves
 * with other methods answers 405 method_not_allowed with `Allow`, and so does a fixed path (no parameters)
 * for a method only a parameterised route would match (PATCH /admin/tenants/provision is 405, never
 * PATCH /admin/tenants/:id with the id "provision").
 * The routers hold routes only (PackRouter), each with one handler.
 */
export function routeDispatch(routers: Array<Router<AppState, AppContext>>): Middleware<AppState> & { refuses(method: string, path: string): boolean } {
  const routes: Route[] = routers.flatMap((router) => router.stack.map((layer) => {
    if (!layer.methods.length || layer.stack.length !== 1) {
      throw new Error(`routeDispatch: ${String(layer.path)} is not a route with one handler (router.use is not supported)`);
    }
    return {
      key: typeof layer.path === 'string' ? keyOfRoute(layer.path) : null,
      depth: typeof layer.path === 'string' ? depthOfRoute(layer.path) : null,
      regexp: layer.regexp,
      methods: new Set(layer.methods),
      paramNames: layer.paramNames.map((p) => p.name),
      handler: layer.stack[0] as unknown as Middleware<AppState>,
      shadows: [] as Route[],
      path: typeof layer.path === 'string' ? layer.path : null,
    } satisfies Route as Route;
  }));
  for (const route of routes) {
    route.shadows = routes.filter((other) => other !== route && shadows(other.path, route.path));
  }
  const routesFor = (key: string) => routes.filter((r) => r.key === null || r.key === key);
  const byKey = new Map<string, Route[]>();
  for (const r of routes) if (r.key !== null && !byKey.has(r.key)) byKey.set(r.key, routesFor(r.key));
  const anyKey = routesFor('\u0000');

  const fixedPaths = new Map<string, string[]>();
  for (const layer of routers.flatMap((r) => r.stack)) {
    if (layer.paramNames.length || typeof layer.path !== 'string') continue;
    fixedPaths.set(layer.path, [...new Set([...(fixedPaths.get(layer.path) ?? []), ...layer.methods])]);
  }

  /** The methods the routes that match `path` serve (none: no route has the path). */
  const methodsAt = (path: string): Set<string> => {
    const allowed = new Set<string>();
    for (const route of byKey.get(keyOfPath(path)) ?? anyKey) {
      if (!route.regexp.test(path) || route.shadows.some((s) => s.regexp.test(path))) continue;
      for (const m of route.methods) allowed.add(m);
    }
    return allowed;
  };

  /** Whether a request would answer 405: some route serves the path, none with this method. */
  const refuses = (method: string, path: string): boolean => {
    const served = fixedPaths.get(path) ?? [...methodsAt(path)];
    return served.length > 0 && !served.includes(method);
  };

  const dispatch = function routeDispatch(ctx, next) {
    const path = ctx.state.path;
    const method = ctx.method;
    const fixed = fixedPaths.get(path);
    if (fixed && !fixed.includes(method)) throw MethodNotAllowed(method, [], { Allow: fixed.join(', ') });
    const candidates = byKey.get(keyOfPath(path)) ?? anyKey;
    const depth = depthOf(path);
    for (const route of candidates) {
      // A route that cannot match this many path segments is not tried (its regular expression would fail).
      if (route.depth !== null && route.depth !== depth) continue;
      if (!route.methods.has(method)) continue;
      const match = route.regexp.exec(path);
      if (!match) continue;
      if (route.shadows.length && route.shadows.some((s) => s.regexp.test(path))) continue;
      const params: Record<string, string> = {};
      for (let i = 1; i < match.length; i++) {
        const value = match[i];
        const name = route.paramNames[i - 1];
        if (name !== undefined && value) params[name] = safeDecode(value);
      }
      ctx.params = params;
      return route.handler(ctx, next);
    }
    const allowed = methodsAt(path);
    if (allowed.size) throw MethodNotAllowed(method, [], { Allow: [...allowed].join(', ') });
    return next();
  } as Middleware<AppState>;
  return Object.assign(dispatch, { refuses });
}
