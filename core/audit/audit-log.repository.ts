import { actorOf, type Actor } from '../base/actor.js';
import { InvalidCursor } from '../base/errors.js';
import { newId, nowIso } from '../base/ids.js';
import type { RequestContext } from '../base/request-context.js';
import type { Database } from '../db/database.js';
import type { Page } from '../http/envelope.js';

/** An entry of the audit log as the API returns it (CONTRACT.md 16.4). */
export interface AuditEntry {
  id: string;
  at: string;
  actor: Actor;
  action: string;
  target: string;
  requestId: string;
}

/** What an entry says: `action` is `<area>.<verb>` (`record.created`, `role.created`), `target` what it acted on. */
export interface AuditChange {
  action: string;
  target: string;
}

/** A page of the log: newest first, with the filters of GET /tenants/{id}/audit-log. */
export interface AuditQuery {
  limit?: number;
  offset?: number;
  cursor?: string;
  count?: boolean;
  actor?: string;
  action?: string;
  target?: string;
  from?: string;
  to?: string;
}

interface AuditRow {
  id: string;
  at: string;
  actor_type: Actor['type'];
  actor_id: string;
  actor_email: string | null;
  action: string;
  target: string;
  request_id: string;
}

/** The platform's own actions (a superadmin's) are kept under this tenant id. */
const PLATFORM = '';

/**
 * The audit log: entries queued in the change's transaction (written with it, in its group commit), listed
 * newest first. Nothing here changes or deletes an entry except retention.
 */
export class AuditLog {
  constructor(private readonly db: Database) {}

  private row(rc: RequestContext, actor: Actor, change: AuditChange, at: string) {
    return {
      tenant_id: rc.tenantId ?? PLATFORM, id: newId(), at, actor_type: actor.type, actor_id: actor.id.slice(0, 255),
      actor_email: actor.email?.slice(0, 320) ?? null, action: change.action.slice(0, 64), target: change.target.slice(0, 255),
      request_id: rc.requestId.slice(0, 128),
    };
  }

  /** Queues one entry in rc's transaction, by rc's actor. */
  async add(rc: RequestContext, change: AuditChange, at = nowIso()): Promise<void> {
    await this.db.insertAtCommit(rc, 'audit_log', this.row(rc, actorOf(rc), change, at));
  }

  /** Queues many entries (bulk writes, imports) as multi-row statements. */
  async addMany(rc: RequestContext, changes: readonly AuditChange[], at = nowIso()): Promise<void> {
    const actor = actorOf(rc);
    const batch = this.db.dialect.rowsPerInsert;
    for (let i = 0; i < changes.length; i += batch) {
      await this.db.writeAtCommit(rc, { table: 'audit_log', rows: changes.slice(i, i + batch).map((c) => this.row(rc, actor, c, at)) });
    }
  }

  /** A tenant's entries (null: the platform's), newest first, filtered and paged as lists. */
  async list(tenantId: string | null, query: AuditQuery): Promise<Page<AuditEntry>> {
    const limit = query.limit ?? 50;
    const offset = query.offset ?? 0;
    const where: string[] = ['tenant_id = ?'];
    const bindings: unknown[] = [tenantId ?? PLATFORM];
    const conditions: Array<[string, string | undefined]> = [
      ['actor_id = ?', query.actor], ['action = ?', query.action], ['target = ?', query.target],
      ['at >= ?', query.from === undefined ? undefined : new Date(query.from).toISOString()],
      ['at <= ?', query.to === undefined ? undefined : new Date(query.to).toISOString()],
    ];
    for (const [condition, value] of conditions) {
      if (value === undefined) continue;
      where.push(condition);
      bindings.push(value);
    }
    const filtered = where.join(' AND ');
    const page = query.cursor ? `${filtered} AND id < ?` : filtered;
    const rows = await this.db.sql(null).rows<AuditRow>(
      `SELECT id, at, actor_type, actor_id, actor_email, action, target, request_id FROM audit_log WHERE ${page} ORDER BY id DESC LIMIT ? OFFSET ?`,
      [...bindings, ...(query.cursor ? [decodeCursor(query.cursor)] : []), limit + 1, offset]);
    const hasMore = rows.length > limit;
    const items = (hasMore ? rows.slice(0, limit) : rows).map(toEntry);
    const total = query.count === false ? null
      : Number((await this.db.sql(null).rows<{ n: number | string }>(`SELECT count(*) AS n FROM audit_log WHERE ${filtered}`, bindings))[0].n);
    const nextCursor = hasMore ? Buffer.from(items[items.length - 1].id).toString('base64url') : null;
    return { items, pagination: { limit, offset, total, hasMore, nextCursor } };
  }

  /** Tenants that may hold entries ('' holds the platform's). */
  async tenantIds(): Promise<string[]> {
    const rows = await this.db.sql(null).rows<{ id: string }>('SELECT id FROM tenants');
    return [PLATFORM, ...rows.map((r) => r.id)];
  }

  /** Deletes up to `limit` entries of a tenant made before `cutoff` (retention); returns how many. */
  async deleteOlderThan(tenantId: string, cutoff: string, limit: number): Promise<number> {
    const ids = (await this.db.sql(null).rows<{ id: string }>(
      'SELECT id FROM audit_log WHERE tenant_id = ? AND at < ? ORDER BY id LIMIT ?', [tenantId, cutoff, limit])).map((r) => r.id);
    if (!ids.length) return 0;
    return this.db.sql(null).run(this.db.query('audit_log').where('tenant_id', tenantId).whereIn('id', ids).delete());
  }
}

function decodeCursor(cursor: string): string {
  const id = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(id)) throw InvalidCursor('The cursor is malformed');
  return id;
}

function toEntry(row: AuditRow): AuditEntry {
  const actor: Actor = { type: row.actor_type, id: row.actor_id };
  if (row.actor_email) actor.email = row.actor_email;
  return { id: row.id, at: row.at, actor, action: row.action, target: row.target, requestId: row.request_id };
}
