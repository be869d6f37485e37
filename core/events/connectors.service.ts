import type { AuditLog } from '../audit/audit-log.repository.js';
import type { Config } from '../../config/index.js';
import { SecretBox } from '../base/secret-box.js';
import type { Database } from '../db/database.js';
import { newId, nowIso } from '../base/ids.js';
import type { FetchService } from '../fetch/fetch.service.js';
import { Conflict, NotFound } from '../base/errors.js';
import type { RequestContext } from '../base/request-context.js';
import type { Connector, ConnectorInput, ConnectorRow } from './connector.js';
import { ConnectorsRepository, type ConnectorColumns } from './connectors.repository.js';
import { DeliveriesRepository } from './deliveries.repository.js';
import type { Delivery, DeliveryAttempt, DeliveryStatus } from './delivery.js';
import type { PlatformEvent } from './event.js';
import { EventsRepository } from './events.repository.js';
import { deliveryHeaders, SIGNATURE_HEADER_NAMES, webhookBody } from './webhook-signature.js';

/** The secret box context of connectors' own signing secrets. */
const CONNECTOR_SECRET = 'connector-secret';

export interface Page<T> {
  items: T[];
  pagination: { limit: number; offset: number; total: number; hasMore: boolean; nextCursor: null };
}

export type DeliveryView = Omit<Delivery, 'tenantId' | 'message' | 'kind' | 'handler'> & { attempts: DeliveryAttempt[] };

/** A delivery with the request its attempts send (ConnectorsService.getDelivery). */
export type DeliveryDetail = DeliveryView & {
  request: { method: 'POST'; url: string; headers: Record<string, string>; signatureHeaders: string[]; body: string | null };
};

/**
 * Connectors (a tenant's webhook subscriptions) and their delivery log. The URL is checked against the
 * outbound-fetch rules on create and update; the secret is sealed at rest and never returned.
 */
export class ConnectorsService {
  readonly connectors: ConnectorsRepository;
  readonly deliveries: DeliveriesRepository;
  private readonly events: EventsRepository;
  private readonly box: SecretBox;

  constructor(private readonly config: Config, private readonly db: Database, private readonly fetch: FetchService, private readonly audit?: AuditLog) {
    this.connectors = new ConnectorsRepository(db);
    this.deliveries = new DeliveriesRepository(db);
    this.events = new EventsRepository(db);
    this.box = new SecretBox(config.settingsEncryptionKey);
  }

  async create(rc: RequestContext, input: ConnectorInput): Promise<Connector> {
    await this.fetch.assertAllowedUrl(input.url);
    const id = newId();
    // The connector and its audit entry (CONTRACT.md 16.4; never the secret) commit together.
    await this.db.transaction(rc, async (rc) => {
      await this.insert(rc, id, input);
      await this.audit?.add(rc, { action: 'connector.created', target: `connector/${id}` });
    });
    return this.require(rc, id);
  }

  private async insert(rc: RequestContext, id: string, input: ConnectorInput): Promise<void> {
    await this.connectors.insert(rc, id, {
      url: input.url,
      events: unique(input.events),
      product: input.product ?? null,
      active: input.active ?? true,
      description: input.description ?? null,
      secret: input.secret ? this.box.seal(input.secret, CONNECTOR_SECRET) : null,
    }, nowIso());
  }

  async list(rc: RequestContext, limit: number, offset: number): Promise<Page<Connector>> {
    const { items, total } = await this.connectors.list(rc, limit, offset);
    return { items: items.map(publicView), pagination: pagination(limit, offset, total, items.length) };
  }

  async require(rc: RequestContext, id: string): Promise<Connector> {
    return publicView(await this.requireRow(rc, id));
  }

  async update(rc: RequestContext, id: string, patch: Partial<ConnectorInput>): Promise<Connector> {
    await this.requireRow(rc, id);
    if (patch.url !== undefined) await this.fetch.assertAllowedUrl(patch.url);
    const columns: ConnectorColumns = {};
    if (patch.url !== undefined) columns.url = patch.url;
    if (patch.events !== undefined) columns.events = unique(patch.events);
    if (patch.product !== undefined) columns.product = patch.product;
    if (patch.description !== undefined) columns.description = patch.description;
    if (patch.secret !== undefined) columns.secret = patch.secret === null ? null : this.box.seal(patch.secret, CONNECTOR_SECRET);
    if (patch.active !== undefined) {
      columns.active = patch.active;
      if (patch.active) columns.disabled_reason = null;
    }
    await this.connectors.update(rc, id, columns, nowIso());
    return this.require(rc, id);
  }

  /** Deletes the connector with its queue and log. */
  async delete(rc: RequestContext, id: string): Promise<void> {
    await this.db.transaction(rc, async (rc) => {
      await this.requireRow(rc, id);
      await this.deliveries.deleteForConnector(rc, id);
      await this.connectors.delete(rc, id);
    });
  }

  async listDeliveries(
    rc: RequestContext, connectorId: string, limit: number, offset: number, filter: { status?: DeliveryStatus; event?: string } = {},
  ): Promise<Page<DeliveryView>> {
    await this.requireRow(rc, connectorId);
    const { items, total } = await this.deliveries.listForConnector(rc, connectorId, limit, offset, filter);
    return { items: items.map(deliveryView), pagination: pagination(limit, offset, total, items.length) };
  }

  /**
   * One delivery with its attempts and the request each attempt sends: the connector's URL, the headers (the
   * signature headers are named: each attempt signs anew) and the body, rebuilt from the stored event (null once
   * the event is pruned, OUTBOX_RETENTION_DAYS).
   */
  async getDelivery(rc: RequestContext, connectorId: string, deliveryId: string): Promise<DeliveryDetail> {
    const connector = await this.requireRow(rc, connectorId);
    const delivery = await this.deliveries.getWithAttempts(rc, deliveryId);
    if (!delivery || delivery.connectorId !== connectorId) throw NotFound(`No delivery "${deliveryId}" for this connector`);
    const [event] = delivery.eventId ? await this.events.getMany(rc, [delivery.eventId]) : [];
    return {
      ...deliveryView(delivery),
      request: {
        method: 'POST', url: connector.url, headers: deliveryHeaders(delivery.event ?? '', delivery.id),
        signatureHeaders: [...SIGNATURE_HEADER_NAMES], body: event ? webhookBody(event) : null,
      },
    };
  }

  /**
   * Makes a delivery due now again, whatever its state; the connector must be active, and the delivery must
   * not be under way (409 while an attempt holds its claim).
   */
  async retryDelivery(rc: RequestContext, connectorId: string, deliveryId: string): Promise<DeliveryView> {
    const connector = await this.requireRow(rc, connectorId);
    const delivery = await this.deliveries.get(rc, deliveryId);
    if (!delivery || delivery.connectorId !== connectorId) throw NotFound(`No delivery "${deliveryId}" for this connector`);
    if (!connector.active) throw Conflict('The connector is not active; activate it before retrying its deliveries');
    if (!(await this.deliveries.requeue(rc, deliveryId, nowIso()))) {
      throw Conflict('The delivery is being attempted right now; retry it once the attempt is recorded');
    }
    return deliveryView((await this.deliveries.getWithAttempts(rc, deliveryId))!);
  }

  /**
   * The outbox fan-out: one delivery per active connector of the event's tenant whose patterns match the
   * event name (and whose product filter, if any, matches), written at the publishing transaction's commit.
   */
  async fanout(rc: RequestContext, event: PlatformEvent, queued: (count: number) => void): Promise<void> {
    if (!event.tenantId) return;
    await this.deliveries.queueWebhooks({ ...rc, tenantId: event.tenantId }, event, queued);
  }

  /** `fanout` for many events of one tenant and transaction (bulk writes). */
  async fanoutMany(rc: RequestContext, events: PlatformEvent[]): Promise<void> {
    const tenantId = events[0]?.tenantId;
    if (!tenantId) return;
    await this.deliveries.queueWebhooksMany({ ...rc, tenantId }, events);
  }

  /** The secret a connector's deliveries are signed with: its own, else SIGNING_SECRET. */
  signingSecret(connector: ConnectorRow): string {
    return connector.sealedSecret ? this.box.open(connector.sealedSecret, CONNECTOR_SECRET) : this.config.signingSecret;
  }

  private async requireRow(rc: RequestContext, id: string): Promise<ConnectorRow> {
    const row = await this.connectors.get(rc, id);
    if (!row) throw NotFound(`No connector "${id}"`);
    return row;
  }
}

function publicView(row: ConnectorRow): Connector {
  const { sealedSecret: _sealed, ...view } = row;
  return view;
}

function deliveryView(d: Delivery & { attempts: DeliveryAttempt[] }): DeliveryView {
  const { tenantId: _t, message: _m, kind: _k, handler: _h, ...view } = d;
  return view;
}

function pagination(limit: number, offset: number, total: number, count: number): Page<unknown>['pagination'] {
  return { limit, offset, total, hasMore: offset + count < total, nextCursor: null };
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}
