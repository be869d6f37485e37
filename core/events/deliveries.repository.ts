import type { Knex } from 'knex';
import type { Database } from '../db/database.js';
import { newId } from '../base/ids.js';
import { rawRows, skipLockedClause } from '../db/dialects/row-locking.js';
import type { RequestContext } from '../base/request-context.js';
import type { PlatformEvent } from './event.js';
import type { StoredMail } from './mail-seal.js';
import type { AttemptOutcome, Delivery, DeliveryAttempt, DeliveryStatus } from './delivery.js';

/** The key deliveries are grouped by for per-receiver concurrency: the connector, the pack handler, or `mail`. */
export const MAIL_KEY = 'mail';

export function deliveryKey(delivery: Delivery): string {
  return delivery.connectorId ?? delivery.handler ?? MAIL_KEY;
}

/** The columns of a queued webhook delivery, as the INSERT ... SELECTs of the fan-out fill them. */
const DELIVERY_COLUMNS = ['tenant_id', 'id', 'kind', 'connector_id', 'event_id', 'event_name', 'status', 'attempts', 'next_attempt_at', 'created_at', 'updated_at'];

/** Which due deliveries a claim may take (see DeliveriesRepository.claimDue). */
export interface ClaimFilter {
  /** Mail only, or everything but mail (mail has delivery slots of its own). */
  mail: boolean;
  /** Connector ids, pack handler keys (or `mail`) whose share of the slots is taken. */
  excludeKeys: string[];
  /** Tenants whose share of the slots is taken. */
  excludeTenants: string[];
}

/**
 * The outbox queue (webhook deliveries and mail jobs) and its attempt log. Tenant-scoped queries use
 * rc.tenantId; `claimDue` is the dispatcher's cross-tenant queue scan.
 */
export class DeliveriesRepository {
  /** queueWebhooks' SELECT, built once (the same text every time, so its prepared statement is found at once). */
  private readonly webhooksSelect: string;

  constructor(private readonly db: Database) {
    this.webhooksSelect = `SELECT c.tenant_id, hp_new_id(), 'webhook', c.id, CAST(? AS TEXT), CAST(? AS TEXT), 'pending', 0, CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS TEXT)
        FROM connectors c
        WHERE ${this.subscribes}`;
  }

  /**
   * Queues one webhook delivery per active connector of rc's tenant that subscribes to the event: its
   * patterns (`*`, `prefix.*` or the exact name, as eventMatches in event.ts reads them) and its product
   * filter. One INSERT ... SELECT, run at the publishing transaction's commit; `done` learns how many.
   */
  async queueWebhooks(rc: RequestContext, event: PlatformEvent, done: (queued: number) => void): Promise<void> {
    const at = event.occurredAt;
    await this.db.writeAtCommit(rc, {
      table: 'outbox_deliveries',
      columns: DELIVERY_COLUMNS,
      select: this.webhooksSelect,
      bindings: [event.id, event.name, at, at, at, rc.tenantId ?? '', true, event.product, event.name, event.name],
      done,
      rowsOf: { column: 'event_id', value: event.id },
    });
  }

  /**
   * Queues one run per pack handler subscribed to the event (`<pack>:<pattern>`), in the publishing
   * transaction, so a handler runs at least once: after a crash, after a failure (retried with back-off).
   */
  async queueHandlers(rc: RequestContext, event: PlatformEvent, handlers: string[]): Promise<void> {
    const at = event.occurredAt;
    if (!handlers.length) return;
    // One statement for all of them.
    await this.db.writeAtCommit(rc, {
      table: 'outbox_deliveries',
      rows: handlers.map((handler) => ({
        tenant_id: rc.tenantId ?? '', id: newId(), kind: 'handler', handler, event_id: event.id, event_name: event.name,
        status: 'pending', attempts: 0, next_attempt_at: at, created_at: at, updated_at: at,
      })),
    });
  }

  /** The tenant's handler runs, newest first, with their attempts (the delivery log of pack handlers). */
  async listHandlerRuns(
    rc: RequestContext, filter: { handler?: string; eventId?: string }, limit: number,
  ): Promise<Array<Delivery & { attempts: DeliveryAttempt[] }>> {
    const q = this.db.query('outbox_deliveries').where({ tenant_id: rc.tenantId ?? '', kind: 'handler' });
    if (filter.handler) q.where({ handler: filter.handler });
    if (filter.eventId) q.where({ event_id: filter.eventId });
    const rows = await this.db.sql(rc).run(q.orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }]).limit(limit));
    const byDelivery = await this.attemptsOf(rc, rows.map((r: any) => r.id as string));
    return rows.map((r: any) => ({ ...this.map(r), attempts: byDelivery.get(r.id) ?? [] }));
  }

  /**
   * queueWebhooks for many events of one transaction (bulk writes): one INSERT ... SELECT per event name and
   * product, over the events' ids as a VALUES list, instead of one statement per event.
   */
  async queueWebhooksMany(rc: RequestContext, events: PlatformEvent[]): Promise<void> {
    const groups = new Map<string, PlatformEvent[]>();
    for (const e of events) {
      const key = `${e.name}\u0000${e.product ?? ''}`;
      groups.set(key, [...(groups.get(key) ?? []), e]);
    }
    for (const group of groups.values()) {
      for (let i = 0; i < group.length; i += 1000) {
        const chunk = group.slice(i, i + 1000);
        const { name, product, occurredAt: at } = chunk[0];
        await this.db.writeAtCommit(rc, {
          table: 'outbox_deliveries',
          columns: DELIVERY_COLUMNS,
          select: `SELECT c.tenant_id, hp_new_id(), 'webhook', c.id, e.column1, CAST(? AS TEXT), 'pending', 0, CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS TEXT)
            FROM connectors c CROSS JOIN (VALUES ${chunk.map(() => '(CAST(? AS TEXT))').join(', ')}) AS e
            WHERE ${this.subscribes}`,
          bindings: [name, at, at, at, ...chunk.map((e) => e.id), rc.tenantId ?? '', true, product, name, name],
        });
      }
    }
  }

  /** The connectors (alias c) of a tenant that take an event: tenant, active, product, name bound in that order. */
  private get subscribes(): string {
    return `c.tenant_id = ? AND c.active = ? AND (c.product IS NULL OR c.product = ?)
          AND EXISTS (SELECT 1 FROM ${this.db.dialect.jsonArrayValues('c.events', 'p')}
            WHERE p.value = '*' OR p.value = CAST(? AS TEXT)
              OR (substr(p.value, length(p.value) - 1) = '.*' AND substr(CAST(? AS TEXT), 1, length(p.value) - 1) = substr(p.value, 1, length(p.value) - 1)))`;
  }

  /**
   * Writes a mail job. With `claim`, the job is written already claimed by that process, which sends it
   * right after commit; should it die first, the claim expires and any dispatcher takes the job.
   */
  async insertMail(
    rc: RequestContext, id: string, message: StoredMail, reference: string | null, at: string, claim?: { claimer: string; until: string },
  ): Promise<Delivery> {
    const row = {
      tenant_id: rc.tenantId ?? '',
      id,
      kind: 'mail',
      message: this.db.dialect.toJson(message),
      event_name: reference,
      status: 'pending',
      attempts: 0,
      next_attempt_at: at,
      claimed_by: claim?.claimer ?? null,
      claimed_until: claim?.until ?? null,
      created_at: at,
      updated_at: at,
    };
    await this.db.sql(rc).run(this.db.query('outbox_deliveries').insert(row));
    return this.map(row);
  }

  /**
   * Claims up to `limit` due deliveries for `claimer` until `claimUntil`, oldest due first: mail only
   * (`mail: true`) or everything but mail, skipping deliveries whose key (connector or `mail`) is in
   * `excludeKeys` and those of the tenants in `excludeTenants`. Rows claimed by another live process
   * (claim not yet expired) are never taken; on PostgreSQL concurrent claimers skip each other's rows.
   */
  async claimDue(now: string, claimUntil: string, claimer: string, limit: number, filter: ClaimFilter): Promise<Delivery[]> {
    const { mail, excludeKeys, excludeTenants } = filter;
    const inList = (values: string[]) => values.map(() => '?').join(', ');
    const exclude = (excludeKeys.length ? ` and coalesce(connector_id, handler, '${MAIL_KEY}') not in (${inList(excludeKeys)})` : '')
      + (excludeTenants.length ? ` and tenant_id not in (${inList(excludeTenants)})` : '');
    const sql = `update outbox_deliveries set claimed_until = ?, claimed_by = ?
      where (tenant_id, id) in (
        select tenant_id, id from outbox_deliveries
        where status = 'pending' and kind ${mail ? '=' : '<>'} 'mail' and next_attempt_at <= ? and (claimed_until is null or claimed_until < ?)${exclude}
        order by next_attempt_at limit ?${skipLockedClause(this.db.dialect)}
      ) returning *`;
    const result = await this.db.sql(null).run(this.db.query.raw(sql, [claimUntil, claimer, now, now, ...excludeKeys, ...excludeTenants, limit]));
    return rawRows<Record<string, any>>(result).map((r) => this.map(r));
  }

  /** How many deliveries (webhooks and mail) are pending, and when the oldest of them was queued. */
  async pendingStats(): Promise<{ count: number; oldestCreatedAt: string | null }> {
    const row = (await this.db.sql(null).run(this.db.query('outbox_deliveries').where({ status: 'pending' })
      .select(this.db.query.raw('count(*) as n'), this.db.query.raw('min(created_at) as oldest')).first())) as { n: number | string; oldest: string | null } | undefined;
    return { count: Number(row?.n ?? 0), oldestCreatedAt: row?.oldest ?? null };
  }

  /** Gives claimed deliveries back untouched (the process had no room for them), in one statement. */
  async release(deliveries: Delivery[], claimer: string): Promise<void> {
    if (!deliveries.length) return;
    await this.db.sql(null).run(this.db.query('outbox_deliveries').where({ claimed_by: claimer })
      .whereIn(['tenant_id', 'id'], deliveries.map((d) => [d.tenantId, d.id]))
      .update({ claimed_until: null, claimed_by: null }));
  }

  /**
   * Records an attempt and the delivery's new state, if `claimer` still holds the claim.
   * Returns false when the claim was lost (expired and taken by another process).
   */
  async recordAttempt(rc: RequestContext, delivery: Delivery, claimer: string, outcome: AttemptOutcome): Promise<boolean> {
    return this.db.transaction(rc, async (rc) => {
      const conn = this.db.sql(rc);
      const attempt = delivery.attemptCount + 1;
      const updated = await conn.run(this.db.query('outbox_deliveries')
        .where({ tenant_id: delivery.tenantId, id: delivery.id, claimed_by: claimer })
        .update({
          status: outcome.status,
          attempts: attempt,
          next_attempt_at: outcome.nextAttemptAt,
          claimed_until: null,
          claimed_by: null,
          last_status_code: outcome.statusCode,
          last_error: outcome.error,
          delivered_at: outcome.status === 'delivered' ? outcome.at : null,
          updated_at: outcome.at,
        }));
      if (!updated) return false;
      await conn.run(this.db.query('outbox_attempts').insert({
        tenant_id: delivery.tenantId,
        delivery_id: delivery.id,
        attempt,
        status_code: outcome.statusCode,
        duration_ms: outcome.durationMs,
        error: outcome.error,
        at: outcome.at,
        response_headers: outcome.response ? JSON.stringify(outcome.response.headers) : null,
        response_body: outcome.response?.body ?? null,
      }));
      return true;
    });
  }

  /** Ends a claimed delivery without an attempt (its connector is gone or inactive). */
  async cancelClaimed(delivery: Delivery, claimer: string, reason: string, at: string): Promise<void> {
    await this.db.sql(null).run(this.db.query('outbox_deliveries').where({ tenant_id: delivery.tenantId, id: delivery.id, claimed_by: claimer })
      .update({ status: 'cancelled', claimed_until: null, claimed_by: null, last_error: reason, updated_at: at }));
  }

  /** Cancels the connector's pending deliveries (the connector was disabled by a 410). */
  async cancelPending(rc: RequestContext, connectorId: string, reason: string, at: string): Promise<number> {
    return this.db.sql(rc).run(this.db.query('outbox_deliveries')
      .where({ tenant_id: rc.tenantId, connector_id: connectorId, status: 'pending' })
      .update({ status: 'cancelled', last_error: reason, updated_at: at }));
  }

  async deleteForConnector(rc: RequestContext, connectorId: string): Promise<void> {
    const conn = this.db.sql(rc);
    const ids = this.db.query('outbox_deliveries').select('id').where({ tenant_id: rc.tenantId, connector_id: connectorId });
    await conn.run(this.db.query('outbox_attempts').where({ tenant_id: rc.tenantId }).whereIn('delivery_id', ids).delete());
    await conn.run(this.db.query('outbox_deliveries').where({ tenant_id: rc.tenantId, connector_id: connectorId }).delete());
  }

  async get(rc: RequestContext, id: string): Promise<Delivery | null> {
    const row = await this.db.sql(rc).run(this.db.query('outbox_deliveries').where({ tenant_id: rc.tenantId ?? '', id }).first());
    return row ? this.map(row) : null;
  }

  /** The connector's deliveries (of one status, one event name), newest first, with their attempts. */
  async listForConnector(
    rc: RequestContext, connectorId: string, limit: number, offset: number, filter: { status?: DeliveryStatus; event?: string } = {},
  ): Promise<{ items: Array<Delivery & { attempts: DeliveryAttempt[] }>; total: number }> {
    const conn = this.db.sql(rc);
    const scope = (q: Knex.QueryBuilder) => {
      q.where({ tenant_id: rc.tenantId, connector_id: connectorId });
      if (filter.status) q.where({ status: filter.status });
      if (filter.event) q.where({ event_name: filter.event });
      return q;
    };
    const rows = await conn.run(scope(this.db.query('outbox_deliveries'))
      .orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }]).limit(limit).offset(offset));
    const [{ n }] = await conn.run(scope(this.db.query('outbox_deliveries')).count({ n: '*' }));
    const byDelivery = await this.attemptsOf(rc, rows.map((r: any) => r.id as string));
    return { items: rows.map((r: any) => ({ ...this.map(r), attempts: byDelivery.get(r.id) ?? [] })), total: Number(n) };
  }

  /** One delivery with its attempts. */
  async getWithAttempts(rc: RequestContext, id: string): Promise<(Delivery & { attempts: DeliveryAttempt[] }) | null> {
    const delivery = await this.get(rc, id);
    if (!delivery) return null;
    return { ...delivery, attempts: (await this.attemptsOf(rc, [id])).get(id) ?? [] };
  }

  private async attemptsOf(rc: RequestContext, ids: string[]): Promise<Map<string, DeliveryAttempt[]>> {
    const byDelivery = new Map<string, DeliveryAttempt[]>();
    if (!ids.length) return byDelivery;
    const rows = await this.db.sql(rc).run(this.db.query('outbox_attempts').where({ tenant_id: rc.tenantId }).whereIn('delivery_id', ids).orderBy('attempt', 'asc'));
    for (const a of rows) {
      const list = byDelivery.get(a.delivery_id) ?? [];
      list.push({ attempt: Number(a.attempt), statusCode: a.status_code == null ? null : Number(a.status_code), durationMs: Number(a.duration_ms), error: a.error ?? null, at: a.at,
        responseHeaders: a.response_headers ? JSON.parse(a.response_headers) as Record<string, string> : null, responseBody: a.response_body ?? null,
      });
      byDelivery.set(a.delivery_id, list);
    }
    return byDelivery;
  }

  /**
   * Makes a delivery due now again (status pending, expired claim cleared), unless a live attempt holds
   * its claim: then nothing changes and it answers false (two attempts of one delivery never run at once).
   */
  async requeue(rc: RequestContext, id: string, at: string): Promise<boolean> {
    const updated = await this.db.sql(rc).run(this.db.query('outbox_deliveries').where({ tenant_id: rc.tenantId, id })
      .where((q) => q.whereNull('claimed_until').orWhere('claimed_until', '<', at))
      .update({ status: 'pending', next_attempt_at: at, claimed_until: null, claimed_by: null, updated_at: at }));
    return updated > 0;
  }

  private map(row: Record<string, any>): Delivery {
    return {
      tenantId: row.tenant_id,
      id: row.id,
      kind: row.kind,
      connectorId: row.connector_id ?? null,
      handler: row.handler ?? null,
      eventId: row.event_id ?? null,
      event: row.event_name ?? null,
      message: row.message == null ? null : this.db.dialect.fromJson<StoredMail>(row.message),
      status: row.status,
      attemptCount: Number(row.attempts),
      nextAttemptAt: row.next_attempt_at,
      lastStatusCode: row.last_status_code == null ? null : Number(row.last_status_code),
      lastError: row.last_error ?? null,
      deliveredAt: row.delivered_at ?? null,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    };
  }
}
