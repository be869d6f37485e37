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

  /**
   * Claims up to `limit` deadlines due at `now`, of every tenant, oldest first, until `until` (one statement,
   * committed at once): each row's due_at moves to the lease and its attempts go up by one, so a row is claimed by
   * one process (on PostgreSQL concurrent claimers skip each other's rows; a row another claimed meanwhile is no
   * longer due). Returns the claimed rows as they are now (due at `until`).
   */
  async claimDue(now: string, until: string, limit: number): Promise<Deadline[]> {
    const skipLocked = this.db.dialect.name === 'postgres' ? ' FOR UPDATE SKIP LOCKED' : '';
    const rows = await this.db.sql(null).rows<Row>(
      'UPDATE erp_payment_deadlines SET due_at = ?, attempts = attempts + 1 WHERE due_at <= ? AND (tenant_id, order_id) IN '
      + `(SELECT tenant_id, order_id FROM erp_payment_deadlines WHERE due_at <= ? ORDER BY due_at LIMIT ?${skipLocked}) `
      + 'RETURNING tenant_id, order_id, stage, due_at, attempts',
      [until, now, now, limit]);
    return rows.map((r) => ({ tenantId: r.tenant_id, orderId: r.order_id, stage: r.stage, dueAt: r.due_at, attempts: Number(r.attempts) }));
  }

  /** Moves a claimed deadline to `stage`, due at `dueAt` with `attempts` made (in rc's transaction when there is one). */
  async move(rc: RequestContext, deadline: Deadline, stage: DeadlineStage, dueAt: string, attempts: number): Promise<void> {
    await this.db.sql(rc).run(this.db.query('erp_payment_deadlines').where({ tenant_id: deadline.tenantId, order_id: deadline.orderId })
      .update({ stage, due_at: dueAt, attempts }));
  }

  /** Moves claimed deadlines of rc's tenant to `stage`, due at `dueAt` with `attempts` made (one statement, in rc's transaction). */
  async moveMany(rc: RequestContext, orderIds: readonly string[], stage: DeadlineStage, dueAt: string, attempts: number): Promise<void> {
    if (!orderIds.length) return;
    await this.db.sql(rc).run(this.db.query('erp_payment_deadlines').where({ tenant_id: rc.tenantId }).whereIn('order_id', [...orderIds])
      .update({ stage, due_at: dueAt, attempts }));
  }

  /** Drops deadlines of rc's tenant (one statement, in rc's transaction). */
  async removeMany(rc: RequestContext, orderIds: readonly string[]): Promise<void> {
    if (!orderIds.length) return;
    await this.db.sql(rc).run(this.db.query('erp_payment_deadlines').where({ tenant_id: rc.tenantId }).whereIn('order_id', [...orderIds]).delete());
  }

  async remove(rc: RequestContext, deadline: Deadline): Promise<void> {
    await this.db.sql(rc).run(this.db.query('erp_payment_deadlines').where({ tenant_id: deadline.tenantId, order_id: deadline.orderId }).delete());
  }
}
