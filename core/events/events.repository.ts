import type { Database } from '../db/database.js';
import type { RequestContext } from '../base/request-context.js';
import type { PlatformEvent } from './event.js';

/** The outbox: events written in the same transaction as the change that raised them. */
export class EventsRepository {
  constructor(private readonly db: Database) {}

  async insert(rc: RequestContext, event: PlatformEvent): Promise<void> {
    // On every write of the product: queued until commit (one round trip with the change that raised it).
    await this.db.insertAtCommit(rc, 'outbox_events', this.row(event));
  }

  /** Many events, queued as multi-row statements (bulk writes). */
  async insertMany(rc: RequestContext, events: PlatformEvent[]): Promise<void> {
    const batch = this.db.dialect.rowsPerInsert;
    for (let i = 0; i < events.length; i += batch) {
      await this.db.writeAtCommit(rc, { table: 'outbox_events', rows: events.slice(i, i + batch).map((e) => this.row(e)) });
    }
  }

  private row(event: PlatformEvent) {
    return {
      tenant_id: event.tenantId ?? '',
      id: event.id,
      name: event.name,
      product: event.product,
      payload: this.db.dialect.toJson(event.payload),
      occurred_at: event.occurredAt,
    };
  }

  /** Events of one tenant by id (the dispatcher builds envelopes from them). */
  async getMany(rc: RequestContext, ids: string[]): Promise<PlatformEvent[]> {
    if (!ids.length) return [];
    const rows = await this.db.sql(rc).run(this.db.query('outbox_events').where({ tenant_id: rc.tenantId ?? '' }).whereIn('id', ids));
    return rows.map((row: Record<string, any>) => ({
      id: row.id,
      name: row.name,
      tenantId: row.tenant_id === '' ? null : row.tenant_id,
      product: row.product ?? null,
      occurredAt: row.occurred_at,
      payload: this.db.dialect.fromJson<Record<string, unknown>>(row.payload),
    }));
  }
}
