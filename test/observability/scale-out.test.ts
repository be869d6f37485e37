import { expect } from 'chai';
import { createTenant, sharedTestApp, startTestApp, type TestApp } from '../helpers/test-app.js';
import { as } from '../helpers/tokens.js';

describe('two service processes on one database', () => {
  let first: TestApp;
  let second: TestApp;

  before(async () => {
    first = await sharedTestApp();
    second = await startTestApp({ database: first.database, env: { MIGRATE_ON_START: 'false' } });
  });

  after(async () => {
    await second?.close();
  });

  it('serves a schema registered through one process through the other at once', async () => {
    const tenant = await createTenant(first, 'scale');
    const registration = {
      namespace: 'shop', name: 'ticket',
      schema: { type: 'object', required: ['subject'], additionalProperties: false, properties: { subject: { type: 'string' }, priority: { type: 'integer' } } },
    };
    await first.http.post('/api/v1/metadata/schemas').set(as(tenant, 'admin')).send(registration).expect(201);

    const created = await second.http.post('/api/v1/data/shop/ticket').set(as(tenant, 'editor')).send({ subject: 'Printer on fire', priority: 1 });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const invalid = await second.http.post('/api/v1/data/shop/ticket').set(as(tenant, 'editor')).send({ subject: 5 });
    expect(invalid.status).to.equal(400);

    const listed = await first.http.get('/api/v1/data/shop/ticket').set(as(tenant, 'viewer')).expect(200);
    expect(listed.body.data.items.map((i: { id: string }) => i.id)).to.deep.equal([created.body.data.item.id]);
    const doc = await second.http.get('/api/v1/openapi.json').set(as(tenant, 'viewer')).expect(200);
    expect(doc.body.paths).to.have.property('/api/v1/data/shop/ticket');
  });

  it('answers readiness on both processes', async () => {
    await first.http.get('/api/v1/ready').expect(200);
    await second.http.get('/api/v1/ready').expect(200);
  });
});
