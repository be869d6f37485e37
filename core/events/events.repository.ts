import type { Database } from '../db/database.js';
import type { RequestContext } from '../kernel/request-context.js';
import type { PlatformEvent } from './event.js';

/** The outbox: events written in the same transaction as the change that raised them. */
export class EventsRepository {
  constructor(private readonly db: Database) {}

  async insert(rc: RequestContext, event: PlatformEvent): Promise<void> {
    await this.db.conn(rc)('outbox_events').insert({
      tenant_id: event.tenantId ?? '',
      id: event.id,
      name: event.name,
      product: event.product,
      payload: this.db.dialect.toJson(event.payload),
      occurred_at: event.occurredAt,
    });
  }
}
