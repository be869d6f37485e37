import type Stripe from 'stripe';
import { Conflict, Forbidden, newId, nowIso, ROLE_RANK, UpstreamFailed, ValidationFailed, type PackContext, type RequestContext } from '../../core/pack-api.js';
import { RefundExceedsPayment } from './erp.errors.js';
import { keptCents, orderUnits, pendingRefunds, refundedTotals, refundItems, settledRefund, type Refund, type SkuUnits } from './order-parts.js';
import { checkCancellable, type Order, type OrdersService, type PendingRefund } from './orders.service.js';
import type { PaymentProvidersService } from './payment-providers.service.js';
import type { RefundOutcome, StripePayments } from './stripe-payments.js';

export interface RefundInput {
  amountCents?: number;
  items?: SkuUnits[];
  restock?: boolean;
  reason?: string;
}

/** A refund's answer: 201 when it is recorded (a manual payment) or Stripe made it, 202 while it is pending at Stripe. */
export interface RefundAnswer {
  status: 201 | 202;
  refund: Refund;
  order: Order;
}

/**
 * Refunds of an order's payments and the cancellation of a paid order (CONTRACT 15.4). A manual payment's
 * refund is recorded at once. A Stripe payment's refund is written `pending` first (its units counted as
 * refunded, its amount held), then made at Stripe after that commits, the refund's id as Stripe's idempotency
 * key; Stripe's answer settles it, an error answer fails it (nothing counted, nothing restocked), no answer
 * leaves it pending for the webhooks (`charge.refunded`, `refund.updated`, `refund.failed`) to settle.
 */
export class RefundsService {
  constructor(
    private readonly pack: PackContext,
    private readonly orders: OrdersService,
    private readonly providers: PaymentProvidersService,
    private readonly stripe: StripePayments,
  ) {}

  async create(rc: RequestContext, ref: string, input: RefundInput): Promise<RefundAnswer> {
    if (input.amountCents === undefined && input.items === undefined) {
      throw ValidationFailed('A refund names an amountCents or items', [{ path: '/amountCents', message: 'amountCents or items is required' }]);
    }
    if (input.restock && input.items === undefined) {
      throw ValidationFailed('restock puts items back: name them', [{ path: '/restock', message: 'needs items' }]);
    }
    const order = await this.orders.get(rc, ref);
    const { order: written, refund } = await this.write(rc, order.id, (current) => {
      if (input.restock && current.status === 'cancelled') {
        throw Conflict('The stock of a cancelled order went back at its cancellation', [{ path: '/restock', message: 'the order is cancelled' }]);
      }
      const items = refundItems(current, input.items ? orderUnits(current, input.items) : []);
      const amountCents = input.amountCents ?? items.reduce((sum, i) => sum + i.amountCents, 0);
      return { amountCents, items, restock: input.restock ?? false, reason: input.reason ?? null };
    });
    if (refund.status === 'succeeded') return { status: 201, refund, order: written };
    const settled = await this.atStripe(rc, written, refund);
    if (settled.refund.status === 'failed') throw UpstreamFailed(`Stripe refused the refund ${refund.id}: it is failed, nothing was refunded`);
    return settled;
  }

  /**
   * Cancels an order (PATCH status cancelled). A `paid` one needs an admin (else 403). Money the order keeps is
   * refunded first (also a placed order's part payments): a manual payment in the same transaction as the
   * cancellation, a card payment at Stripe (the refund written pending first); when Stripe refuses or does not
   * answer, 502 and the order stays as it was. A fulfilled or partly fulfilled order: 409 invalid_transition; a
   * refund still pending: 409 conflict.
   */
  async cancel(rc: RequestContext, ref: string): Promise<Order> {
    const order = await this.orders.get(rc, ref);
    checkCancellable(order);
    if (pendingRefunds(order).length) throw Conflict('A refund of this order is pending at Stripe: cancel the order once it has settled');
    const principal = rc.principal;
    if (order.status === 'paid' && !principal?.isSuperadmin && ROLE_RANK[principal?.role ?? 'viewer'] < ROLE_RANK.admin) {
      throw Forbidden('Cancelling an order that was paid refunds it: this needs the admin role');
    }
    if (keptCents(order) === 0) return this.orders.cancel(rc, order.id);
    if (!paidByStripe(order)) {
      return this.orders.cancel(rc, order.id, (current) => {
        const refund: Refund = { ...refundOf({ amountCents: keptCents(current), items: [], restock: false, reason: 'cancellation' }), status: 'succeeded' };
        return { refunds: [...(current.refunds ?? []), refund], ...refundedTotals(current, (current.refundedCents ?? 0) + refund.amountCents) };
      });
    }
    const { order: written, refund } = await this.write(rc, order.id, (current) => {
      checkCancellable(current);
      const amountCents = keptCents(current);
      if (amountCents === 0 || pendingRefunds(current).length) throw Conflict('The order\'s payments changed meanwhile: cancel it again');
      return { amountCents, items: [], restock: false, reason: 'cancellation' };
    });
    const outcome = await this.makeAtStripe(rc, written, refund);
    if (outcome.status !== 'succeeded') {
      await this.settle(rc, written, refund, outcome);
      throw UpstreamFailed(outcome.status === 'unanswered' || outcome.status === 'pending'
        ? `Stripe has not made the refund ${refund.id} yet: the order is not cancelled; cancel it again once the refund has settled`
        : `Stripe refused the refund ${refund.id}: the order is not cancelled`);
    }
    try {
      return await this.orders.cancel(rc, order.id, (current) => settledRefund(current, refund.id, { status: 'succeeded', providerReference: outcome.providerReference })?.patch ?? {});
    } catch (err) {
      // Shipped meanwhile: the money went back all the same.
      await this.orders.settleRefund(rc, order.id, refund.id, { status: 'succeeded', providerReference: outcome.providerReference });
      throw err;
    }
  }

  /** Makes a refund written pending at Stripe and settles it by the answer (the webhook's refund of a late payment too). */
  async atStripe(rc: RequestContext, order: Order, refund: Refund): Promise<RefundAnswer> {
    return this.settle(rc, order, refund, await this.makeAtStripe(rc, order, refund));
  }

  /** A pending refund written by the checkout's webhook (money kept for a cancelled order), made at Stripe. */
  async makePending(rc: RequestContext, pending: PendingRefund): Promise<void> {
    const order = await this.orders.get(rc, pending.orderId);
    const refund = (order.refunds ?? []).find((r) => r.id === pending.refundId);
    if (refund?.status === 'pending') await this.atStripe(rc, order, refund);
  }

  /**
   * Settles pending refunds from a signed webhook event, in its transaction: `refund.updated` and
   * `refund.failed` carry a refund, `charge.refunded` its charge with the refunds listed. The refund is found
   * by Stripe's refund id, else by `metadata.refundId`; succeeded or failed settle it, other states wait.
   */
  async settleFromWebhook(rc: RequestContext, type: string, object: Stripe.Refund | Stripe.Charge): Promise<void> {
    const refunds = type === 'charge.refunded' ? ((object as Stripe.Charge).refunds?.data ?? []) : [object as Stripe.Refund];
    for (const made of refunds) {
      const status = type === 'refund.failed' || made.status === 'failed' || made.status === 'canceled' ? 'failed' : made.status === 'succeeded' ? 'succeeded' : null;
      if (!status) continue;
      const intent = typeof made.payment_intent === 'string' ? made.payment_intent : made.payment_intent?.id;
      const order = (intent ? await this.orders.byPaymentIntent(rc, intent) : null)
        ?? (made.metadata?.orderId ? await this.pack.records.find(rc, 'erp', 'order', made.metadata.orderId) : null);
      const mine = order?.refunds?.find((r) => r.providerReference === made.id) ?? order?.refunds?.find((r) => r.id === made.metadata?.refundId);
      if (order && mine) await this.orders.settleRefund(rc, order.id, mine.id, { status, providerReference: made.id });
    }
  }

  /**
   * Writes a refund of the order under its row lock (the units refunded once, the sum within what was paid:
   * 409 refund_exceeds_payment): a card payment's `pending`, a manual payment's `succeeded` with what follows
   * (restock, `erp.order.refunded`), in one transaction.
   */
  private async write(rc: RequestContext, orderId: string, build: (current: Order) => RefundFields): Promise<{ order: Order; refund: Refund }> {
    return this.pack.db.transaction(rc, async (rc) => {
      let refund: Refund | undefined;
      const order = await this.pack.records.modify(rc, 'erp', 'order', orderId, (current) => {
        const fields = build(current);
        const kept = keptCents(current);
        if (fields.amountCents > kept) {
          throw RefundExceedsPayment(`${kept} cents of the payments are left to refund`, [{ path: '/amountCents', message: `must be at most ${kept}`, available: kept }]);
        }
        // A zero amount (units of a free line) has nothing to make at Stripe.
        refund = { ...refundOf(fields), status: paidByStripe(current) && fields.amountCents > 0 ? 'pending' : 'succeeded' };
        const refunds = [...(current.refunds ?? []), refund];
        return refund.status === 'pending' ? { refunds } : { refunds, ...refundedTotals(current, (current.refundedCents ?? 0) + refund.amountCents) };
      });
      if (refund!.status === 'succeeded') await this.orders.refunded(rc, order, refund!);
      // The administration's audit entry (CONTRACT 16.4) beside the order's own record.updated.
      await this.pack.audit.add(rc, { action: 'order.refunded', target: `erp.order/${orderId}` });
      return { order, refund: refund! };
    });
  }

  /** Settles a pending refund by Stripe's answer: succeeded 201, failed (refused), or pending 202 with Stripe's id when it gave one. */
  private async settle(rc: RequestContext, order: Order, refund: Refund, outcome: RefundOutcome): Promise<RefundAnswer> {
    if (outcome.status === 'succeeded' || outcome.status === 'failed' || outcome.status === 'refused') {
      const status = outcome.status === 'succeeded' ? 'succeeded' : 'failed';
      const settled = await this.orders.settleRefund(rc, order.id, refund.id, { status, providerReference: outcome.providerReference });
      if (settled) return { status: 201, ...settled };
    } else if (outcome.providerReference) {
      const written = await this.pack.records.modify(rc, 'erp', 'order', order.id, (current) => {
        const refunds = (current.refunds ?? []).map((r) => (r.id === refund.id && r.status === 'pending' ? { ...r, providerReference: outcome.providerReference } : r));
        return { refunds };
      });
      return { status: 202, order: written, refund: written.refunds!.find((r) => r.id === refund.id)! };
    }
    // Not answered, or settled meanwhile by a webhook: as the order holds it now.
    const now = await this.orders.get(rc, order.id);
    const held = now.refunds!.find((r) => r.id === refund.id)!;
    return { status: held.status === 'pending' ? 202 : 201, order: now, refund: held };
  }

  /** The refund made at Stripe, outside any transaction. The keys stay for the orders that use them (a DELETE only disables Stripe): without any, it is refused. */
  private async makeAtStripe(rc: RequestContext, order: Order, refund: Refund): Promise<RefundOutcome> {
    const keys = await this.providers.stripeKeys(rc);
    if (!keys) return { status: 'refused', providerReference: null };
    return this.stripe.refund(keys.secretKey, { orderId: order.id, refundId: refund.id, paymentIntentId: order.paymentIntentId!, amountCents: refund.amountCents }, rc.tenantId!);
  }
}

/** What a refund's writer decides; the rest (id, status, reference, time) is filled in. */
type RefundFields = Pick<Refund, 'amountCents' | 'items' | 'restock' | 'reason'>;

function refundOf(fields: RefundFields): Omit<Refund, 'status'> {
  return { id: newId(), ...fields, providerReference: null, createdAt: nowIso() };
}

/** Whether the order's money came through Stripe (its refunds are made there). */
function paidByStripe(order: Order): boolean {
  return Boolean(order.paymentIntentId) && (order.payments ?? []).some((p) => p.provider === 'stripe');
}
