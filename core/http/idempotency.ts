import { createHash } from 'node:crypto';
import type { Database } from '../db/database.js';
import type { AppContext } from './app-state.js';
import type { RequestContext } from '../base/request-context.js';
import { errorEnvelope, JSON_TYPE, successEnvelope } from './envelope.js';
import { toAppError } from './error-handler.js';
import { Conflict, IdempotencyKeyReused, ValidationFailed } from '../base/errors.js';
import { IdempotencyRepository, type IdempotencyRow } from './idempotency.repository.js';

/** How long a key and its first answer are kept. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/** A claim whose request has not answered after this long is taken to be abandoned (its process died). */
const ABANDONED_MS = 5 * 60 * 1000;
const MAX_KEY_LENGTH = 255;
/** Response headers a replay gives again. */
const KEPT_HEADERS = ['content-type', 'etag', 'location'];

/** An answer as kept for a key: the response body's text and the headers a replay gives again. */
export interface StoredAnswer {
  body: string;
  headers: Record<string, string>;
}

/** A request that holds its key: run it, then `finish` with its outcome. */
export interface IdempotencyClaim {
  /**
   * Runs the request's work (`run`: validation, handler, the envelope written to ctx) in ONE database
   * transaction, with `ctx.state.rc` carrying it, and keeps its answer in that same transaction: the write and
   * its answer commit together or not at all. A crash can then never leave a committed write whose key still
   * looks unanswered (and could be claimed again once abandoned, running the write a second time). A run that
   * throws is rolled back whole; `finish` then keeps its 4xx (or gives a 5xx's key back) as usual.
   */
  inTransaction(ctx: AppContext, run: () => Promise<void>): Promise<void>;
  /** Keeps the answer written to ctx, or the error's (unless inTransaction kept it already). */
  finish(ctx: AppContext, thrown: unknown): Promise<void>;
}

/** The key held by a request, whatever carries it (an HTTP route, an MCP tool): keep its answer, or give the key back. */
export interface KeyClaim {
  /** Keeps the answer (a 2xx or 4xx) for replays; a 5xx gives the key back instead, so that a retry runs again. */
  finish(status: number, answer: StoredAnswer): Promise<void>;
  /** Keeps the answer in rc's transaction, if this claim still holds the key: true when it did. */
  keepIn(rc: RequestContext, status: number, answer: StoredAnswer): Promise<boolean>;
}

/** What `claimKey` found: the first answer to replay, or the claim this request now holds. */
export type KeyOutcome = { replay: { status: number; answer: StoredAnswer } } | { claim: KeyClaim };

/**
 * The kernel's Idempotency-Key (CONTRACT 11.2 and 13), for routes declared `idempotent: true`. The key is
 * scoped to the tenant (the caller on platform routes), the caller (see callerOf), the method and the path:
 * two callers of one tenant sending the same key never share an answer. The first request claims
 * it with one INSERT ... ON CONFLICT DO NOTHING (so the database decides between processes); its answer is
 * kept when it is a 2xx or 4xx and replayed for the same key and the same body (compared as canonical
 * JSON) with `Idempotent-Replayed: true`; another body answers 422 idempotency_key_reused, a request while
 * the first one runs 409 conflict. A 5xx is not kept: the key is released and a retry runs again.
 * `claimKey` is the same without an HTTP request, for the MCP tools (`idempotencyKey`), which share the
 * keys of the route they stand for.
 */
/** 400 validation_failed (naming `keyPath`) for a key over 255 characters; an absent key passes. */
export function assertIdempotencyKey(key: string | undefined, keyPath: string): void {
  if (key && key.length > MAX_KEY_LENGTH) {
    throw ValidationFailed('Invalid Idempotency-Key', [{ path: keyPath, message: `must be at most ${MAX_KEY_LENGTH} characters` }]);
  }
}

export class IdempotencyKeys {
  private readonly repository: IdempotencyRepository;

  constructor(private readonly db: Database) {
    this.repository = new IdempotencyRepository(db);
  }

  /**
   * Called before validation and the handler. Returns null when the request carries no key (or there is no
   * scope), `'replayed'` when the stored answer was written to ctx, else the claim this request now holds.
   */
  async begin(ctx: AppContext, body: unknown): Promise<IdempotencyClaim | 'replayed' | null> {
    const key = ctx.get('Idempotency-Key');
    if (!key) return null;
    const outcome = await this.claimKey(ctx.state.rc, ctx.method, ctx.path, key, body, 'header/Idempotency-Key', ctx.get('X-Cart-Token') || undefined, ctx.querystring);
    if (!outcome) return null;
    if ('replay' in outcome) {
      replay(ctx, outcome.replay.status, outcome.replay.answer);
      return 'replayed';
    }
    const { claim } = outcome;
    const db = this.db;
    let kept = false;
    return {
      async inTransaction(ctx, run) {
        const outer = ctx.state.rc;
        await db.transaction(outer, async (rc) => {
          ctx.state.rc = rc;
          try {
            await run();
          } finally {
            ctx.state.rc = outer;
          }
          if (ctx.status >= 500) return;
          // Kept only while this request still holds the key (claimed at the time it was claimed): else the
          // whole write rolls back, since another request now answers for the key.
          if (!(await claim.keepIn(rc, ctx.status, answerOf(ctx)))) {
            throw Conflict('Another request took this Idempotency-Key over; retry once it has answered');
          }
          kept = true;
        });
      },
      async finish(ctx, thrown) {
        if (thrown === undefined) {
          if (kept) return;
          await claim.finish(ctx.status, answerOf(ctx));
        } else {
          const error = toAppError(thrown);
          const envelope = errorEnvelope(ctx.state.family ?? 'bff', error.status, error.code, error.message, error.details);
          await claim.finish(error.status, { body: JSON.stringify(envelope), headers: { 'content-type': JSON_TYPE, ...lower(error.headers) } });
        }
      },
    };
  }

  /**
   * Claims `key` for a request `method path` with `body` in the caller's scope: null without a scope, else
   * the answer to replay or the claim. Throws 422 idempotency_key_reused for another body, 409 conflict
   * while the first request runs, 400 for a key over 255 characters (naming `keyPath`). `cartToken`: the
   * cart token a public request carries (X-Cart-Token), which names its caller when no principal does.
   * `query`: the request's query string, part of what must be the same (`?locale=de` is another request than
   * `?locale=en` with the same body); its parameters' order does not matter.
   */
  async claimKey(
    rc: RequestContext, method: string, path: string, key: string, body: unknown, keyPath = '/idempotencyKey', cartToken?: string, query = '',
  ): Promise<KeyOutcome | null> {
    assertIdempotencyKey(key, keyPath);
    const scope = rc.tenantId ?? (rc.principal ? `caller:${rc.principal.userId}` : null);
    if (!scope) return null;
    const keyHash = sha256(`${method} ${path}\n${callerOf(rc, cartToken)}\n${key}`);
    // Without a query the hash is the body's alone, as before query strings counted (keys kept across an upgrade).
    const requestHash = sha256(canonicalJson(body ?? null) + (query ? `\n?${canonicalQuery(query)}` : ''));

    for (let attempt = 0; attempt < 3; attempt += 1) {
      const now = new Date();
      const claimedAt = now.toISOString();
      const expiresAt = new Date(now.getTime() + IDEMPOTENCY_TTL_MS).toISOString();
      if (await this.repository.claim(scope, keyHash, requestHash, claimedAt, expiresAt)) {
        if (Math.random() < 0.01) await this.repository.purgeExpired(scope, claimedAt);
        return { claim: this.claim(scope, keyHash, claimedAt) };
      }
      const seen = await this.repository.find(scope, keyHash);
      if (!seen) continue;
      if (this.reusable(seen, now)) {
        if (await this.repository.takeOver(scope, keyHash, seen, requestHash, claimedAt, expiresAt)) return { claim: this.claim(scope, keyHash, claimedAt) };
        continue;
      }
      if (seen.requestHash !== requestHash) throw IdempotencyKeyReused();
      if (seen.status === null) throw Conflict('A request with this Idempotency-Key is still running; retry once it has answered');
      return { replay: { status: seen.status, answer: JSON.parse(seen.response ?? '{}') as StoredAnswer } };
    }
    throw Conflict('A request with this Idempotency-Key is still running; retry once it has answered');
  }

  /** An expired key, or a claim abandoned by a process that died, may be claimed again. */
  private reusable(seen: IdempotencyRow, now: Date): boolean {
    if (seen.expiresAt <= now.toISOString()) return true;
    return seen.status === null && Date.parse(seen.claimedAt) + ABANDONED_MS < now.getTime();
  }

  private claim(scope: string, keyHash: string, claimedAt: string): KeyClaim {
    const repository = this.repository;
    return {
      keepIn: (rc, status, answer) => repository.completeIn(rc, scope, keyHash, claimedAt, status, JSON.stringify(answer)),
      async finish(status, answer) {
        if (status >= 500) await repository.release(scope, keyHash, claimedAt);
        else await repository.complete(scope, keyHash, claimedAt, status, JSON.stringify(answer));
      },
    };
  }
}

/**
 * Who a key belongs to within its tenant (CONTRACT.md 13): the principal (how it signed in and its `sub`:
 * a user, the test key, an API token's id), else the cart token of a public request, else the public.
 * Each part is kept apart by its prefix, so no `sub` can pass for a cart token.
 */
function callerOf(rc: RequestContext, cartToken: string | undefined): string {
  if (rc.principal) return `${rc.principal.via}:${rc.principal.userId}`;
  return cartToken ? `cart:${cartToken}` : 'public';
}

function replay(ctx: AppContext, status: number, answer: StoredAnswer): void {
  ctx.status = status;
  for (const [name, value] of Object.entries(answer.headers)) ctx.set(name, value);
  ctx.set('Idempotent-Replayed', 'true');
  ctx.body = answer.body;
  ctx.type = answer.headers['content-type'] ?? 'application/json';
}

/** The answer written to ctx, as kept for replays (with the handler's keptData in place of its data, when it set one). */
function answerOf(ctx: AppContext): StoredAnswer {
  const body = ctx.state.keptData === undefined ? ctx.body : successEnvelope(ctx.state.family, ctx.state.keptData);
  return { body: typeof body === 'string' ? body : JSON.stringify(body ?? null), headers: keptHeaders(ctx) };
}

function keptHeaders(ctx: AppContext): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const name of KEPT_HEADERS) {
    const value = ctx.response.get(name);
    if (value) kept[name] = value;
  }
  kept['content-type'] ??= JSON_TYPE;
  return kept;
}

function lower(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** A query string with its parameters in a fixed order: `b=2&a=1` and `a=1&b=2` are the same request. */
function canonicalQuery(query: string): string {
  const params = new URLSearchParams(query);
  params.sort();
  return params.toString();
}

/** JSON with object keys sorted at every level: the same body hashes the same whatever its key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
