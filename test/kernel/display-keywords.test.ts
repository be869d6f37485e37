import { expect } from 'chai';
import { createTenant, startTestApp, type TestApp } from '../helpers/test-app.js';
import { superadmin } from '../helpers/tokens.js';

const SCHEMAS = '/api/v1/metadata/schemas';

/** The display keywords of CONTRACT.md section 3: accepted in their form, refused (400 invalid_schema) in any other. */
describe('display keywords (x-money, x-percent-basis-points, x-display-field, x-list-columns)', () => {
  let t: TestApp;
  let tenant: string;

  before(async () => {
    t = await startTestApp();
    tenant = await createTenant(t, 'display');
  });
  after(() => t?.close());

  const register = (name: string, schema: Record<string, unknown>) =>
    t.http.post(SCHEMAS).set(superadmin(tenant)).send({ namespace: 'shop', name, schema });

  it('registers a schema that declares them, and returns them as declared', async () => {
    const schema = {
      type: 'object', 'x-display-field': 'name', 'x-list-columns': ['name', 'priceCents', 'createdAt'],
      properties: {
        name: { type: 'string', title: 'Name' },
        priceCents: { type: 'integer', title: 'Price', 'x-money': true },
        rateBasisPoints: { type: ['integer', 'null'], 'x-percent-basis-points': true },
        lines: { type: 'array', items: { type: 'object', properties: { unitCents: { type: 'integer', 'x-money': true } } } },
      },
    };
    const res = await register('item', schema);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    expect(res.body.data.item.schema).to.deep.include({ 'x-display-field': 'name', 'x-list-columns': ['name', 'priceCents', 'createdAt'] });
    expect(res.body.data.item.schema.properties.priceCents['x-money']).to.equal(true);
  });

  it('refuses them in another form or place with 400 invalid_schema, naming the keyword', async () => {
    const bad: Array<[Record<string, unknown>, string]> = [
      [{ type: 'object', properties: { price: { type: 'number', 'x-money': true } } }, 'x-money'],
      [{ type: 'object', properties: { price: { type: 'string', 'x-money': true } } }, 'x-money'],
      [{ type: 'object', properties: { price: { type: 'integer', 'x-money': 'EUR' } } }, 'x-money'],
      [{ type: 'object', properties: { rate: { type: 'string', 'x-percent-basis-points': true } } }, 'x-percent-basis-points'],
      [{ type: 'object', 'x-display-field': 'missing', properties: { name: { type: 'string' } } }, 'x-display-field'],
      [{ type: 'object', 'x-display-field': 3, properties: { name: { type: 'string' } } }, 'x-display-field'],
      [{ type: 'object', 'x-list-columns': ['name', 'nope'], properties: { name: { type: 'string' } } }, 'x-list-columns'],
      [{ type: 'object', 'x-list-columns': 'name', properties: { name: { type: 'string' } } }, 'x-list-columns'],
      [{ type: 'object', properties: { inner: { type: 'object', 'x-display-field': 'a', properties: { a: { type: 'string' } } } } }, 'x-display-field'],
    ];
    for (const [i, [schema, keyword]] of bad.entries()) {
      const res = await register(`bad_${i}`, schema);
      expect(res.status, JSON.stringify(schema)).to.equal(400);
      expect(res.body.data.code, JSON.stringify(schema)).to.equal('invalid_schema');
      expect(JSON.stringify(res.body), JSON.stringify(schema)).to.include(keyword);
    }
  });

  it('the packs\' schemas declare them: money on the ERP\'s *Cents fields, percent on *BasisPoints, a display field and columns', async () => {
    const res = await t.http.get(`${SCHEMAS}?namespace=erp`).set(superadmin(tenant)).expect(200);
    const product = res.body.data.items.find((s: { name: string }) => s.name === 'product').schema;
    expect(product['x-display-field']).to.equal('name');
    expect(product['x-list-columns']).to.include('priceCents');
    expect(product.properties.priceCents).to.include({ 'x-money': true, title: 'Price' });
    expect(product.properties.taxRateBasisPoints).to.include({ 'x-percent-basis-points': true });
    for (const item of res.body.data.items as Array<{ name: string; schema: Record<string, any> }>) {
      for (const [name, s] of Object.entries(item.schema.properties as Record<string, Record<string, unknown>>)) {
        if (name.endsWith('Cents')) expect(s['x-money'], `${item.name}.${name}`).to.equal(true);
        if (name.endsWith('BasisPoints')) expect(s['x-percent-basis-points'], `${item.name}.${name}`).to.equal(true);
      }
      expect(item.schema['x-display-field'], item.name).to.be.a('string');
    }
  });
});
