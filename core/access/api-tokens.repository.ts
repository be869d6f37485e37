import type { Database } from '../db/database.js';
import type { RequestContext } from '../base/request-context.js';

/** An API token as stored: never its secret, only the secret's SHA-256. */
export interface ApiTokenRecord {
  tenantId: string;
  id: string;
  name: string;
  role: string;
  tokenHash: string;
  prefix: string;
  createdBy: string;
  createdAt: string;
  expiresAt: string | null;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

interface ApiTokenRow {
  tenant_id: string;
  id: string;
  name: string;
  role: string;
  token_hash: string;
  prefix: string;
  created_by: string;
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
  revoked_at: string | null;
}

const COLUMNS = 'tenant_id, id, name, role, token_hash, prefix, created_by, created_at, expires_at, last_used_at, revoked_at';

function toRecord(r: ApiTokenRow): ApiTokenRecord {
  return {
    tenantId: r.tenant_id, id: r.id, name: r.name, role: r.role, tokenHash: r.token_hash, prefix: r.prefix, createdBy: r.created_by,
    createdAt: r.created_at, expiresAt: r.expires_at, lastUsedAt: r.last_used_at, revokedAt: r.revoked_at,
  };
}

/** SQL of `api_tokens`. Every statement but the lookup by hash (a request names its token by its secret alone) is led by the tenant. */
export class ApiTokensRepository {
  constructor(private readonly db: Database) {}

  async insert(rc: RequestContext, t: ApiTokenRecord): Promise<void> {
    await this.db.sql(rc).run(this.db.query('api_tokens').insert({
      tenant_id: t.tenantId, id: t.id, name: t.name, role: t.role, token_hash: t.tokenHash, prefix: t.prefix, created_by: t.createdBy,
      created_at: t.createdAt, expires_at: t.expiresAt, last_used_at: t.lastUsedAt, revoked_at: t.revokedAt,
    }));
  }

  /** The token whose secret hashes to `tokenHash`, of any tenant (unique index). */
  async findByHash(tokenHash: string): Promise<ApiTokenRecord | null> {
    const rows = await this.db.sql(null).rows<ApiTokenRow>(`SELECT ${COLUMNS} FROM api_tokens WHERE token_hash = ?`, [tokenHash]);
    return rows[0] ? toRecord(rows[0]) : null;
  }

  async find(rc: RequestContext | null, tenantId: string, id: string): Promise<ApiTokenRecord | null> {
    const rows = await this.db.sql(rc).rows<ApiTokenRow>(`SELECT ${COLUMNS} FROM api_tokens WHERE tenant_id = ? AND id = ?`, [tenantId, id]);
    return rows[0] ? toRecord(rows[0]) : null;
  }

  /** A page of the tenant's tokens, newest first (ids are UUIDv7: time-ordered), and how many there are. */
  async list(rc: RequestContext | null, tenantId: string, limit: number, offset: number): Promise<{ items: ApiTokenRecord[]; total: number }> {
    const rows = await this.db.sql(rc).rows<ApiTokenRow>(
      `SELECT ${COLUMNS} FROM api_tokens WHERE tenant_id = ? ORDER BY id DESC LIMIT ? OFFSET ?`, [tenantId, limit, offset]);
    const counted = await this.db.sql(rc).rows<{ n: number | string }>('SELECT COUNT(*) AS n FROM api_tokens WHERE tenant_id = ?', [tenantId]);
    return { items: rows.map(toRecord), total: Number(counted[0]?.n ?? 0) };
  }

  /** Revokes the token unless it was revoked already: true when this call revoked it. */
  async revoke(rc: RequestContext, tenantId: string, id: string, at: string): Promise<boolean> {
    const changed = await this.db.sql(rc).run(this.db.query('api_tokens').where({ tenant_id: tenantId, id }).whereNull('revoked_at').update({ revoked_at: at }));
    return Number(changed) === 1;
  }

  /**
   * Sets last_used_at to `now` unless it is later than `staleBefore` (one conditional statement: of many
   * processes using the token within the minute, one writes).
   */
  async touch(tenantId: string, id: string, now: string, staleBefore: string): Promise<void> {
    await this.db.sql(null).run(this.db.query('api_tokens')
      .where({ tenant_id: tenantId, id })
      .where((q) => q.whereNull('last_used_at').orWhere('last_used_at', '<', staleBefore))
      .update({ last_used_at: now }));
  }
}
