import { AppError, InvalidTransition, nowIso, ValidationFailed, VersionMismatch } from '../../core/pack-api.js';
import type { DataRecord, PackContext, RequestContext } from '../../core/pack-api.js';
import { dateIn, endOfBusinessDay, knownTimeZone } from './business-days.js';
import { TicketNumbersRepository } from './ticket-numbers.repository.js';
import { canMove } from './ticket-status.js';

/** Business days (Monday to Friday) a ticket has until its SLA is due, the day of creation not counted. */
export const SLA_BUSINESS_DAYS = 15;

export interface TicketInput {
  type: 'petition' | 'complaint' | 'claim' | 'suggestion';
  subject: string;
  description: string;
  customerRef: string;
  contactEmail?: string;
  dealId?: string;
  priority?: 'low' | 'normal' | 'high' | 'urgent';
}

export interface TicketChange {
  status?: string;
  priority?: string;
  assigneeId?: string | null;
}

/** A lost race on the ticket's version is tried again this often before it is answered 409. */
const UPDATE_ATTEMPTS = 5;

/**
 * Support tickets, PQRS (CONTRACT 11.5): `crm.ticket` records, numbered per tenant and year without gaps,
 * with the SLA due date in the tenant's timezone and a status machine whose every step is kept in `history`.
 * The data API only reads them (the namespace declares `ticket` sealed).
 */
export class SupportTicketsService {
  private readonly numbers: TicketNumbersRepository;

  constructor(private readonly pack: PackContext) {
    this.numbers = new TicketNumbersRepository(pack.db);
  }

  async open(rc: RequestContext, input: TicketInput): Promise<DataRecord> {
    if (input.dealId !== undefined && !(await this.pack.records.find(rc, 'crm', 'deal', input.dealId))) {
      throw ValidationFailed('dealId is not a deal of this tenant', [{ path: '/dealId', message: 'must be the id of a deal of this tenant' }]);
    }
    const timeZone = await this.timeZone(rc);
    const now = new Date();
    const at = now.toISOString();
    return this.pack.db.transaction(rc, async (rc) => {
      const year = dateIn(now, timeZone).year;
      const sequence = await this.numbers.next(rc, year);
      return this.pack.records.create(rc, 'crm', 'ticket', {
        number: `PQRS-${year}-${String(sequence).padStart(6, '0')}`,
        type: input.type,
        status: 'new',
        subject: input.subject,
        description: input.description,
        customerRef: input.customerRef,
        contactEmail: input.contactEmail ?? null,
        dealId: input.dealId ?? null,
        priority: input.priority ?? 'normal',
        assigneeId: null,
        slaDueAt: endOfBusinessDay(now, SLA_BUSINESS_DAYS, timeZone).toISOString(),
        history: [{ at, by: by(rc), from: null, to: 'new' }],
      });
    });
  }

  /**
   * Changes status (along the machine, kept in history), priority or assignee. The write is conditional on
   * the version read, so a concurrent change is never overwritten: the change is read and checked again.
   */
  async change(rc: RequestContext, id: string, change: TicketChange, ifMatch: string | null): Promise<DataRecord> {
    for (let attempt = 1; ; attempt++) {
      const current = await this.pack.records.get(rc, 'crm', 'ticket', id);
      const patch: Record<string, unknown> = {};
      if (change.status !== undefined) {
        const from = String(current.status);
        if (!canMove(from, change.status)) throw InvalidTransition({ from, to: change.status });
        patch.status = change.status;
        patch.history = [...(current.history as unknown[]), { at: nowIso(), by: by(rc), from, to: change.status }];
      }
      if (change.priority !== undefined) patch.priority = change.priority;
      if (change.assigneeId !== undefined) patch.assigneeId = change.assigneeId;
      try {
        // The client's If-Match, else the version just read: a change in between fails instead of being lost.
        return await this.pack.records.update(rc, 'crm', 'ticket', id, patch, { ifMatch: ifMatch ?? String(current.version) });
      } catch (err) {
        const lostRace = err instanceof AppError && (err.code === VersionMismatch.code || err.code === 'conflict');
        if (ifMatch !== null || !lostRace || attempt >= UPDATE_ATTEMPTS) throw err;
      }
    }
  }

  /** The tenant's site-config timezone when the time zone database knows it, else UTC. */
  private async timeZone(rc: RequestContext): Promise<string> {
    const siteConfig = await this.pack.use('tenant-admin.siteProfile').getSiteConfig(rc, rc.tenantId!);
    return knownTimeZone(siteConfig.timezone);
  }
}

function by(rc: RequestContext): string {
  return rc.principal?.userId ?? 'system';
}
