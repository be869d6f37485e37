import type { PackContext, RequestContext } from '../../core/pack-api.js';

type Database = PackContext['db'];

/** What a row of erp_payment_deadlines is waiting for (migrations/0544-erp-payment-deadlines.ts). */
export type DeadlineStage = 'payment' | 'intent_cancel';

/** A deadline as the sweep reads it. */
export interface Deadline {
  tenantId: string;
  orderId: string;
  stage: DeadlineStage;
  dueAt: string;
  attempts: number;
}

interface Row {
  tenant_id: string;
  order_id: string;
  stage: DeadlineStage;
  due_at: string;
  attempts: number | string;
}

/** SQL of erp_payment_deadlines: the deadlines of unpaid orders and the PaymentIntents left to cancel. */
export class PaymentDeadlinesRepository {
  constructor(private readonly db: Database) {}

  /** The deadline of an order placed in rc's transaction (queued until it commits, like its outbox rows). */
  add(rc: RequestContext, orderId: string, dueAt: string): Promise<void> {
    return this.db.insertAtCommit(rc, 'erp_payment_deadlines', { tenant_id: rc.tenantId, order_id: orderId, stage: 'payment', due_at: dueAt, attempts: 0 });
  }

  /** Up to `limit` deadlines due at `now`, of every tenant, oldest first: a range of the due_at index. */
  async due(now: string, limit: number): Promise<Deadline[]> {
    const rows = await this.db.sql(null).rows<Row>(
      'SELECT tenant_id, order_id, stage, due_at, attempts FROM erp_payment_deadlines WHERE due_at <= ? ORDER BY due_at LIMIT ?', [now, limit]);
    return rows.map((r) => ({ tenantId: r.tenant_id, orderId: r.order_id, stage: r.stage, dueAt: r.due_at, attempts: Number(r.attempts) }));
  }

  /**
   * Claims a due deadline until `until` (one statement, committed at once): its due_at moves on only when it is
   * still the one read, so of several processes that read it one claims it. False when another got there first.
   */
  async claim(deadline: Deadline, until: string): Promise<boolean> {
    const rows = await this.db.sql(null).rows(
      'UPDATE erp_payment_deadlines SET due_at = ?, attempts = attempts + 1 WHERE tenant_id = ? AND order_id = ? AND due_at = ? AND attempts = ? RETURNING order_id',
      [until, deadline.tenantId, deadline.orderId, deadline.dueAt, deadline.attempts]);
    return rows.length > 0;
  }

  /** Moves a claimed deadline to `stage`, due at `dueAt` with `attempts` made (in rc's transaction when there is one). */
  async move(rc: RequestContext, deadline: Deadline, stage: DeadlineStage, dueAt: string, attempts: number): Promise<void> {
    await this.db.sql(rc).run(this.db.query('erp_payment_deadlines').where({ tenant_id: deadline.tenantId, order_id: deadline.orderId })
      .update({ stage, due_at: dueAt, attempts }));
  }

  async remove(rc: RequestContext, deadline: Deadline): Promise<void> {
    await this.db.sql(rc).run(this.db.query('erp_payment_deadlines').where({ tenant_id: deadline.tenantId, order_id: deadline.orderId }).delete());
  }
}
