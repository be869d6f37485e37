import { systemContext, type PackContext, type RequestContext } from '../../core/pack-api.js';
import type { OrdersService } from './orders.service.js';
import { PaymentDeadlinesRepository, type Deadline } from './payment-deadlines.repository.js';
import { shortestTimeoutMs } from './payment-deadline.js';
import type { PaymentProvidersService } from './payment-providers.service.js';
import type { StripePayments } from './stripe-payments.js';

/** How long a claim holds a deadline: a process that dies holding one leaves it to a run after this. */
const LEASE_MS = 60_000;
/** Deadlines claimed per statement. */
const BATCH = 200;
/** Orders of one tenant cancelled in one transaction (their stock back in a change per product). */
const ORDERS_PER_TRANSACTION = 50;
/** Transactions of cancellations, and PaymentIntents cancelled (each call outside any transaction), side by side in one process. */
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
 * (payment-deadlines.repository.ts); a run claims the due ones across tenants on their index, a batch at a time
 * by one conditional update (the lease: each row is claimed by one process), and cancels their orders a tenant's
 * batch in one transaction through the orders service (each under its row lock, and only while it still waits
 * for its payment: a webhook, an editor or another process that got there first leaves nothing to do, so the
 * stock goes back once; the stock of the batch goes back in a change per product). A card order's PaymentIntent
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

  /**
   * Every deadline due now, a batch at a time: a batch is claimed by one statement (a claimed deadline is due again
   * only after its lease), its orders cancelled a tenant at a time in one transaction each, then the PaymentIntents
   * of the card orders among them (and the intent deadlines claimed) cancelled at Stripe, outside any transaction.
   */
  private async sweep(): Promise<SweepResult> {
    const result: SweepResult = { cancelled: 0, intentsCancelled: 0 };
    const now = new Date().toISOString();
    for (;;) {
      const lease = new Date(Date.now() + LEASE_MS).toISOString();
      const claimed = await this.repository.claimDue(now, lease, BATCH);
      const intents = claimed.filter((d) => d.stage === 'intent_cancel');
      const payments = new Map<string, Deadline[]>();
      for (const d of claimed) if (d.stage === 'payment') payments.set(d.tenantId, [...(payments.get(d.tenantId) ?? []), d]);
      const chunks = [...payments.values()].flatMap((deadlines) =>
        Array.from({ length: Math.ceil(deadlines.length / ORDERS_PER_TRANSACTION) }, (_, i) => deadlines.slice(i * ORDERS_PER_TRANSACTION, (i + 1) * ORDERS_PER_TRANSACTION)));
      let next = 0;
      await Promise.all(Array.from({ length: Math.min(WORKERS, chunks.length) }, async () => {
        while (next < chunks.length) intents.push(...(await this.cancelOrders(chunks[next++], result)));
      }));
      await this.cancelIntents(intents, result);
      if (claimed.length < BATCH) break;
    }
    if (result.cancelled || result.intentsCancelled) this.pack.logger.info({ ...result }, 'payment timeout');
    return result;
  }

  /**
   * Cancels the orders of claimed payment deadlines of one tenant in one transaction with the deadlines' next step:
   * a cancelled card order's row moves on to the cancellation of its PaymentIntent (returned, to be done next);
   * any other outcome (cancelled, paid or gone) drops it. When the batch fails, each order is tried alone, so
   * one order that cannot be cancelled holds back no other; a failure of one is logged and its deadline comes
   * due again after its lease.
   */
  private async cancelOrders(deadlines: Deadline[], result: SweepResult): Promise<Deadline[]> {
    const rc = systemContext(deadlines[0].tenantId, this.pack.logger);
    try {
      const { cards, cancelled } = await this.orders.expireMany(rc, deadlines.map((d) => d.orderId), async (rc, outcome) => {
        const cards = deadlines.filter((d) => outcome.get(d.orderId)?.paymentMethod === 'stripe_card');
        const moved = new Set(cards.map((d) => d.orderId));
        await this.repository.moveMany(rc, [...moved], 'intent_cancel', deadlines[0].dueAt, 0);
        await this.repository.removeMany(rc, deadlines.filter((d) => !moved.has(d.orderId)).map((d) => d.orderId));
        return { cards, cancelled: [...outcome.values()].filter(Boolean).length };
      });
      result.cancelled += cancelled;
      return cards.map((d) => ({ ...d, stage: 'intent_cancel' as const, attempts: 1 }));
    } catch (err) {
      if (deadlines.length === 1) {
        this.pack.logger.error({ err, tenantId: rc.tenantId, orderId: deadlines[0].orderId, stage: 'payment' }, 'a payment deadline failed: it comes due again');
        return [];
      }
      const intents: Deadline[] = [];
      for (const deadline of deadlines) intents.push(...(await this.cancelOrders([deadline], result)));
      return intents;
    }
  }

  /**
   * The cancellations at Stripe of claimed intent deadlines, a tenant's keys read once (a tenant without them
   * has nothing to cancel: its rows go in one statement), WORKERS calls side by side; a failure is logged and
   * the deadline comes due again after its lease.
   */
  private async cancelIntents(deadlines: Deadline[], result: SweepResult): Promise<void> {
    const byTenant = new Map<string, Deadline[]>();
    for (const d of deadlines) byTenant.set(d.tenantId, [...(byTenant.get(d.tenantId) ?? []), d]);
    for (const [tenantId, list] of byTenant) {
      const rc = systemContext(tenantId, this.pack.logger);
      const failed = (err: unknown, deadline?: Deadline) => this.pack.logger.error(
        { err, tenantId, orderId: deadline?.orderId, stage: 'intent_cancel' }, 'a payment deadline failed: it comes due again');
      const keys = await this.providers.stripeKeys(rc).catch((err: unknown) => {
        failed(err);
        return undefined;
      });
      if (keys === undefined) continue;
      if (!keys) {
        await this.repository.removeMany(rc, list.map((d) => d.orderId)).catch(failed);
        continue;
      }
      let next = 0;
      await Promise.all(Array.from({ length: Math.min(WORKERS, list.length) }, async () => {
        while (next < list.length) {
          const deadline = list[next++];
          try {
            if (await this.cancelIntent(rc, deadline, keys.secretKey)) result.intentsCancelled += 1;
          } catch (err) {
            failed(err, deadline);
          }
        }
      }));
    }
  }

  /**
   * Cancels a cancelled card order's PaymentIntent at Stripe (outside any transaction). Done, or refused for good
   * (Stripe's 4xx: it succeeded or was cancelled meanwhile, and a payment that comes in is refunded by the
   * webhook), the row goes; no answer, or no PaymentIntent yet (the checkout is still creating it): due again later.
   */
  private async cancelIntent(rc: RequestContext, deadline: Deadline, secretKey: string): Promise<boolean> {
    const order = await this.pack.records.find(rc, 'erp', 'order', deadline.orderId);
    if (!order) {
      await this.repository.remove(rc, deadline);
      return false;
    }
    let problem: unknown = 'no PaymentIntent yet';
    if (order.paymentIntentId) {
      try {
        await this.stripe.cancelIntent(secretKey, order.paymentIntentId);
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
