import { createHash, randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { AuditLog } from '../audit/audit-log.repository.js';
import type { Database } from '../db/database.js';
import { newId, nowIso } from '../base/ids.js';
import type { Page } from '../http/envelope.js';
import { InvalidToken, NotFound, ValidationFailed } from '../base/errors.js';
import type { Principal, RequestContext } from '../base/request-context.js';
import { ApiTokensRepository, type ApiTokenRecord } from './api-tokens.repository.js';
import { isBuiltInRole, type RoleCatalogue } from './roles.js';

/** `pat_` and 40 base62 characters (about 238 random bits). */
const SECRET_PREFIX = 'pat_';
const SECRET_LENGTH = 40;
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** What a presented secret must look like before it is looked up (longer ones are refused without a query). */
const SECRET_SHAPE = /^pat_[0-9A-Za-z]{32,64}$/;
/**
 * How long a process keeps what it read of a token (by the secret's hash). A revocation is felt by requests
 * that start 1 s after it in every process (CONTRACT.md 16.2): a kept answer is never older than this, and
 * the revoking process (and, on PostgreSQL, every process through the change feed) forgets it at once.
 */
export const TOKEN_KNOWN_FOR_MS = 500;
const MAX_KNOWN_TOKENS = 10_000;
/** lastUsedAt is written at most once a minute per token (it may lag by up to a minute). */
export const LAST_USED_EVERY_MS = 60_000;
/** The change feed's topic for API tokens; the key is the token's hash. */
const TOKEN_TOPIC = 'api_token';

/** An API token as the API shows it: never its secret. */
export interface ApiTokenView {
  id: string;
  name: string;
  role: string;
  prefix: string;
  createdAt: string;
  expiresAt: string | null;
  lastUsedAt: string | null;
  revokedAt: string | null;
  createdBy: string;
}

export interface CreateApiTokenInput {
  name: string;
  role: string;
  expiresAt?: string;
}

function view(t: ApiTokenRecord): ApiTokenView {
  return {
    id: t.id, name: t.name, role: t.role, prefix: t.prefix, createdAt: t.createdAt, expiresAt: t.expiresAt,
    lastUsedAt: t.lastUsedAt, revokedAt: t.revokedAt, createdBy: t.createdBy,
  };
}

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/** A new secret: `pat_` and SECRET_LENGTH base62 characters, unbiased (bytes of 248 and up are drawn again). */
function newSecret(): string {
  let out = SECRET_PREFIX;
  while (out.length < SECRET_PREFIX.length + SECRET_LENGTH) {
    for (const byte of randomBytes(SECRET_LENGTH)) {
      if (byte < 248 && out.length < SECRET_PREFIX.length + SECRET_LENGTH) out += BASE62[byte % 62];
    }
  }
  return out;
}

/**
 * API tokens (CONTRACT.md 16.2): created by a tenant admin with a role of the tenant (`roles` says which
 * exist), shown once, stored as the SHA-256 of the secret, revoked by the admin. `authenticate` turns a
 * presented secret into the principal of its token, for `Authorization: Bearer pat_…`.
 */
export class ApiTokensService {
  readonly repository: ApiTokensRepository;
  /** What was read of a secret's hash (null: no such token), until when. */
  private readonly known = new Map<string, { token: ApiTokenRecord | null; until: number }>();
  /** Reads under way, so that a burst of requests with one token reads it once. */
  private readonly reading = new Map<string, Promise<ApiTokenRecord | null>>();
  /** Raised by every change heard: a read that overlapped one is not kept. */
  private generation = 0;
  /** When this process last wrote (or saw) each token's lastUsedAt, in ms. */
  private readonly usedAt = new Map<string, number>();

  constructor(private readonly db: Database, private readonly roles: RoleCatalogue, private readonly audit: AuditLog, private readonly logger?: Logger) {
    this.repository = new ApiTokensRepository(db);
    db.changes.subscribe(TOKEN_TOPIC, (hash) => this.forget(hash));
  }

  async create(rc: RequestContext, tenantId: string, input: CreateApiTokenInput): Promise<ApiTokenView & { token: string }> {
    await this.checkRole(rc, tenantId, input.role);
    let expiresAt: string | null = null;
    if (input.expiresAt !== undefined) {
      const at = Date.parse(input.expiresAt);
      if (Number.isNaN(at)) throw ValidationFailed('Invalid expiresAt', [{ path: '/expiresAt', message: 'must be a date-time' }]);
      if (at <= Date.now()) throw ValidationFailed('Invalid expiresAt', [{ path: '/expiresAt', message: 'must be in the future' }]);
      expiresAt = new Date(at).toISOString();
    }
    const secret = newSecret();
    const token: ApiTokenRecord = {
      tenantId, id: newId(), name: input.name, role: input.role, tokenHash: hashSecret(secret),
      prefix: secret.slice(SECRET_PREFIX.length, SECRET_PREFIX.length + 8), createdBy: rc.principal?.userId ?? 'system',
      createdAt: nowIso(), expiresAt, lastUsedAt: null, revokedAt: null,
    };
    await this.db.transaction(rc, async (rc) => {
      await this.repository.insert(rc, token);
      await this.audit.add(rc, { action: 'api_token.created', target: `api_token/${token.id}` }, token.createdAt);
    });
    return { ...view(token), token: secret };
  }

  async list(rc: RequestContext | null, tenantId: string, limit: number, offset: number): Promise<Page<ApiTokenView>> {
    const { items, total } = await this.repository.list(rc, tenantId, limit, offset);
    return { items: items.map(view), pagination: { limit, offset, total, hasMore: offset + items.length < total, nextCursor: null } };
  }

  /** Revokes the token (a revoked one stays as it is): every process refuses it within TOKEN_KNOWN_FOR_MS. */
  async revoke(rc: RequestContext, tenantId: string, id: string): Promise<ApiTokenView> {
    return this.db.transaction(rc, async (rc) => {
      const token = await this.repository.find(rc, tenantId, id);
      if (!token) throw NotFound('No such API token');
      if (token.revokedAt) return view(token);
      const at = nowIso();
      await this.repository.revoke(rc, tenantId, id, at);
      await this.audit.add(rc, { action: 'api_token.revoked', target: `api_token/${id}` }, at);
      await this.db.changes.notify(rc, TOKEN_TOPIC, token.tokenHash);
      return view({ ...token, revokedAt: at });
    });
  }

  /**
   * The principal of a presented secret (`pat_…`): the token's tenant and role, never a superadmin or a
   * member; its id is the token's id. A malformed, unknown, revoked or expired token: 401 invalid_token.
   */
  async authenticate(secret: string): Promise<Principal> {
    if (!SECRET_SHAPE.test(secret)) throw InvalidToken();
    const token = await this.find(hashSecret(secret));
    if (!token) throw InvalidToken();
    const now = Date.now();
    if (token.revokedAt) throw InvalidToken('The API token has been revoked');
    if (token.expiresAt && Date.parse(token.expiresAt) <= now) throw InvalidToken('The API token has expired');
    await this.noteUse(token, now);
    // A custom role (CONTRACT.md 16.1) grants its policies only; the request pipeline checks that the tenant has it.
    const custom = isBuiltInRole(token.role) ? { role: token.role } : { role: 'viewer' as const, customRoles: [token.role], onlyCustomRoles: true };
    return {
      userId: token.id, email: null, name: token.name, tenantId: token.tenantId, isSuperadmin: false,
      roles: [token.role], via: 'api_token', ...custom,
    };
  }

  private async checkRole(rc: RequestContext, tenantId: string, role: string): Promise<void> {
    if (role === 'superadmin') {
      throw ValidationFailed('Invalid role', [{ path: '/role', message: 'superadmin is a platform role and cannot be given to an API token' }]);
    }
    if (!(await this.roles.exists(rc, tenantId, role))) {
      const names = await this.roles.describe(rc, tenantId);
      throw ValidationFailed('Invalid role', [{ path: '/role', message: `must be a role of the tenant: ${names.join(', ')}` }]);
    }
  }

  /** The token of a secret's hash: kept for TOKEN_KNOWN_FOR_MS, else read (once for concurrent requests). */
  private find(hash: string): Promise<ApiTokenRecord | null> {
    const kept = this.known.get(hash);
    if (kept && kept.until > Date.now()) return Promise.resolve(kept.token);
    let read = this.reading.get(hash);
    if (!read) {
      read = this.read(hash);
      this.reading.set(hash, read);
    }
    return read;
  }

  private async read(hash: string): Promise<ApiTokenRecord | null> {
    const generation = this.generation;
    const startedAt = Date.now();
    try {
      const token = await this.repository.findByHash(hash);
      // Kept from when the read began (it may have seen the state before a change made while it ran), and
      // not at all when a change was heard meanwhile.
      if (generation === this.generation) {
        if (this.known.size >= MAX_KNOWN_TOKENS) this.known.delete(this.known.keys().next().value!);
        this.known.set(hash, { token, until: startedAt + TOKEN_KNOWN_FOR_MS });
      }
      return token;
    } finally {
      this.reading.delete(hash);
    }
  }

  private forget(hash: string | null): void {
    this.generation += 1;
    if (hash === null) this.known.clear();
    else this.known.delete(hash);
  }

  /**
   * Writes lastUsedAt when it is a minute old (or unset) as far as this process knows: one conditional
   * statement, so that of the processes using a token within a minute one writes. A failure is logged,
   * never the request's.
   */
  private async noteUse(token: ApiTokenRecord, now: number): Promise<void> {
    const seen = Math.max(this.usedAt.get(token.id) ?? 0, token.lastUsedAt ? Date.parse(token.lastUsedAt) : 0);
    if (now - seen < LAST_USED_EVERY_MS) return;
    if (this.usedAt.size >= MAX_KNOWN_TOKENS) this.usedAt.delete(this.usedAt.keys().next().value!);
    this.usedAt.set(token.id, now);
    try {
      await this.repository.touch(token.tenantId, token.id, new Date(now).toISOString(), new Date(now - LAST_USED_EVERY_MS).toISOString());
    } catch (err) {
      this.logger?.warn({ err, tokenId: token.id }, 'api token: writing lastUsedAt failed');
    }
  }
}
