import { expect } from 'chai';
import { packs as defaultPacks } from '../../config/packs.js';
import { definePack } from '../../core/kernel/define-pack.js';
import { systemContext } from '../../core/base/request-context.js';
import { createTenant, startTestApp, type TestApp } from '../helpers/test-app.js';
import { as, superadmin } from '../helpers/tokens.js';

/** A pack with an open namespace holding one platform schema. */
const openPack = definePack({ name: 'atlas', namespaces: [{ name: 'atlas', open: true }] });

const SCHEMAS = '/api/v1/metadata/schemas';

function schemaBody(overrides: Record<string, unknown> = {}) {
  return {
    namespace: 'shop',
    name: 'product',
    title: 'Product',
    description: 'Things we sell',
    schema: {
      type: 'object',
      required: ['sku'],
      additionalProperties: false,
      properties: { sku: { type: 'string' }, price: { type: 'integer' }, active: { type: 'boolean' } },
    },
    indexes: [['price'], ['active', 'createdAt']],
    unique: [['sku']],
    ...overrides,
  };
}

function failCode(res: { body: any }): string {
  return res.body.data?.code;
}

describe('schema registry', () => {
  let t: TestApp;
  let tenant: string;

  before(async () => {
    t = await startTestApp({ packs: [...defaultPacks, openPack] });
    await t.app.kernel.schemas.registerPlatform(systemContext(null), {
      namespace: 'atlas', name: 'place', title: 'Place', schema: { type: 'object', properties: { name: { type: 'string' } } },
    });
  });
  after(() => t?.close());
  beforeEach(async () => {
    tenant = await createTenant(t, 'reg');
  });

  const register = (body: unknown, headers: Record<string, string> = as(tenant, 'admin')) => t.http.post(SCHEMAS).set(headers).send(body as object);

  describe('POST /api/v1/metadata/schemas', () => {
    it('answers 201 with the registered schema in JSend', async () => {
      const res = await register(schemaBody());
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      expect(res.body.status).to.equal('success');
      const item = res.body.data.item;
      expect(item).to.include({ namespace: 'shop', name: 'product', version: 1, scope: 'tenant', title: 'Product', description: 'Things we sell' });
      expect(item.schema).to.deep.equal(schemaBody().schema);
      expect(item.indexes).to.deep.equal([['price'], ['active', 'createdAt']]);
      expect(item.unique).to.deep.equal([['sku']]);
      expect(item.createdAt).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      const records = await t.http.post('/api/v1/data/shop/product').set(as(tenant, 'editor')).send({ sku: 'a' });
      expect(records.status).to.equal(201);
    });

    it('answers 403 forbidden to an editor (admin registers schemas)', async () => {
      const res = await register(schemaBody(), as(tenant, 'editor'));
      expect(res.status).to.equal(403);
      expect(failCode(res)).to.equal('forbidden');
    });

    it('answers 409 schema_exists for the same namespace and name', async () => {
      await register(schemaBody()).expect(201);
      const res = await register(schemaBody({ title: 'Again' }));
      expect(res.status).to.equal(409);
      expect(failCode(res)).to.equal('schema_exists');
    });

    it('answers 409 schema_exists for the name of a platform schema in an open namespace', async () => {
      const res = await register(schemaBody({ namespace: 'atlas', name: 'place' }));
      expect(res.status).to.equal(409);
      expect(failCode(res)).to.equal('schema_exists');
      const own = await register(schemaBody({ namespace: 'atlas', name: 'route' }));
      expect(own.status).to.equal(201);
    });

    it('answers 403 reserved_namespace for a closed namespace (crm)', async () => {
      const res = await register(schemaBody({ namespace: 'crm', name: 'lead' }), superadmin(tenant));
      expect(res.status).to.equal(403);
      expect(failCode(res)).to.equal('reserved_namespace');
    });

    it('answers 400 invalid_identifier for bad namespace or name', async () => {
      for (const [namespace, name] of [['Shop', 'x'], ['1shop', 'x'], ['sh-op', 'x'], ['shop', 'a'.repeat(41)], ['shop', 'x y'], ['', 'x'], ['shop', 'Ä']]) {
        const res = await register(schemaBody({ namespace, name }));
        expect(res.status, `${namespace}.${name}`).to.equal(400);
        expect(failCode(res), `${namespace}.${name}`).to.equal('invalid_identifier');
      }
      const fine = await register(schemaBody({ namespace: 's', name: 'a'.repeat(40) }));
      expect(fine.status).to.equal(201);
    });

    it('answers 400 invalid_schema for an invalid JSON Schema', async () => {
      const bad: unknown[] = [
        { type: 'object', properties: { a: { type: 'strnig' } } },
        { type: 'array', items: { type: 'string' } },
        { type: 'object', properties: { a: { minLength: -1 } } },
        { type: 'object', propertiez: {} },
        { type: 'object', properties: { a: { $ref: '#/$defs/missing' } } },
        { $schema: 'http://json-schema.org/draft-04/schema#', type: 'object' },
      ];
      for (const schema of bad) {
        const res = await register(schemaBody({ schema, indexes: [], unique: [] }));
        expect(res.status, JSON.stringify(schema)).to.equal(400);
        expect(failCode(res), JSON.stringify(schema)).to.equal('invalid_schema');
      }
    });

    it('answers 400 validation_failed for a body that misses the schema or has unknown keys', async () => {
      const missing = await register({ namespace: 'shop', name: 'x' });
      expect(missing.status).to.equal(400);
      expect(failCode(missing)).to.equal('validation_failed');
      expect(missing.body.data.errors).to.deep.include({ path: '/schema', message: 'is required' });
      const extra = await register({ ...schemaBody(), owner: 'me' });
      expect(extra.status).to.equal(400);
      expect(extra.body.data.errors).to.deep.include({ path: '/owner', message: 'is not allowed' });
    });

    it('answers 400 validation_failed for indexes on unknown or non-scalar fields', async () => {
      const schema = { type: 'object', properties: { tags: { type: 'array' }, sku: { type: 'string' } } };
      for (const indexes of [[['nope']], [['tags']], [[]], [['sku', 'sku', 'sku', 'sku', 'sku']]]) {
        const res = await register(schemaBody({ schema, indexes, unique: [] }));
        expect(res.status, JSON.stringify(indexes)).to.equal(400);
        expect(failCode(res)).to.equal('validation_failed');
        expect(res.body.data.errors[0].path).to.match(/^\/indexes\/0/);
      }
    });

    it('answers 400 invalid_schema when the schema declares a server-managed field', async () => {
      for (const field of ['id', 'createdAt', 'updatedAt', 'version']) {
        const res = await register(schemaBody({ schema: { type: 'object', properties: { [field]: { type: 'string' } } }, indexes: [], unique: [] }));
        expect(res.status, field).to.equal(400);
        expect(failCode(res)).to.equal('invalid_schema');
        expect(res.body.data.message).to.include(field);
      }
    });
  });

  describe('hostile schemas', () => {
    const hostile = (schema: unknown) => register(schemaBody({ name: `h${Math.floor(Math.random() * 1e9)}`, schema, indexes: [], unique: [] }));

    it('refuses a schema over the size limit', async () => {
      const properties: Record<string, unknown> = {};
      for (let i = 0; i < 3000; i++) properties[`field_${i}`] = { type: 'string', description: 'x'.repeat(40) };
      const res = await hostile({ type: 'object', properties });
      expect(res.status).to.equal(400);
      expect(failCode(res)).to.equal('invalid_schema');
      expect(res.body.data.message).to.match(/bytes/);
    });

    it('refuses a schema nested deeper than the limit', async () => {
      let inner: Record<string, unknown> = { type: 'string' };
      // 34 levels: deeper than the schema limit (32), within the 64 levels any JSON body may nest.
      for (let i = 0; i < 17; i++) inner = { type: 'object', properties: { x: inner } };
      const res = await hostile(inner);
      expect(res.status).to.equal(400);
      expect(failCode(res)).to.equal('invalid_schema');
      expect(res.body.data.message).to.match(/deeper/);
    });

    it('refuses $data references', async () => {
      const res = await hostile({ type: 'object', properties: { lo: { type: 'integer' }, hi: { type: 'integer', minimum: { $data: '1/lo' } } } });
      expect(res.status).to.equal(400);
      expect(failCode(res)).to.equal('invalid_schema');
      expect(res.body.data.message).to.match(/\$data/);
    });

    it('refuses a remote $ref (nothing is fetched)', async () => {
      const res = await hostile({ type: 'object', properties: { a: { $ref: 'http://127.0.0.1:9/evil.json' } } });
      expect(res.status).to.equal(400);
      expect(failCode(res)).to.equal('invalid_schema');
    });

    it('refuses unbounded uniqueItems over objects (quadratic), accepts it bounded or over scalars', async () => {
      const res = await hostile({ type: 'object', properties: { list: { type: 'array', uniqueItems: true } } });
      expect(res.status).to.equal(400);
      expect(failCode(res)).to.equal('invalid_schema');
      expect((await hostile({ type: 'object', properties: { list: { type: 'array', uniqueItems: true, maxItems: 100 } } })).status).to.equal(201);
      expect((await hostile({ type: 'object', properties: { list: { type: 'array', uniqueItems: true, items: { type: 'string' } } } })).status).to.equal(201);
    });

    it('refuses a pattern RE2 cannot run in linear time (back-reference)', async () => {
      const res = await hostile({ type: 'object', properties: { s: { type: 'string', pattern: '^(a)\\1$' } } });
      expect(res.status).to.equal(400);
      expect(failCode(res)).to.equal('invalid_schema');
    });

    it('validates a catastrophic-backtracking pattern against a long string quickly (RE2)', async () => {
      const created = await register(schemaBody({
        name: 'evil',
        schema: {
          type: 'object',
          properties: { s: { type: 'string', pattern: '^(a+)+$' }, m: { type: 'object', patternProperties: { '^(x+x+)+y$': { type: 'integer' } } } },
        },
        indexes: [],
        unique: [],
      }));
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      const started = Date.now();
      const res = await t.http.post('/api/v1/data/shop/evil').set(as(tenant, 'editor')).send({ s: `${'a'.repeat(50_000)}!`, m: { [`${'x'.repeat(5000)}`]: 'not an integer' } });
      const elapsed = Date.now() - started;
      expect(res.status).to.equal(400);
      expect(res.body.data.errors.map((e: { path: string }) => e.path)).to.include('/s');
      expect(elapsed).to.be.below(2000);
      const ok = await t.http.post('/api/v1/data/shop/evil').set(as(tenant, 'editor')).send({ s: 'aaaa' });
      expect(ok.status).to.equal(201);
    });
  });

  describe('GET /api/v1/metadata/schemas', () => {
    it('lists the platform schemas and the tenant\'s own, filtered by ?namespace=', async () => {
      await register(schemaBody()).expect(201);
      const all = await t.http.get(SCHEMAS).set(as(tenant, 'viewer'));
      expect(all.status).to.equal(200);
      const names = all.body.data.items.map((s: { namespace: string; name: string }) => `${s.namespace}.${s.name}`);
      expect(names).to.include.members(['crm.deal', 'atlas.place', 'shop.product']);
      expect(all.body.data.pagination).to.include({ total: names.length, hasMore: false, nextCursor: null });
      const deal = all.body.data.items.find((s: { name: string }) => s.name === 'deal');
      expect(deal.scope).to.equal('platform');
      const shop = await t.http.get(SCHEMAS).query({ namespace: 'shop' }).set(as(tenant, 'viewer'));
      expect(shop.body.data.items.map((s: { name: string }) => s.name)).to.deep.equal(['product']);
      const bad = await t.http.get(SCHEMAS).query({ namespace: 'Bad-NS' }).set(as(tenant, 'viewer'));
      expect(bad.status).to.equal(400);
      expect(failCode(bad)).to.equal('invalid_identifier');
    });

    it('keeps a tenant\'s schemas private to that tenant', async () => {
      await register(schemaBody()).expect(201);
      const other = await createTenant(t, 'reg-other');
      const list = await t.http.get(SCHEMAS).query({ namespace: 'shop' }).set(as(other, 'admin'));
      expect(list.body.data.items).to.deep.equal([]);
      const one = await t.http.get(`${SCHEMAS}/shop/product`).set(as(other, 'admin'));
      expect(one.status).to.equal(404);
      expect(failCode(one)).to.equal('schema_not_found');
      const data = await t.http.get('/api/v1/data/shop/product').set(as(other, 'admin'));
      expect(data.status).to.equal(404);
      expect(failCode(data)).to.equal('schema_not_found');
      // The other tenant may register the same name for itself, with another definition.
      const own = await register(schemaBody({ schema: { type: 'object', properties: { colour: { type: 'string' } } }, indexes: [], unique: [] }), as(other, 'admin'));
      expect(own.status).to.equal(201);
      const mine = await t.http.post('/api/v1/data/shop/product').set(as(tenant, 'editor')).send({ colour: 'red' });
      expect(mine.status).to.equal(400);
      const theirs = await t.http.post('/api/v1/data/shop/product').set(as(other, 'editor')).send({ colour: 'red' });
      expect(theirs.status).to.equal(201);
    });
  });

  describe('GET /api/v1/metadata/schemas/:ns/:name', () => {
    it('reads one schema, a platform one too', async () => {
      await register(schemaBody()).expect(201);
      const own = await t.http.get(`${SCHEMAS}/shop/product`).set(as(tenant, 'viewer'));
      expect(own.status).to.equal(200);
      expect(own.body.data.item).to.include({ namespace: 'shop', name: 'product', scope: 'tenant' });
      const deal = await t.http.get(`${SCHEMAS}/crm/deal`).set(as(tenant, 'viewer'));
      expect(deal.status).to.equal(200);
      expect(deal.body.data.item).to.include({ namespace: 'crm', name: 'deal', scope: 'platform' });
      expect(deal.body.data.item.indexes).to.deep.equal([['stage'], ['ownerId']]);
    });

    it('answers 404 schema_not_found and 400 invalid_identifier', async () => {
      const missing = await t.http.get(`${SCHEMAS}/shop/nothing`).set(as(tenant, 'viewer'));
      expect(missing.status).to.equal(404);
      expect(failCode(missing)).to.equal('schema_not_found');
      const bad = await t.http.get(`${SCHEMAS}/shop/BAD`).set(as(tenant, 'viewer'));
      expect(bad.status).to.equal(400);
      expect(failCode(bad)).to.equal('invalid_identifier');
    });
  });
});
