import { expect } from 'chai';
import { newId } from '../../../core/base/ids.js';
import { systemContext } from '../../../core/base/request-context.js';
import type { PlatformEvent } from '../../../core/events/event.js';
import type { PackContext } from '../../../core/kernel/pack-context.js';
import erp from '../../../packs/erp/index.js';
import { createTenant, sharedTestApp, type TestApp } from '../../helpers/test-app.js';
import { as } from '../../helpers/tokens.js';

const DEALS = '/api/v1/crm/deals';
const INVOICES = '/api/v1/erp/invoices';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('won deal → draft invoice (crm.deal.updated in the erp pack)', () => {
  let t: TestApp;
  let tenant: string;
  let erpContext: PackContext;
  const events: PlatformEvent[] = [];
  const handle = (event: PlatformEvent) => erp.on!['crm.deal.updated'](event, erpContext);

  before(async () => {
    t = await sharedTestApp();
    erpContext = t.app.packs.find((p) => p.definition.name === 'erp')!.context;
    t.app.kernel.events.on('crm.deal.updated', (event) => { events.push(event); });
  });

  beforeEach(async () => {
    tenant = await createTenant(t, 'won');
  });

  const invoicesOf = async (dealId: string) => {
    const res = await t.http.get(`${INVOICES}?filter[dealId]=${dealId}`).set(as(tenant, 'viewer'));
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body.data.items as Array<Record<string, any>>;
  };
  /** The handler runs after commit, in process: wait until it has written (or the time is up). */
  const settle = async (dealId: string, expected: number) => {
    for (let i = 0; i < 100 && (await invoicesOf(dealId)).length < expected; i++) await sleep(20);
    await sleep(100);
    return invoicesOf(dealId);
  };
  const createDeal = async (body: Record<string, unknown>) => {
    const res = await t.http.post(DEALS).set(as(tenant, 'editor')).send(body);
    expect(res.status).to.equal(201);
    return res.body.data as Record<string, any>;
  };
  const win = async (id: string) => {
    await t.http.patch(`${DEALS}/${id}`).set(as(tenant, 'editor')).send({ stage: 'won' }).expect(200);
  };
  const wonEvent = (dealId: string): PlatformEvent => ({
    id: newId(), name: 'crm.deal.updated', tenantId: tenant, product: null, occurredAt: new Date().toISOString(),
    payload: {
      namespace: 'crm', schema: 'deal', id: dealId,
      record: { id: dealId, title: 'Replayed', valueCents: 5000, currency: 'USD', stage: 'won', version: 2 },
      previous: { id: dealId, title: 'Replayed', valueCents: 5000, currency: 'USD', stage: 'proposal', version: 1 },
    },
  });

  it('creates one draft invoice for the deal\'s value when the deal is won', async () => {
    const deal = await createDeal({ title: 'Clinic rollout', valueCents: 1234567, currency: 'CHF', contactEmail: 'ana@example.com', stage: 'negotiation' });
    expect(await invoicesOf(deal.id)).to.deep.equal([]);
    await win(deal.id);
    const [invoice, ...more] = await settle(deal.id, 1);
    expect(more).to.deep.equal([]);
    expect(invoice).to.include({
      status: 'draft', dealId: deal.id, currency: 'CHF', customerRef: 'ana@example.com',
      subtotalCents: 1234567, taxCents: 0, totalCents: 1234567,
    });
    expect(invoice.lines).to.deep.equal([{ description: 'Deal: Clinic rollout', quantity: 1, unitPriceCents: 1234567, taxRateBasisPoints: 0 }]);
  });

  it('creates the invoice for a deal created as won', async () => {
    const deal = await createDeal({ title: 'Won at once', valueCents: 999, stage: 'won' });
    expect(await settle(deal.id, 1)).to.have.length(1);
  });

  it('creates exactly one invoice when the same event is delivered twice', async () => {
    const deal = await createDeal({ title: 'Twice', valueCents: 100, stage: 'proposal' });
    await win(deal.id);
    await settle(deal.id, 1);
    const event = events.find((e) => e.payload.id === deal.id && (e.payload.record as any).stage === 'won')!;
    expect(event, 'the crm.deal.updated event').to.not.equal(undefined);

    // Redelivery through the bus (every subscriber sees it again), twice at once.
    t.app.kernel.events.bus.emit(event);
    t.app.kernel.events.bus.emit(event);
    expect(await settle(deal.id, 2)).to.have.length(1);
  });

  it('creates exactly one invoice when two deliveries of one event race', async () => {
    // A won deal without its invoice: won while erp was off, then erp turned on again.
    await t.app.kernel.tenants.setModule(systemContext(null), tenant, 'erp', false);
    const dealId = (await createDeal({ title: 'Replayed', valueCents: 5000, currency: 'USD', stage: 'won' })).id;
    await sleep(100);
    await t.app.kernel.tenants.setModule(systemContext(null), tenant, 'erp', true);
    expect(await invoicesOf(dealId)).to.deep.equal([]);
    const event = wonEvent(dealId);
    const results = await Promise.allSettled([handle(event), handle(event), handle(event)]);
    expect(results.map((r) => r.status)).to.deep.equal(['fulfilled', 'fulfilled', 'fulfilled']);
    const invoices = await invoicesOf(dealId);
    expect(invoices).to.have.length(1);
    expect(invoices[0]).to.include({ totalCents: 5000, currency: 'USD', status: 'draft' });
  });

  it('creates no invoice for a forged won event: the stored deal is missing or not won', async () => {
    const missing = newId();
    await handle(wonEvent(missing));
    expect(await invoicesOf(missing)).to.deep.equal([]);
    const open = await createDeal({ title: 'Still open', valueCents: 700, stage: 'proposal' });
    await handle(wonEvent(open.id));
    await sleep(100);
    expect(await invoicesOf(open.id)).to.deep.equal([]);
  });

  it('keeps one invoice when a deal is won, reopened and won again', async () => {
    const deal = await createDeal({ title: 'Back and forth', valueCents: 700, stage: 'negotiation' });
    await win(deal.id);
    await settle(deal.id, 1);
    await t.http.patch(`${DEALS}/${deal.id}`).set(as(tenant, 'editor')).send({ stage: 'negotiation' }).expect(200);
    await win(deal.id);
    expect(await settle(deal.id, 2)).to.have.length(1);
  });

  it('creates no invoice for a deal that moves to another stage than won', async () => {
    const deal = await createDeal({ title: 'Lost cause', valueCents: 700 });
    await t.http.patch(`${DEALS}/${deal.id}`).set(as(tenant, 'editor')).send({ stage: 'lost' }).expect(200);
    await handle(events.find((e) => e.payload.id === deal.id)!);
    expect(await invoicesOf(deal.id)).to.deep.equal([]);
  });

  it('creates no invoice when the tenant has erp disabled', async () => {
    await t.app.kernel.tenants.setModule(systemContext(null), tenant, 'erp', false);
    const deal = await createDeal({ title: 'No ERP', valueCents: 700, stage: 'proposal' });
    await win(deal.id);
    await handle(events.find((e) => e.payload.id === deal.id)!);
    await sleep(200);
    // /erp/invoices answers 403 now; read through the records service.
    const page = await t.app.kernel.records.list(systemContext(tenant), 'erp', 'invoice', { filter: [{ field: 'dealId', op: 'eq', value: deal.id }] });
    expect(page.items).to.deep.equal([]);
  });

  it('writes the invoice in the deal\'s tenant only', async () => {
    const deal = await createDeal({ title: 'Scoped', valueCents: 42, stage: 'won' });
    await settle(deal.id, 1);
    const other = await createTenant(t, 'won');
    const res = await t.http.get(INVOICES).set(as(other, 'viewer'));
    expect(res.body.data.items).to.deep.equal([]);
  });
});
