import { expect } from 'chai';
import { createTenant, sharedTestApp, type TestApp } from '../helpers/test-app.js';
import { as, superadmin } from '../helpers/tokens.js';

/** The console shows sealed schemas read-only from this flag, so it must come from the service (#28). */
describe('GET /api/v1/metadata/schemas: sealed on each schema item (#28)', () => {
  let t: TestApp;
  let tenant: string;

  before(async () => {
    t = await sharedTestApp();
    tenant = await createTenant(t, 'sealed', 'enterprise');
  });

  it('answers sealed: true for a schema only its pack writes and false for the others, on the list and on one schema', async () => {
    await t.http.post('/api/v1/metadata/schemas').set(superadmin(tenant))
      .send({ namespace: 'shop', name: 'note', schema: { type: 'object', properties: { text: { type: 'string' } } } }).expect(201)
      .expect((res) => expect(res.body.data.item.sealed).to.equal(false));
    const list = await t.http.get('/api/v1/metadata/schemas').set(as(tenant, 'viewer')).expect(200);
    const items = list.body.data.items as Array<{ namespace: string; name: string; sealed: unknown }>;
    for (const item of items) expect(item.sealed, `${item.namespace}.${item.name}`).to.be.a('boolean');
    const sealed = (ns: string, name: string) => items.find((i) => i.namespace === ns && i.name === name)?.sealed;
    expect(sealed('crm', 'ticket')).to.equal(true);
    expect(sealed('erp', 'product')).to.equal(false);
    expect(sealed('shop', 'note')).to.equal(false);
    const one = await t.http.get('/api/v1/metadata/schemas/crm/ticket').set(as(tenant, 'viewer')).expect(200);
    expect(one.body.data.item.sealed).to.equal(true);
  });

  it('declares sealed as a boolean of the schema item in the OpenAPI document', async () => {
    const doc = (await t.http.get('/api/v1/openapi.json').set(superadmin(tenant)).expect(200)).body;
    const resolve = (s: any): any => (s?.$ref ? doc.components.schemas[s.$ref.split('/').pop()] : s);
    const success = (path: string, method: string, status: string) =>
      resolve(resolve(doc.paths[path][method].responses[status].content['application/json'].schema).properties.data);
    const listed = resolve(success('/api/v1/metadata/schemas', 'get', '200').properties.items.items);
    expect(listed.properties.sealed).to.include({ type: 'boolean' });
    const one = resolve(success('/api/v1/metadata/schemas/{ns}/{name}', 'get', '200').properties.item);
    expect(one.properties.sealed).to.include({ type: 'boolean' });
    expect(one.required).to.include('sealed');
  });
});
