import type { PackContext, RequestContext } from '../../core/pack-api.js';

/** SQL of crm_ticket_counters (packs/crm/migrations/0501-crm-ticket-counters.ts). */
export class TicketNumbersRepository {
  constructor(private readonly db: PackContext['db']) {}

  /**
   * Takes the tenant's next ticket number of `year` by one upsert, inside the ticket's transaction: the
   * counter row stays locked until that transaction ends, so concurrent creations get consecutive numbers,
   * and a creation that rolls back gives its number back.
   */
  async next(rc: RequestContext, year: number): Promise<number> {
    if (!rc.trx) throw new Error('TicketNumbersRepository.next runs inside the ticket\'s transaction');
    const rows = await this.db.sql(rc).rows<{ last_number: number | string }>(
      'INSERT INTO crm_ticket_counters (tenant_id, year, last_number) VALUES (?, ?, 1) '
      + 'ON CONFLICT (tenant_id, year) DO UPDATE SET last_number = crm_ticket_counters.last_number + 1 RETURNING last_number',
      [rc.tenantId, year]);
    return Number(rows[0].last_number);
  }
}
