import { expect } from 'chai';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { mcpClient, toolError } from '../../helpers/mcp-client.js';
import { createTenant, sharedTestApp, type TestApp } from '../../helpers/test-app.js';
import { as, superadmin } from '../../helpers/tokens.js';
import { ORDERS, Shop, Storefront, dataOf, type Json } from './shop.js';

const MCP = '/api/v1/mcp';

describe('MCP tool order_status { number } (CONTRACT 14, 15)', () => {
  let t: TestApp;
  let shop: Shop;
  const clients: Client[] = [];
  const connect = async (path: string, headers: Record<string, string> = {}) => {
    const client = await mcpClient(t, path, headers);
    clients.push(client);
    return client;
  };
  const call = async (client: Client, args: Record<string, unknown>) => (await client.callTool({ name: 'order_status', arguments: args })) as CallToolResult;

  before(async () => {
    t = await sharedTestApp();
  });

  beforeEach(async () => {
    shop = new Shop(t, await createTenant(t, 'mcp-order'));
  });

  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
  });

  it('answers a viewer where an order stands: status, payment and fulfilment status, its amounts; 404 for another number', async () => {
    await shop.product({ sku: 'MUG', priceCents: 1000, physicalStock: 5 });
    const store = new Storefront(shop);
    const cart = await store.cart({ email: 'ann@example.com', items: [{ sku: 'MUG', quantity: 2 }] });
    const order = dataOf(await store.write('post', cart, 'checkout', { paymentMethod: 'bank_transfer' }), 201).order as Json;
    const viewer = await connect(MCP, as(shop.tenant, 'viewer'));
    expect((await viewer.listTools()).tools.map((x) => x.name)).to.include('order_status');

    const placed = await call(viewer, { number: order.number });
    expect(placed.isError ?? false, JSON.stringify(placed.content)).to.equal(false);
    expect(placed.structuredContent).to.deep.equal({
      number: order.number, status: 'placed', paymentStatus: 'pending', fulfillmentStatus: 'unfulfilled', cancelReason: null, currency: 'EUR',
      subtotalCents: 2000, discountCents: 0, shippingCents: 0, taxCents: 380, totalCents: 2380, refundedCents: 0, fulfillments: [],
    });
    expect(JSON.parse((placed.content[0] as { text: string }).text)).to.deep.equal(placed.structuredContent);

    await t.http.post(`${ORDERS}/${order.id}/payments`).set(as(shop.tenant, 'admin')).send({ amountCents: 2380 }).expect(201);
    expect((await call(viewer, { number: order.number })).structuredContent).to.include({ status: 'paid', paymentStatus: 'paid' });

    expect(toolError(await call(viewer, { number: order.number + 1 })).code).to.equal('not_found');
    expect(toolError(await call(viewer, { number: 0 })).code).to.equal('validation_failed');
    // Another tenant's agent does not see this tenant's order.
    const other = await createTenant(t, 'mcp-order');
    expect(toolError(await call(await connect(MCP, as(other, 'viewer')), { number: order.number })).code).to.equal('not_found');
  });

  it('is not on the public endpoint, and goes with the erp module', async () => {
    const pub = await connect(`/api/v1/public/tenant/${shop.tenant}/mcp`);
    expect((await pub.listTools()).tools.map((x) => x.name)).not.to.include('order_status');
    await t.http.patch(`/api/v1/tenants/${shop.tenant}/licensed-modules`).set(superadmin()).send({ appCode: 'erp', isEnabled: false }).expect(200);
    const viewer = await connect(MCP, as(shop.tenant, 'viewer'));
    expect((await viewer.listTools()).tools.map((x) => x.name)).not.to.include('order_status');
    const refused = await call(viewer, { number: 1 }).then(() => null, (err: unknown) => err);
    expect(refused).to.be.instanceOf(McpError);
    expect((refused as McpError).code).to.equal(-32602);
  });
});
