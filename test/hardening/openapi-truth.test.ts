import { expect } from 'chai';
import { createTenant, sharedTestApp, type TestApp } from '../helpers/test-app.js';
import { superadmin } from '../helpers/tokens.js';

/** The document is as strict as the validation, and lists what the routes answer (#17). */
describe('GET /api/v1/openapi.json tells the truth (#17)', () => {
  let t: TestApp;
  let doc: any;
  const codesOf = (path: string, method: string, status: string) => {
    const schema = doc.paths[path][method].responses[status].content['application/json'].schema;
    return (schema.allOf[1].properties.error ?? schema.allOf[1].properties.data ?? schema.allOf[1]).properties.code.enum as string[];
  };

  before(async () => {
    t = await sharedTestApp();
    doc = (await t.http.get('/api/v1/openapi.json')).body;
  });

  it('declares identifier patterns, the offset maximum, the storage headers and the sourcePlatform enum', () => {
    const list = doc.paths['/api/v1/data/{ns}/{schema}'].get;
    for (const name of ['ns', 'schema']) {
      expect(list.parameters.find((p: any) => p.name === name).schema.pattern).to.equal('^[a-z][a-z0-9_]{0,39}$');
    }
    const deals = doc.paths['/api/v1/crm/deals'].get;
    expect(deals.parameters.find((p: any) => p.name === 'offset').schema.maximum).to.equal(100000);
    const upload = doc.paths['/api/v1/storage/objects'].post;
    const product = upload.parameters.find((p: any) => p.name === 'X-Platform-Product');
    expect(product).to.include({ in: 'header', required: true });
    expect(product.schema.pattern).to.equal('^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$');
    const body = doc.paths['/api/v1/migration/competitor-import'].post.requestBody.content['application/json'].schema;
    const resolved = body.$ref ? doc.components.schemas[body.$ref.split('/').pop()] : body;
    expect(resolved.properties.sourcePlatform.enum).to.deep.equal(['website']);
  });

  it('lists the error codes routes answer: invalid_identifier, validation_failed, 503 unavailable, 429 on the public runtime', () => {
    expect(codesOf('/api/v1/data/{ns}/{schema}', 'get', '400')).to.include.members(['invalid_identifier', 'validation_failed', 'invalid_filter']);
    expect(codesOf('/api/v1/metadata/schemas', 'get', '400')).to.include('invalid_identifier');
    expect(codesOf('/api/v1/public/tenant/{tenantId}/content/{contentType}', 'get', '400')).to.include('invalid_identifier');
    expect(codesOf('/api/v1/public/tenant/{tenantId}/content/{contentType}', 'get', '429')).to.deep.equal(['rate_limited']);
    expect(codesOf('/api/v1/crm/deals', 'post', '503')).to.deep.equal(['unavailable']);
    expect(doc.paths['/api/v1/crm/deals'].post.responses['503'].headers).to.have.property('Retry-After');
  });

  it('leaves required out of list items, since fields= returns partial items', async () => {
    const tenant = await createTenant(t, 'oa');
    await t.http.post('/api/v1/metadata/schemas').set(superadmin(tenant))
      .send({ namespace: 'oa', name: 'item', schema: { type: 'object', required: ['title'], properties: { title: { type: 'string' } } } }).expect(201);
    const tenantDoc = (await t.http.get('/api/v1/openapi.json').set(superadmin(tenant))).body;
    const items = tenantDoc.paths['/api/v1/data/oa/item'].get.responses['200'].content['application/json'].schema.properties.data.properties.items.items;
    const item = tenantDoc.components.schemas[items.$ref.split('/').pop()];
    expect(item).to.not.have.property('required');
    const partial = await t.http.get('/api/v1/data/oa/item?fields=id').set(superadmin(tenant));
    expect(partial.status).to.equal(200);
  });
});
