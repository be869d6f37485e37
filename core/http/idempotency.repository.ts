import type { Database } from '../db/database.js';
import type { RequestContext } from '../base/request-context.js';

export interface IdempotencyRow {
  requestHash: string;
  /** Null while the first request runs. */
  status: number | null;
  response: string | null;
  claimedAt: string;
  expiresAt: string;
}

/** SQL of `idempotency_requests`. Every statement is led by the scope (the tenant, or the caller). */
export class IdempotencyRepository {
  constructor(private readonly db: Database) {}

  /** Claims the key: true when this request inserted it (one INSERT ... ON CONFLICT DO NOTHING decides). */
  async claim(scope: string, keyHash: string, requestHash: string, now: string, expiresAt: string): Promise<boolean> {
    let changes = 0;
    await this.db.writeAtCommit(null, {
      table: 'idempotency_requests',
      rows: [{ tenant_id: scope, key_hash: keyHash, request_hash: requestHash, status: null, response: null, claimed_at: now, expires_at: expiresAt }],
      skipConflictsOn: ['tenant_id', 'key_hash'],
      done: (n) => { changes = n; },
    });
    return changes === 1;
  }

  async find(scope: string, keyHash: string): Promise<IdempotencyRow | null> {
    const rows = await this.db.sql(null).rows<{ request_hash: string; status: number | null; response: string | null; claimed_at: string; expires_at: string }>(
      'SELECT request_hash, status, response, claimed_at, expires_at FROM idempotency_requests WHERE tenant_id = ? AND key_hash = ?', [scope, keyHash]);
    const row = rows[0];
    return row ? { requestHash: row.request_hash, status: row.status === null ? null : Number(row.status), response: row.response, claimedAt: row.claimed_at, expiresAt: row.expires_at } : null;
  }

  /** Takes over a claim that expired, or whose request was abandoned (its process died): true when this request now holds it. */
  async takeOver(scope: string, keyHash: string, seen: IdempotencyRow, requestHash: string, now: string, expiresAt: string): Promise<boolean> {
    const changed = await this.db.sql(null).run(this.db.query('idempotency_requests')
      .where({ tenant_id: scope, key_hash: keyHash, claimed_at: seen.claimedAt })
      .update({ request_hash: requestHash, status: null, response: null, claimed_at: now, expires_at: expiresAt }));
    return changed === 1;
  }

  /** Keeps the first answer, if the claim made at `claimedAt` still holds the key. */
  async complete(scope: string, keyHash: string, claimedAt: string, status: number, response: string): Promise<void> {
    await this.db.sql(null).run(this.db.query('idempotency_requests').where({ tenant_id: scope, key_hash: keyHash, claimed_at: claimedAt }).whereNull('status').update({ status, response }));
  }

  /**
   * Keeps the first answer in rc's transaction (with the write it answers for), if the claim made at
   * `claimedAt` still holds the key: true when it did.
   */
  async completeIn(rc: RequestContext, scope: string, keyHash: string, claimedAt: string, status: number, response: string): Promise<boolean> {
    const rows = await this.db.sql(rc).rows(
      'UPDATE idempotency_requests SET status = ?, response = ? WHERE tenant_id = ? AND key_hash = ? AND claimed_at = ? AND status IS NULL RETURNING 1 AS kept',
      [status, response, scope, keyHash, claimedAt]);
    return rows.length === 1;
  }

  /** Gives the key up (the request failed with a 5xx, or never got far): a retry runs again. */
  async release(scope: string, keyHash: string, claimedAt: string): Promise<void> {
    await this.db.sql(null).run(this.db.query('idempotency_requests').where({ tenant_id: scope, key_hash: keyHash, claimed_at: claimedAt }).whereNull('status').delete());
  }

  /** Deletes a scope's expired keys (bounded by the scope's expiry index). */
  async purgeExpired(scope: string, now: string): Promise<void> {
    await this.db.sql(null).run(this.db.query('idempotency_requests').where('tenant_id', scope).where('expires_at', '<', now).delete());
  }
}
