import Router from '@koa/router';
import type { ValidateFunction } from 'ajv';
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import type { ParameterizedContext } from 'koa';
import type { AppContext, AppState } from './app-state.js';
import { readJsonBody, JSON_BODY_LIMIT } from './body.js';
import { assertCleanParamsAndQuery } from './input-hygiene.js';
import { holdsRawJson, stringifyWithRaw } from './raw-json.js';
import { JSON_TYPE, successEnvelope, type RouteFamily } from './envelope.js';
import { Forbidden, InvalidIdentifier, InvalidKeySegment, InvalidSchema, ModuleDisabled, NotFound, SuperadminRequired, TenantNotFound, TenantRequired, ValidationFailed } from '../base/errors.js';
import type { Authenticator } from './auth.js';
import type { TenantLookup, TenantsService } from '../tenants/tenants.service.js';
import type { MembershipResolver } from '../tenants/memberships.js';
import { ROLE_RANK, type PreviewOverlay, type Principal, type RequestContext, type TenantRole } from '../base/request-context.js';
import { createAjv, toIssues } from '../base/ajv.js';
import type { Logger } from 'pino';
import { assertIdempotencyKey, type IdempotencyKeys } from './idempotency.js';

import type * as catalogue from '../base/errors.js';
import type { ErrorFactory } from '../base/errors.js';

type CodeOf<T> = T extends { readonly code: infer C extends string; readonly status: number } ? C : never;
/** A code of the error catalogue (core/base/errors.ts). */
export type ErrorCode = CodeOf<(typeof catalogue)[keyof typeof catalogue]>;

export type AuthLevel = 'public' | 'user' | 'tenant' | 'superadmin';
export type JsonSchema = Record<string, unknown>;
export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

/**
 * What a route takes and returns. The same declaration drives validation, auth and the OpenAPI
 * document, so the document cannot drift from the behaviour.
 */
export interface RouteSpec {
  summary: string;
  description?: string;
  tags?: string[];
  /**
   * public: no credentials (the tenant comes from `tenantParam`); user: any signed-in caller;
   * tenant: a caller acting for a tenant (from `tenantParam`, else the token or X-Tenant-Id);
   * superadmin: platform superadmins only (with an optional `tenantParam`). A suspended tenant's members get
   * 403; superadmins pass.
   */
  auth: AuthLevel;
  /** Path parameter that names the tenant, e.g. `id` for /tenants/:id/branding. */
  tenantParam?: string;
  /** Minimum tenant role (auth `tenant`); superadmins always pass. Default `viewer`. */
  role?: TenantRole;
  /**
   * Refused to API tokens whatever their role (403 forbidden): what only a person may do, such as creating or
   * revoking API tokens and changing roles (CONTRACT.md 16.2).
   */
  noApiTokens?: boolean;
  /**
   * The route serves records under the caller's role policies (CONTRACT.md 16.1: the data API, the schemas' metadata,
   * MCP): a caller holding custom roles reaches it whatever its built-in role, and the records service decides. Every
   * other route is refused (403) to a caller holding custom roles only.
   */
  policies?: boolean;
  /** Licensed module gating this route; defaults to the pack's. A function decides per request (the data API). */
  module?: string | null | ((ctx: AppContext) => string | null);
  /**
   * A public route that does not exist for a tenant without its module (the storefront, CRM's public events:
   * CONTRACT 11.1): answers 404 not_found with this message instead of 403 module_disabled. Needs a fixed `module`.
   */
  absentWithoutModule?: string;
  /** Envelope family; defaults to the path's (JSend under /metadata and /data). */
  family?: RouteFamily;
  /** Success status, default 200. */
  status?: number;
  /** JSON body schema, or `raw` to leave the body stream to the handler. */
  body?: JsonSchema | 'raw';
  bodyLimit?: number;
  /** Query schema; values are coerced to the declared types. */
  query?: JsonSchema;
  /**
   * Schemas of path parameters (strings), checked after auth (400 validation_failed at `/<name>`, as the handlers' own checks answered) and shown in
   * the OpenAPI document, so that the document says which values the route takes.
   */
  params?: Record<string, JsonSchema>;
  /** Path parameters the handler checks itself (the hygiene check of input-hygiene.ts leaves them alone). */
  ownParamChecks?: string[];
  /**
   * Further statuses the route answers (documentation): without a body, e.g. `{ 304: 'Not modified' }`, or a
   * success the handler writes itself in the envelope, `{ 202: { description, response } }` (`response`: the schema of `data`).
   */
  answers?: Record<number, string | { description: string; response: JsonSchema }>;
  /** Request headers the route reads (documentation; the handler checks them). */
  headers?: Array<{ name: string; required: boolean; schema: JsonSchema; description?: string }>;
  /** Path parameters that are secrets (e.g. an invitation token): logs show `[redacted]` in their place. */
  sensitiveParams?: string[];
  /** Schema of `data` in a success response (documentation). */
  response?: JsonSchema;
  /**
   * Error codes the handler may answer with (documentation): catalogue codes, or the factories of a pack's
   * own errors (from defineError). The codes of the pipeline around the handler (401 and 403 of auth,
   * tenant and module, 400/413/415 of the body, ...) are added by the router; do not list them.
   */
  errors?: Array<ErrorCode | ErrorFactory<never>>;
  /**
   * Content type of a success response the handler writes itself instead of the envelope (documentation), e.g.
   * text/html; several when it writes one of them (an export's NDJSON or CSV).
   */
  produces?: string | readonly string[];
  /**
   * Honour an `Idempotency-Key` header (core/http/idempotency.ts): the first answer (2xx or 4xx) is replayed
   * for the same key and body, another body answers 422, a request while the first runs 409.
   * `'in-transaction'`: a request with a key runs its handler in one database transaction (the handler's own
   * transactions join it) that also keeps the answer, so the write and its answer commit together; for
   * routes whose writes are database writes only (no upload, no outbound call while the transaction is open).
   */
  idempotent?: boolean | 'in-transaction';
  /**
   * Honours a preview token (`?preview=`, `X-Preview-Token`; CONTRACT.md 17.3): its drafts stand in for the live
   * records the route reads, answered with `Cache-Control: no-store`. Default: public GET routes (read-only ones).
   */
  previews?: boolean;
}

/**
 * The validated body's type: inferred from an inline body schema (json-schema-to-ts), so a handler reads
 * `ctx.state.body.delta` as a number without a cast; `any` for a schema read from a file (JSON imports are
 * not literal types) or a raw body.
 */
export type BodyOf<S> = JsonSchema extends S ? any : WithoutItemCounts<S> extends infer L extends JSONSchema ? FromSchema<L> : any;

/** The schema without minItems/maxItems: json-schema-to-ts turns them into tuple unions, too deep for a non-literal count. */
type WithoutItemCounts<S> = S extends readonly unknown[]
  ? { [I in keyof S]: WithoutItemCounts<S[I]> }
  : S extends object ? { [K in keyof S as K extends 'minItems' | 'maxItems' ? never : K]: WithoutItemCounts<S[K]> } : S;

/** A route's spec whose body schema is S. */
export type SpecWithBody<S> = Omit<RouteSpec, 'body'> & { body?: S };

/** The koa context of a route whose body schema is S. */
export type RouteContext<S = JsonSchema> = ParameterizedContext<Omit<AppState, 'body'> & { body: BodyOf<S> }>;

export type RouteHandler<S = JsonSchema> = (ctx: RouteContext<S>) => Promise<unknown> | unknown;

export interface RouteEntry {
  method: HttpMethod;
  /** Full path in @koa/router syntax, e.g. /api/v1/crm/deals/:dealId */
  path: string;
  spec: RouteSpec;
  pack: string;
}

/** Which of the named custom roles a tenant has (core/access/roles.service.ts). */
export interface CustomRoleNames {
  resolve(tenantId: string, names: readonly string[]): Promise<Array<{ name: string }>>;
  /** `resolve`'s answer when it is at hand without a read, else undefined. */
  resolveKept(tenantId: string, names: readonly string[]): Array<{ name: string }> | undefined;
}

export interface RouteDeps {
  authenticator: Authenticator;
  tenants: TenantsService;
  memberships: MembershipResolver;
  /** The custom roles a tenant has, of the names a caller holds (CONTRACT.md 16.1). */
  customRoles: CustomRoleNames;
  logger: Logger;
  routeTable: RouteEntry[];
  /** The Idempotency-Key store, for routes declared `idempotent`. */
  idempotency?: IdempotencyKeys;
  /** A preview token's drafts for a public request of the tenant (core/workflow/, CONTRACT.md 17.3); throws 404 for an unknown token. */
  previews?: (tenantId: string, token: string) => Promise<PreviewOverlay>;
}

const bodyAjv = createAjv();
const queryAjv = createAjv({ coerceTypes: true, useDefaults: true });

/** A pack's router: declare each route with its spec; everything around the handler is done here. */
export class PackRouter {
  readonly router: Router<AppState, AppContext>;

  constructor(
    private readonly deps: RouteDeps,
    readonly packName: string,
    private readonly defaultModule: string | null,
    private readonly basePath = '/api/v1',
  ) {
    this.router = new Router<AppState, AppContext>({ prefix: basePath });
  }

  get(path: string, spec: RouteSpec, handler: RouteHandler) { return this.add('get', path, spec, handler); }
  post<const S extends JsonSchema | 'raw' = JsonSchema>(path: string, spec: SpecWithBody<S>, handler: RouteHandler<S>) { return this.add('post', path, spec, handler); }
  put<const S extends JsonSchema | 'raw' = JsonSchema>(path: string, spec: SpecWithBody<S>, handler: RouteHandler<S>) { return this.add('put', path, spec, handler); }
  patch<const S extends JsonSchema | 'raw' = JsonSchema>(path: string, spec: SpecWithBody<S>, handler: RouteHandler<S>) { return this.add('patch', path, spec, handler); }
  delete(path: string, spec: RouteSpec, handler: RouteHandler) { return this.add('delete', path, spec, handler); }

  // The handler's ctx is `any` here: the body's type is the public methods' concern.
  private add(method: HttpMethod, path: string, spec: RouteSpec, handler: (ctx: any) => unknown): this {
    if (spec.auth === 'public' && !spec.tenantParam && spec.module) {
      throw new Error(`${method.toUpperCase()} ${path}: a public route gated by a module needs tenantParam`);
    }
    if (spec.absentWithoutModule !== undefined && (spec.auth !== 'public' || typeof spec.module !== 'string')) {
      throw new Error(`${method.toUpperCase()} ${path}: absentWithoutModule is for a public route with a fixed module`);
    }
    if (spec.tenantParam && !path.includes(`:${spec.tenantParam}`)) {
      throw new Error(`${method.toUpperCase()} ${path}: tenantParam "${spec.tenantParam}" is not a path parameter`);
    }
    const fullPath = `${this.basePath}${path}`;
    const validateBody = spec.body && spec.body !== 'raw' ? compile(bodyAjv, spec.body, `${method} ${path} body`) : null;
    const validateParams = spec.params
      ? compile(queryAjv, { type: 'object', properties: spec.params }, `${method} ${path} params`) : null;
    const validateQuery = spec.query ? compile(queryAjv, closedQuery(spec.query, `${method.toUpperCase()} ${path}`), `${method} ${path} query`) : null;
    const module = spec.module === undefined ? this.defaultModule : spec.module;
    const deps = this.deps;
    const entry: RouteEntry = { method, path: fullPath, spec, pack: this.packName };
    deps.routeTable.push(entry);

    const run: RouteRun = {
      readsJson: spec.body !== 'raw' && method !== 'get' && method !== 'delete',
      validateBody, handler, status: spec.status ?? 200,
    };
    const idempotent = Boolean(spec.idempotent && deps.idempotency);
    const sensitive = spec.sensitiveParams;
    const ownParamChecks = spec.ownParamChecks ?? NO_PARAMS;
    const previewable = honoursPreviews(spec, method);

    // Everything a request needs of the route is fixed here, at declaration: per request the wrapper
    // makes no closure (tsx names each one it makes, at a cost that showed in the storefront's profile).
    const route = async function route(ctx: AppContext) {
      const state = ctx.state;
      state.routePath = fullPath;
      if (sensitive) state.logPath = maskedPath(fullPath, ctx.params, sensitive);
      const family = spec.family ?? state.family;
      state.family = family;
      // Without a query string (the usual case) there is nothing to parse (Koa's ctx.query would parse '').
      const hasQuery = ctx.req.url!.includes('?');
      assertCleanParamsAndQuery(ctx, ownParamChecks, hasQuery);
      // A public request whose tenant is known at once goes on without waiting on a promise.
      const resolving = spec.auth === 'public' ? publicCaller(ctx, spec, module, deps) : resolveCaller(ctx, spec, module, deps);
      if (resolving) await resolving;
      const previewing = previewable && deps.previews && state.rc.tenantId && (hasQuery || ctx.get('X-Preview-Token'))
        ? await usePreview(ctx, deps.previews) : false;

      if (validateParams && !validateParams(ctx.params)) {
        assertOwnPatterns(validateParams, ctx.params);
        throw ValidationFailed('Invalid path parameters', toIssues(validateParams.errors));
      }
      if (validateQuery) {
        const query = hasQuery ? { ...ctx.query } : {};
        if (!validateQuery(query)) {
          assertOwnPatterns(validateQuery, query);
          throw ValidationFailed('Invalid query parameters', prefixIssues('query', toIssues(validateQuery.errors)));
        }
        state.query = query;
      } else {
        state.query = hasQuery ? ctx.query : {};
      }
      // A key the store would refuse is refused before the body is read (a body over the limit would answer 413 first).
      if (idempotent) assertIdempotencyKey(ctx.get('Idempotency-Key'), 'header/Idempotency-Key');
      const body = run.readsJson ? await readJsonBody(ctx, spec.bodyLimit ?? JSON_BODY_LIMIT) : undefined;
      // Awaited, not returned: an async function that returns a promise settles two microtasks later.
      if (idempotent) await runIdempotent(ctx, run, family, body, spec, deps.idempotency!, deps.logger);
      else await runHandler(ctx, run, family, body);
      // What a preview shows is never cached, nor validated against a live answer's tag.
      if (previewing) {
        ctx.set('Cache-Control', 'no-store');
        ctx.remove('ETag');
      }
    };
    Object.defineProperty(route, 'name', { value: `${method}:${path}` });
    this.router[method](path, route);
    return this;
  }
}

const NO_PARAMS: string[] = [];

/** Whether a route honours a preview token (RouteSpec.previews): a public route of a tenant, GET unless it says otherwise. */
export function honoursPreviews(spec: RouteSpec, method: HttpMethod): boolean {
  return spec.auth === 'public' && spec.tenantParam !== undefined && (spec.previews ?? method === 'get');
}

/**
 * A public request's preview token (`?preview=` or `X-Preview-Token`, CONTRACT.md 17.3): its drafts go on rc for the
 * record reads, and the parameter leaves the query the route validates. False without a token.
 */
async function usePreview(ctx: AppContext, resolve: NonNullable<RouteDeps['previews']>): Promise<boolean> {
  const { preview, ...rest } = ctx.query;
  if (preview !== undefined) ctx.query = rest;
  const token = ctx.get('X-Preview-Token') || (typeof preview === 'string' ? preview : '');
  if (!token) return false;
  ctx.state.rc = { ...ctx.state.rc, preview: await resolve(ctx.state.rc.tenantId!, token) };
  return true;
}

/** What runHandler needs of a route, fixed at its declaration. */
interface RouteRun {
  readsJson: boolean;
  validateBody: ValidateFunction | null;
  handler: (ctx: any) => unknown;
  /** Success status. */
  status: number;
}

/**
 * Runs the handler of a route declared `idempotent` under its Idempotency-Key (core/http/idempotency.ts): a
 * replay answers what the first request answered, and the answer is kept when the handler ends.
 */
async function runIdempotent(ctx: AppContext, run: RouteRun, family: RouteFamily, body: unknown, spec: RouteSpec, idempotency: IdempotencyKeys, logger: Logger): Promise<void> {
  const claim = await idempotency.begin(ctx, spec.body === 'raw' ? rawRequestFingerprint(ctx) : body);
  if (claim === 'replayed') return;
  if (!claim) {
    await runHandler(ctx, run, family, body);
    return;
  }
  try {
    if (spec.idempotent === 'in-transaction') await claim.inTransaction(ctx, () => runHandler(ctx, run, family, body));
    else await runHandler(ctx, run, family, body);
  } catch (err) {
    await claim.finish(ctx, err).catch((e: unknown) => logger.error({ err: e }, 'idempotency: keeping the answer failed'));
    throw err;
  }
  await claim.finish(ctx, undefined);
}

/**
 * Validates the body read by the route wrapper, runs the handler, and renders its result in the envelope
 * of `family` unless the handler wrote the body itself.
 */
async function runHandler(ctx: AppContext, run: RouteRun, family: RouteFamily, body: unknown): Promise<void> {
  if (run.readsJson) {
    const validateBody = run.validateBody;
    if (validateBody) {
      const value = body === undefined ? {} : body;
      if (!validateBody(value)) {
        assertOwnPatterns(validateBody, value);
        throw ValidationFailed('The request body failed validation', toIssues(validateBody.errors));
      }
      ctx.state.body = value;
    } else {
      ctx.state.body = body;
    }
  }

  const result = await run.handler(ctx);
  // A handler that wrote its body itself, or answered 304 (which has none), is done.
  if ((ctx.body === undefined || ctx.body === null) && ctx.status !== 304) {
    ctx.status = run.status;
    const envelope = successEnvelope(family, result === undefined ? null : result);
    // The content type goes straight to the response, as Koa would set it (ctx.type looks it up per request):
    // over any other for raw JSON, else unless the handler set one.
    const raw = holdsRawJson(result);
    if (raw || !ctx.res.hasHeader('Content-Type')) ctx.res.setHeader('Content-Type', JSON_TYPE);
    ctx.body = raw ? stringifyWithRaw(envelope) : envelope;
  }
}

/**
 * What identifies a raw (streamed) body for Idempotency-Key without reading it: its type, length and the
 * X-Platform-* headers that say where it goes (storage uploads).
 */
function rawRequestFingerprint(ctx: AppContext): Record<string, string> {
  const fingerprint: Record<string, string> = { contentType: ctx.get('Content-Type'), contentLength: ctx.get('Content-Length') };
  for (const [name, value] of Object.entries(ctx.headers)) {
    if (name.startsWith('x-platform-') && typeof value === 'string') fingerprint[name] = value;
  }
  return fingerprint;
}

/** The declared path with actual parameter values, the sensitive ones masked. */
function maskedPath(pattern: string, params: Record<string, string>, sensitive: string[]): string {
  return pattern.replace(/:(\w+)/g, (_, name: string) => (sensitive.includes(name) ? '[redacted]' : encodeURIComponent(params[name] ?? '')));
}

/**
 * The errors a schema may name with `x-error` beside its `pattern` (or `required`, `const`, `not`): the contract's
 * code for a value that fails it.
 */
const OWN_ERRORS: Record<string, (name: string, value: string) => Error> = {
  invalid_identifier: (name, value) => InvalidIdentifier({ name, value }),
  invalid_key_segment: (_name, value) => InvalidKeySegment(value),
  invalid_schema: () => InvalidSchema('The schema must have "type": "object" at its root'),
  // Beside a `not` of the names a value may not take (a custom role's name is no built-in role's).
  reserved: (name, value) => ValidationFailed('Invalid name', [{ path: `/${name}`, message: `"${value}" is reserved` }]),
};
const OWN_ERROR_KEYWORDS = new Set(['pattern', 'required', 'const', 'not']);

/**
 * A value that fails a pattern (or a `required`, `const` or `not`) whose schema names its error (`x-error`: a namespace
 * or schema name answers invalid_identifier, CONTRACT.md section 3; a storage key invalid_key_segment, section 8; a
 * registered schema that is no object schema invalid_schema; a reserved name `"admin" is reserved`) answers that error, as the handlers' own checks would,
 * not validation_failed. The document shows the same rule.
 */
function assertOwnPatterns(validate: ValidateFunction, value: unknown): void {
  for (const e of validate.errors ?? []) {
    if (!OWN_ERROR_KEYWORDS.has(e.keyword)) continue;
    let schema: unknown = validate.schema;
    for (const key of e.schemaPath.split('/').slice(1, -1)) schema = (schema as Record<string, unknown> | undefined)?.[unescapePointer(key)];
    const code = (schema as { 'x-error'?: string } | undefined)?.['x-error'];
    if (!code || !OWN_ERRORS[code]) continue;
    let at: unknown = value;
    for (const key of e.instancePath.split('/').slice(1)) at = (at as Record<string, unknown> | undefined)?.[unescapePointer(key)];
    throw OWN_ERRORS[code](unescapePointer(e.instancePath.split('/').pop() ?? ''), String(at));
  }
}

function unescapePointer(key: string): string {
  return decodeURIComponent(key).replace(/~1/g, '/').replace(/~0/g, '~');
}

/**
 * A route's query schema as it is validated: closed (an undeclared parameter is 400, as the OpenAPI document lists
 * the declared ones only) unless it says otherwise, and every integer bounded, so that no number reaches SQL that
 * the engine cannot bind (a missing maximum throws at declaration).
 */
function closedQuery(query: JsonSchema, label: string): JsonSchema {
  const properties = (query.properties ?? {}) as Record<string, JsonSchema>;
  for (const [name, schema] of Object.entries(properties)) {
    const types = ([] as unknown[]).concat(schema.type ?? []);
    if ((types.includes('integer') || types.includes('number')) && schema.maximum === undefined && schema.exclusiveMaximum === undefined) {
      throw new Error(`${label}: the query parameter ${name} needs a maximum`);
    }
  }
  return query.additionalProperties === undefined && query.patternProperties === undefined ? { ...query, additionalProperties: false } : query;
}

function compile(ajv: ReturnType<typeof createAjv>, schema: JsonSchema, label: string): ValidateFunction {
  try {
    return ajv.compile(schema);
  } catch (err) {
    throw new Error(`Invalid schema for ${label}: ${(err as Error).message}`, { cause: err });
  }
}

function prefixIssues(prefix: string, issues: Array<{ path: string; message: string }>) {
  return issues.map((i) => ({ path: `${prefix}${i.path === '/' ? '' : i.path}`, message: i.message }));
}

/**
 * resolveCaller for a public route: no principal; the tenant of the path (if the route has one) must be
 * active and have the route's module; sets ctx.state.rc. Synchronous when the tenant is known at once.
 */
function publicCaller(ctx: AppContext, spec: RouteSpec, module: RouteSpec['module'], deps: RouteDeps): Promise<void> | void {
  ctx.state.principal = null;
  const id = ctx.params[spec.tenantParam ?? ''] ?? null;
  if (id === null) {
    setPublicContext(ctx, null, deps);
    return;
  }
  const appCode = (typeof module === 'function' ? module(ctx) : module) ?? null;
  const known = deps.tenants.lookupKnown(id, appCode);
  if (known !== undefined) {
    admitPublic(ctx, spec, id, appCode, known, deps);
    return;
  }
  return deps.tenants.lookup(null, id, appCode).then((found) => admitPublic(ctx, spec, id, appCode, found, deps));
}

function admitPublic(ctx: AppContext, spec: RouteSpec, id: string, appCode: string | null, found: TenantLookup | null, deps: RouteDeps): void {
  if (!found || found.tenant.status !== 'active') throw TenantNotFound(id);
  if (!found.moduleEnabled) throw spec.absentWithoutModule === undefined ? ModuleDisabled(appCode!) : NotFound(spec.absentWithoutModule);
  ctx.state.tenant = found.tenant;
  setPublicContext(ctx, id, deps);
}

function setPublicContext(ctx: AppContext, tenantId: string | null, deps: RouteDeps): void {
  ctx.state.rc = { tenantId, principal: null, requestId: ctx.state.requestId, logger: deps.logger };
}

/**
 * A caller holding custom roles (CONTRACT.md 16.1) keeps those the tenant has; one holding no built-in role reaches
 * only the routes that serve records under policies, and a `role:<name>` the tenant lacks grants nothing (403 when it
 * was all the caller held, never viewer).
 */
async function admitCustomRoles(ctx: AppContext, spec: RouteSpec, p: Principal, tenantId: string, deps: RouteDeps): Promise<Principal> {
  const held = (deps.customRoles.resolveKept(tenantId, p.customRoles!) ?? (await deps.customRoles.resolve(tenantId, p.customRoles!))).map((r) => r.name);
  if (p.onlyCustomRoles && !held.length) throw Forbidden('Your roles grant nothing in this tenant');
  if (p.onlyCustomRoles && !spec.policies) throw Forbidden('A custom role reaches only the data API, the schemas and MCP');
  const admitted: Principal = held.length ? { ...p, customRoles: held } : { ...p, customRoles: undefined, onlyCustomRoles: undefined };
  ctx.state.principal = admitted;
  return admitted;
}

/**
 * Authenticates, resolves the tenant and checks role, suspension and module; sets ctx.state.rc.
 * The tenant and its module flag come from one query per request (no cache), so a module disabled
 * in any process is refused at once everywhere.
 */
async function resolveCaller(ctx: AppContext, spec: RouteSpec, module: RouteSpec['module'], deps: RouteDeps): Promise<void> {
  const principal = await deps.authenticator.require(ctx.get('Authorization') || undefined);
  ctx.state.principal = principal;
  if (spec.noApiTokens && principal.via === 'api_token') throw Forbidden('An API token may not do this, whatever its role');

  let tenantId: string | null = null;
  if (spec.auth === 'superadmin' && !principal!.isSuperadmin) throw SuperadminRequired();
  const appCode = typeof module === 'function' ? module(ctx) : module;

  if (spec.auth === 'tenant' || (spec.auth === 'superadmin' && spec.tenantParam)) {
    let p = principal!;
    if (spec.tenantParam) {
      tenantId = ctx.params[spec.tenantParam] ?? null;
      if (!p.isSuperadmin && p.tenantId && p.tenantId !== tenantId) throw Forbidden('You may only act on your own tenant');
    } else {
      const header = ctx.get('X-Tenant-Id') || null;
      if (p.isSuperadmin) tenantId = header ?? p.tenantId;
      else {
        if (header && p.tenantId && header !== p.tenantId) throw Forbidden('X-Tenant-Id names another tenant than your token');
        tenantId = p.tenantId ?? header;
      }
      if (!tenantId) throw TenantRequired();
    }
    if (!p.isSuperadmin && !p.tenantId) {
      // A token without a tenant claim acts with the role of its active membership in the named tenant
      // (asked before the tenant lookup, so that a non-member learns nothing of which tenants exist).
      const role = await deps.memberships.roleOf(tenantId!, p);
      if (!role) throw Forbidden('You are not a member of this tenant');
      // A membership holds one role: built-in, or custom (its policies only, CONTRACT.md 16.1).
      p = role in ROLE_RANK ? { ...p, tenantId, role: role as TenantRole } : { ...p, tenantId, role: 'viewer', customRoles: [role], onlyCustomRoles: true };
      ctx.state.principal = p;
    }
    if (p.customRoles && !p.isSuperadmin) p = await admitCustomRoles(ctx, spec, p, tenantId!, deps);
    const found = await deps.tenants.lookup(null, tenantId ?? '', appCode ?? null);
    if (!found) throw TenantNotFound(tenantId ?? '');
    if (found.tenant.status !== 'active' && !p.isSuperadmin) throw Forbidden('The tenant is suspended');
    if (!p.isSuperadmin && !(spec.policies && p.customRoles) && ROLE_RANK[p.role] < ROLE_RANK[spec.role ?? 'viewer']) {
      throw Forbidden(`This needs the ${spec.role} role`);
    }
    if (!found.moduleEnabled) throw ModuleDisabled(appCode!);
    ctx.state.tenant = found.tenant;
  } else if (principal) {
    tenantId = principal.tenantId;
  }

  const rc: RequestContext = {
    tenantId: ctx.state.tenant ? tenantId : (spec.auth === 'user' ? tenantId : null),
    principal: ctx.state.principal,
    requestId: ctx.state.requestId,
    logger: deps.logger,
  };
  ctx.state.rc = rc;
}
