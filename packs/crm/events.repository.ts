import type { PackContext, RequestContext } from '../../core/pack-api.js';

/** A first-party event as the API shows it. */
export interface CrmEvent {
  id: string;
  eventId: string | null;
  eventType: string;
  customerRef: string;
  eventData: Record<string, unknown>;
  occurredAt: string;
  receivedAt: string;
  bot: boolean;
}

export interface EventFilter {
  customerRef?: string;
  eventType?: string;
  /** Inclusive bounds of occurredAt (ISO 8601 UTC). */
  from?: string;
  to?: string;
}

interface EventRow {
  id: string;
  event_id: string | null;
  event_type: string;
  customer_ref: string;
  event_data: unknown;
  occurred_at: string;
  received_at: string;
  bot: boolean | number;
}

const COLUMNS = 'id, event_id, event_type, customer_ref, event_data, occurred_at, received_at, bot';

/** SQL of the crm_events table (packs/crm/migrations/0500-crm-events.ts). */
export class EventsRepository {
  constructor(private readonly db: PackContext['db']) {}

  /**
   * Inserts the event unless the tenant has one with the same `eventId` (the unique constraint decides,
   * also between concurrent requests); returns whether it was inserted. Queued like every small write, so
   * it goes through group commit. Call it outside a transaction (it needs the outcome at once).
   */
  async insert(rc: RequestContext, event: CrmEvent): Promise<boolean> {
    if (rc.trx) throw new Error('EventsRepository.insert runs on its own, outside a transaction');
    let inserted = 0;
    await this.db.writeAtCommit(rc, {
      table: 'crm_events',
      rows: [{
        tenant_id: rc.tenantId, id: event.id, event_id: event.eventId, event_type: event.eventType, customer_ref: event.customerRef,
        event_data: this.db.dialect.toJson(event.eventData), occurred_at: event.occurredAt, received_at: event.receivedAt, bot: event.bot,
      }],
      skipConflictsOn: ['tenant_id', 'event_id'],
      done: (changes) => { inserted = changes; },
    });
    return inserted > 0;
  }

  /** The id of the tenant's event with this client `eventId`, if any. */
  async idOfEventId(rc: RequestContext, eventId: string): Promise<string | null> {
    const rows = await this.db.sql(rc).rows<{ id: string }>(
      'SELECT id FROM crm_events WHERE tenant_id = ? AND event_id = ?', [rc.tenantId, eventId]);
    return rows[0]?.id ?? null;
  }

  /** Newest occurredAt first (then newest id); `total` only when asked for. */
  async list(rc: RequestContext, filter: EventFilter, page: { limit: number; offset: number; count: boolean }): Promise<{ items: CrmEvent[]; total: number | null; hasMore: boolean }> {
    const { where, bindings } = whereClause(rc, filter);
    const rows = await this.db.sql(rc).rows<EventRow>(
      `SELECT ${COLUMNS} FROM crm_events WHERE ${where} ORDER BY occurred_at DESC, id DESC LIMIT ? OFFSET ?`,
      [...bindings, page.limit + 1, page.offset]);
    let total: number | null = null;
    if (page.count) {
      const counted = await this.db.sql(rc).rows<{ n: number | string }>(`SELECT count(*) AS n FROM crm_events WHERE ${where}`, bindings);
      total = Number(counted[0].n);
    }
    return { items: rows.slice(0, page.limit).map((r) => this.toEvent(r)), total, hasMore: rows.length > page.limit };
  }

  /** Deletes every event of one customer; returns how many. */
  async deleteCustomer(rc: RequestContext, customerRef: string): Promise<number> {
    return Number(await this.db.sql(rc).run(this.db.query('crm_events').where({ tenant_id: rc.tenantId, customer_ref: customerRef }).delete()));
  }

  private toEvent(row: EventRow): CrmEvent {
    return {
      id: row.id,
      eventId: row.event_id,
      eventType: row.event_type,
      customerRef: row.customer_ref,
      eventData: this.db.dialect.fromJson(row.event_data),
      occurredAt: row.occurred_at,
      receivedAt: row.received_at,
      bot: row.bot === true || row.bot === 1,
    };
  }
}

function whereClause(rc: RequestContext, filter: EventFilter): { where: string; bindings: unknown[] } {
  const parts = ['tenant_id = ?'];
  const bindings: unknown[] = [rc.tenantId];
  if (filter.customerRef !== undefined) { parts.push('customer_ref = ?'); bindings.push(filter.customerRef); }
  if (filter.eventType !== undefined) { parts.push('event_type = ?'); bindings.push(filter.eventType); }
  if (filter.from !== undefined) { parts.push('occurred_at >= ?'); bindings.push(filter.from); }
  if (filter.to !== undefined) { parts.push('occurred_at <= ?'); bindings.push(filter.to); }
  return { where: parts.join(' AND '), bindings };
}
