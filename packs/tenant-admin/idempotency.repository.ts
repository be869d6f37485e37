import type { Database, RequestContext } from '../../core/pack-api.js';

export interface StoredResponse {
  requestHash: string;
  status: number;
  response: unknown;
}

/** Idempotency keys and the first response given for each, per scope and operation. */
export class IdempotencyRepository {
  constructor(private readonly db: Database) {}

  async find(rc: RequestContext | null, scope: string, key: string): Promise<(StoredResponse & { operation: string }) | null> {
    const row = await this.db.conn(rc)('idempotency_keys').where({ tenant_id: scope, key }).first();
    if (!row) return null;
    return { operation: row.operation, requestHash: row.request_hash, status: Number(row.status), response: this.db.dialect.fromJson(row.response) };
  }

  async insert(rc: RequestContext, scope: string, key: string, operation: string, stored: StoredResponse, createdAt: string): Promise<void> {
    await this.db.conn(rc)('idempotency_keys').insert({
      tenant_id: scope, key, operation, request_hash: stored.requestHash, status: stored.status,
      response: this.db.dialect.toJson(stored.response), created_at: createdAt,
    });
  }
}
