import { systemContext, type PackContext, type RequestContext } from '../../core/pack-api.js';
import type { Order, OrdersService } from './orders.service.js';
import { PaymentDeadlinesRepository, type Deadline } from './payment-deadlines.repository.js';
import { shortestTimeoutMs } from './payment-deadline.js';
import type { PaymentProvidersService } from './payment-providers.service.js';
import type { StripePayments } from './stripe-payments.js';

/** How long a claim holds a deadline: a process that dies holding one leaves it to a run after this. */
const LEASE_MS = 60_000;
/** Deadlines read per statement. */
const BATCH = 200;
/** Deadlines handled side by side in one process (each in a transaction of its own). */
const WORKERS = 4;
/** The sweep runs at least this often (so an order is cancelled within 30 s of its deadline), at most every second. */
const MAX_EVERY_MS = 10_000;
const MIN_EVERY_MS = 1_000;
/**
 * A PaymentIntent's cancellation is tried this often at most, waiting three sweep periods (30 s), then twice as
 * long each time, at most an hour, between tries.
 */
const MAX_CANCEL_ATTEMPTS = 12;
const RETRY_PERIODS = 3;
const RETRY_MAX_MS = 3_600_000;

/** What one run did. */
export interface SweepResult {
  /** Orders cancelled for want of their payment (`payment_timeout`). */
  cancelled: number;
  /** PaymentIntents of cancelled card orders cancelled at Stripe. */
  intentsCancelled: number;
}

/**
 * The payment timeout (CONTRACT 15.3, 15.6): orders that waited too long for their payment are cancelled by the
 * service itself, in every process, each by one. The deadlines are rows written when the order is placed
 * (payment-deadlines.repository.ts); a run reads the due ones across tenants on their index, claims each by a
 * conditional update (the lease), and cancels its order in a transaction of its own through the orders service
 * (under the order's row lock, and only while it still waits for its payment: a webhook, an editor or another
 * process that got there first leaves nothing to do, so the stock goes back once). A card order's PaymentIntent
 * is cancelled at Stripe after that commit; a failure there is tried again later (the row stays, due later),
 * and never holds the cancellation back. Tenants whose `erp` module is off are swept too (their orders exist).
 */
export class PaymentTimeouts {
  private readonly repository: PaymentDeadlinesRepository;
  private readonly everyMs: number;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<SweepResult> | null = null;

  constructor(
    private readonly pack: PackContext,
    private readonly orders: OrdersService,
    private readonly providers: PaymentProvidersService,
    private readonly stripe: StripePayments,
  ) {
    this.repository = new PaymentDeadlinesRepository(pack.db);
    this.everyMs = Math.min(MAX_EVERY_MS, Math.max(MIN_EVERY_MS, Math.round(shortestTimeoutMs(pack.config.payments) / 4)));
  }

  /** Sweeps every `everyMs` (a run after the last one ends); the timer does not keep the process alive. */
  start(): void {
    const next = () => {
      this.timer = setTimeout(() => {
        void this.sweepOnce().catch((err: unknown) => this.pack.logger.error({ err }, 'the payment timeout sweep failed')).finally(() => {
          if (this.timer) next();
        });
      }, this.everyMs);
      this.timer.unref();
    };
    next();
  }

  /** Stops the timer and waits for the run under way. */
  async stop(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running?.catch(() => {});
  }

  /** One run now, or the run under way (operations, tests). */
  sweepOnce(): Promise<SweepResult> {
    this.running ??= this.sweep().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  /** Every deadline due now, a batch at a time; a claimed deadline is due again only after its lease. */
  private async sweep(): Promise<SweepResult> {
    const result: SweepResult = { cancelled: 0, intentsCancelled: 0 };
    const now = new Date().toISOString();
    for (;;) {
      const due = await this.repository.due(now, BATCH);
      let next = 0;
      await Promise.all(Array.from({ length: Math.min(WORKERS, due.length) }, async () => {
        while (next < due.length) await this.handle(due[next++], result);
      }));
      if (due.length < BATCH) break;
    }
    if (result.cancelled || result.intentsCancelled) this.pack.logger.info({ ...result }, 'payment timeout');
    return result;
  }

  /** One due deadline, when this process claims it; a failure is logged and the deadline comes due again after its lease. */
  private async handle(deadline: Deadline, result: SweepResult): Promise<void> {
    const lease = new Date(Date.now() + LEASE_MS).toISOString();
    if (!(await this.repository.claim(deadline, lease))) return;
    const claimed = { ...deadline, dueAt: lease, attempts: deadline.attempts + 1 };
    const rc = systemContext(deadline.tenantId, this.pack.logger);
    try {
      if (claimed.stage === 'payment') {
        const cancelled = await this.cancelOrder(rc, claimed);
        if (!cancelled) return;
        result.cancelled += 1;
        if (cancelled.paymentMethod !== 'stripe_card') return;
        claimed.attempts = 1;
      }
      if (await this.cancelIntent(rc, claimed)) result.intentsCancelled += 1;
    } catch (err) {
      this.pack.logger.error({ err, tenantId: deadline.tenantId, orderId: deadline.orderId, stage: deadline.stage }, 'a payment deadline failed: it comes due again');
    }
  }

  /**
   * Cancels the order of a due deadline in one transaction with the deadline's next step: a cancelled card order
   * keeps its row for the cancellation of its PaymentIntent; any other outcome (cancelled, paid or gone) drops it.
   */
  private cancelOrder(rc: RequestContext, deadline: Deadline): Promise<Order | null> {
    return this.pack.db.transaction(rc, async (rc) => {
      const cancelled = await this.orders.expire(rc, deadline.orderId).catch((err: { code?: string }) => {
        if (err.code === 'not_found') return null;
        throw err;
      });
      if (cancelled?.paymentMethod === 'stripe_card') await this.repository.move(rc, deadline, 'intent_cancel', deadline.dueAt, 0);
      else await this.repository.remove(rc, deadline);
      return cancelled;
    });
  }

  /**
   * Cancels a cancelled card order's PaymentIntent at Stripe (outside any transaction). Done, or refused for good
   * (Stripe's 4xx: it succeeded or was cancelled meanwhile, and a payment that comes in is refunded by the
   * webhook), the row goes; no answer, or no PaymentIntent yet (the checkout is still creating it): due again later.
   */
  private async cancelIntent(rc: RequestContext, deadline: Deadline): Promise<boolean> {
    const [order, keys] = await Promise.all([this.pack.records.find(rc, 'erp', 'order', deadline.orderId), this.providers.stripeKeys(rc)]);
    if (!order || !keys) {
      await this.repository.remove(rc, deadline);
      return false;
    }
    let problem: unknown = 'no PaymentIntent yet';
    if (order.paymentIntentId) {
      try {
        await this.stripe.cancelIntent(keys.secretKey, order.paymentIntentId);
        await this.repository.remove(rc, deadline);
        return true;
      } catch (err) {
        const status = (err as { statusCode?: number }).statusCode ?? 0;
        if (status >= 400 && status < 500 && status !== 429 && status !== 401 && status !== 403) {
          this.pack.logger.info({ err, orderId: order.id }, 'Stripe refused to cancel a PaymentIntent of a cancelled order: nothing left to cancel');
          await this.repository.remove(rc, deadline);
          return false;
        }
        problem = err;
      }
    }
    if (deadline.attempts >= MAX_CANCEL_ATTEMPTS) {
      this.pack.logger.error({ err: problem, orderId: order.id }, 'gave up cancelling the PaymentIntent of a cancelled order');
      await this.repository.remove(rc, deadline);
      return false;
    }
    const wait = Math.min(RETRY_MAX_MS, RETRY_PERIODS * this.everyMs * 2 ** (deadline.attempts - 1));
    this.pack.logger.warn({ err: problem, orderId: order.id, attempts: deadline.attempts }, 'cancelling a PaymentIntent failed: tried again later');
    await this.repository.move(rc, deadline, 'intent_cancel', new Date(Date.now() + wait).toISOString(), deadline.attempts);
    return false;
  }
}
