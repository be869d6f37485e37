import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { compileErrors, validate } from '@readme/openapi-parser';
import { createTenant, sharedTestApp, startTestApp, type TestApp } from '../helpers/test-app.js';
import { as, signToken, bearer, superadmin } from '../helpers/tokens.js';
import { packs as defaultPacks } from '../../config/packs.js';
import { probePack } from './probe-pack.js';

const productRegistration = {
  namespace: 'shop',
  name: 'product',
  title: 'Product',
  schema: {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    required: ['sku', 'title'],
    additionalProperties: false,
    properties: {
      sku: { type: 'string' },
      title: { type: 'string' },
      priceCents: { type: 'integer', minimum: 0 },
      tags: { type: 'array' },
      size: { $ref: '#/$defs/size' },
    },
    $defs: { size: { type: 'object', properties: { width: { type: 'number' }, height: { type: 'number' } } } },
  },
};

async function expectValid(doc: unknown): Promise<void> {
  const result = await validate(structuredClone(doc) as never);
  expect(result.valid, result.valid ? '' : compileErrors(result)).to.equal(true);
}

function operations(doc: any): Array<{ path: string; method: string; op: any }> {
  return Object.entries(doc.paths as Record<string, Record<string, any>>)
    .flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ path, method, op })));
}

describe('GET /api/v1/openapi.json', () => {
  let t: TestApp;

  before(async () => {
    t = await sharedTestApp();
  });

  it('answers the platform document, valid OpenAPI 3.1, with every declared route', async () => {
    const res = await t.http.get('/api/v1/openapi.json');
    expect(res.status).to.equal(200);
    expect(res.headers['content-type']).to.match(/^application\/json/);
    const doc = res.body;
    expect(doc.openapi).to.equal('3.1.0');
    await expectValid(doc);
    const listed = new Set(operations(doc).map(({ path, method }) => `${method} ${path}`));
    for (const route of t.app.routes) {
      const path = route.path.replace(/[:*]([A-Za-z_$][\w$]*)/g, '{$1}');
      expect(listed.has(`${route.method} ${path}`), `${route.method} ${path}`).to.equal(true);
    }
    expect(listed).to.include('post /api/v1/data/{ns}/{schema}');
    expect(listed).to.include('get /api/v1/data/{ns}/{schema}/{id}');
    const ids = operations(doc).map(({ op }) => op.operationId);
    expect(new Set(ids).size).to.equal(ids.length);
  });

  it('wraps success responses in the route family\'s envelope and declares the error envelopes', async () => {
    const doc = (await t.http.get('/api/v1/openapi.json')).body;
    const createTenantOp = doc.paths['/api/v1/admin/tenants'].post;
    const bff = createTenantOp.responses['201'].content['application/json'].schema;
    expect(bff.required).to.have.members(['status', 'data', 'message', 'error']);
    expect(bff.properties.data.properties).to.include.keys('id', 'name', 'plan', 'status');
    expect(createTenantOp.requestBody.content['application/json'].schema.required).to.deep.equal(['name']);
    expect(createTenantOp.responses['403'].content['application/json'].schema.allOf[0].$ref).to.equal('#/components/schemas/BffError');
    expect(createTenantOp.responses['403'].description).to.contain('superadmin_required');

    const createRecord = doc.paths['/api/v1/data/{ns}/{schema}'].post;
    expect(createRecord.responses['201'].content['application/json'].schema.required).to.deep.equal(['status', 'data']);
    expect(createRecord.responses['404'].content['application/json'].schema.allOf[0].$ref).to.equal('#/components/schemas/JSendFail');
    expect(createRecord.responses['404'].description).to.contain('schema_not_found');
    expect(createRecord.responses['500'].content['application/json'].schema.allOf[0].$ref).to.equal('#/components/schemas/JSendError');
    expect(createRecord.responses['401'].headers).to.have.property('WWW-Authenticate');
    expect(doc.components.schemas).to.include.keys('BffError', 'JSendFail', 'JSendError', 'Pagination', 'ErrorDetail');

    const list = doc.paths['/api/v1/data/{ns}/{schema}'].get;
    const names = list.parameters.map((p: { name?: string; $ref?: string }) => p.name ?? p.$ref);
    expect(names).to.include.members(['ns', 'schema', 'limit', 'offset', 'cursor', 'sort', 'fields', 'count', 'filter', '#/components/parameters/TenantHeader']);
    const patch = doc.paths['/api/v1/data/{ns}/{schema}/{id}'].patch;
    expect(patch.parameters.map((p: { name?: string }) => p.name)).to.include('If-Match');
    expect(patch.responses['200'].headers).to.have.property('ETag');
    expect(patch.responses['412'].description).to.contain('version_mismatch');
  });

  it('declares bearer JWT and, outside production, the test key as security schemes', async () => {
    const doc = (await t.http.get('/api/v1/openapi.json')).body;
    expect(doc.components.securitySchemes.bearerAuth).to.include({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' });
    expect(doc.components.securitySchemes).to.have.property('testKey');
    expect(doc.paths['/api/v1/health'].get.security).to.deep.equal([]);
    expect(doc.paths['/api/v1/metadata/schemas'].post.security).to.deep.equal([{ bearerAuth: [] }, { testKey: [] }]);
    expect(doc.tags.map((tag: { name: string }) => tag.name)).to.include.members(['data', 'metadata', 'tenants', 'operations']);
  });

  it('contains the tenant\'s registered schemas as concrete paths when called with its token', async () => {
    const tenant = await createTenant(t, 'oas');
    await t.http.post('/api/v1/metadata/schemas').set(as(tenant, 'admin')).send(productRegistration).expect(201);

    const res = await t.http.get('/api/v1/openapi.json').set(as(tenant, 'viewer'));
    expect(res.status).to.equal(200);
    expect(res.headers['cache-control']).to.equal('private, no-store');
    const doc = res.body;
    await expectValid(doc);
    expect(doc.paths).to.include.keys('/api/v1/data/shop/product', '/api/v1/data/shop/product/{id}', '/api/v1/data/crm/deal');

    const input = doc.components.schemas['data.shop.product'];
    expect(input).to.not.have.property('$schema');
    expect(input.required).to.deep.equal(['sku', 'title']);
    expect(input.properties.size.$ref).to.equal('#/components/schemas/data.shop.product/$defs/size');
    const create = doc.paths['/api/v1/data/shop/product'].post;
    expect(create.requestBody.content['application/json'].schema.$ref).to.equal('#/components/schemas/data.shop.product');
    expect(create.parameters.map((p: { name?: string }) => p.name)).to.not.include('ns');
    const record = doc.components.schemas['data.shop.product.record'];
    expect(record.required).to.include.members(['sku', 'title', 'id', 'createdAt', 'updatedAt', 'version']);
    const item = doc.paths['/api/v1/data/shop/product/{id}'].get.responses['200'].content['application/json'].schema;
    expect(item.properties.data.properties.item.$ref).to.equal('#/components/schemas/data.shop.product.record');
    const filters = doc.paths['/api/v1/data/shop/product'].get.parameters.map((p: { name?: string }) => p.name);
    expect(filters).to.include.members(['filter[sku]', 'filter[priceCents]', 'filter[createdAt]', 'limit', 'cursor']);

    // What the document promises, the API does: a record built from the item schema's fields is accepted.
    const created = await t.http.post('/api/v1/data/shop/product').set(as(tenant, 'editor')).send({ sku: 'A', title: 'Lamp', size: { width: 2 } });
    expect(created.status).to.equal(201);
    expect(Object.keys(record.properties)).to.include.members(Object.keys(created.body.data.item));
  });

  it('answers the same tenant document to a superadmin naming the tenant with X-Tenant-Id', async () => {
    const tenant = await createTenant(t, 'oas');
    await t.http.post('/api/v1/metadata/schemas').set(as(tenant, 'admin')).send(productRegistration).expect(201);
    const res = await t.http.get('/api/v1/openapi.json').set(superadmin(tenant));
    expect(res.status).to.equal(200);
    expect(res.body.paths).to.have.property('/api/v1/data/shop/product');
  });

  it('never shows a tenant\'s schemas to another tenant or without credentials', async () => {
    const owner = await createTenant(t, 'oas');
    const other = await createTenant(t, 'oas');
    await t.http.post('/api/v1/metadata/schemas').set(as(owner, 'admin')).send({ ...productRegistration, name: 'secret_thing' }).expect(201);
    const foreign = await t.http.get('/api/v1/openapi.json').set(as(other, 'viewer'));
    expect(foreign.body.paths).to.not.have.property('/api/v1/data/shop/secret_thing');
    const anonymous = await t.http.get('/api/v1/openapi.json');
    expect(Object.keys(anonymous.body.paths).filter((p) => p.startsWith('/api/v1/data/shop'))).to.deep.equal([]);
  });

  it('leaves out the schemas of a licensed module the tenant has disabled', async () => {
    const tenant = await createTenant(t, 'oas');
    // The kernel's module switch (tenant administration's PATCH comes with its pack).
    await t.app.kernel.tenants.setModule({ tenantId: tenant, principal: null, requestId: 'test' }, tenant, 'crm', false);
    const res = await t.http.get('/api/v1/openapi.json').set(as(tenant, 'viewer'));
    expect(res.body.paths).to.not.have.property('/api/v1/data/crm/deal');
  });

  it('answers 401 invalid_token for a bad token and 403 for a foreign X-Tenant-Id', async () => {
    const bad = await t.http.get('/api/v1/openapi.json').set(bearer(signToken({ tenantId: 'x', secret: 'another-secret-0123456789abcdef' })));
    expect(bad.status).to.equal(401);
    expect(bad.body.error.code).to.equal('invalid_token');
    const tenant = await createTenant(t, 'oas');
    const foreign = await t.http.get('/api/v1/openapi.json').set({ ...as(tenant, 'viewer'), 'X-Tenant-Id': 'someone-else' });
    expect(foreign.status).to.equal(403);
  });

  it('answers 404 tenant_not_found when a superadmin names an unknown tenant', async () => {
    const res = await t.http.get('/api/v1/openapi.json').set(superadmin('no-such-tenant'));
    expect(res.status).to.equal(404);
    expect(res.body.error.code).to.equal('tenant_not_found');
  });

  describe('in production', () => {
    let prod: TestApp;

    before(async () => {
      prod = await startTestApp({ database: t.database, env: { NODE_ENV: 'production', ALLOW_PRIVATE_NETWORK_FETCH: 'false', MIGRATE_ON_START: 'false' } });
    });

    after(async () => {
      await prod?.close();
    });

    it('omits the test key from the security schemes', async () => {
      const doc = (await prod.http.get('/api/v1/openapi.json')).body;
      await expectValid(doc);
      expect(doc.components.securitySchemes).to.have.keys('bearerAuth');
      expect(doc.paths['/api/v1/metadata/schemas'].post.security).to.deep.equal([{ bearerAuth: [] }]);
    });
  });
});

describe('GET /api/v1/openapi.json with a pack declaring wildcard and optional segments', () => {
  let shared: TestApp;
  let t: TestApp;

  before(async () => {
    shared = await sharedTestApp();
    t = await startTestApp({ database: shared.database, packs: [...defaultPacks, probePack], env: { MIGRATE_ON_START: 'false' } });
  });

  after(async () => {
    await t?.close();
  });

  it('turns *path into {path} and lists an optional segment as two paths', async () => {
    const echoed = await t.http.get('/api/v1/probe/files/a/b.txt');
    expect(echoed.body.data.path).to.equal('a/b.txt');
    const doc = (await t.http.get('/api/v1/openapi.json')).body;
    await expectValid(doc);
    const wildcard = doc.paths['/api/v1/probe/files/{path}'].get;
    expect(wildcard.parameters[0]).to.include({ name: 'path', in: 'path', required: true, 'x-wildcard': true });
    expect(doc.paths).to.include.keys('/api/v1/probe/reports/{year}', '/api/v1/probe/reports');
    expect(doc.paths['/api/v1/probe/reports'].get.parameters).to.deep.equal([]);
  });

  it('moves a body schema with $id and $defs into components and lists query properties as parameters', async () => {
    await t.http.post('/api/v1/probe/notes?mode=draft').send({ text: 'hi', author: { name: 'Ada' } }).expect(201);
    const doc = (await t.http.get('/api/v1/openapi.json')).body;
    await expectValid(doc);
    const op = doc.paths['/api/v1/probe/notes'].post;
    const ref = op.requestBody.content['application/json'].schema.$ref;
    expect(ref).to.equal('#/components/schemas/schemas.example_probe_note');
    const component = doc.components.schemas['schemas.example_probe_note'];
    expect(component).to.not.have.any.keys('$id', '$schema');
    expect(component.properties.author.$ref).to.equal('#/components/schemas/schemas.example_probe_note/$defs/person');
    const mode = op.parameters.find((p: { name: string }) => p.name === 'mode');
    expect(mode).to.deep.include({ in: 'query', required: true, description: 'How to store it' });
    expect(mode.schema.enum).to.deep.equal(['draft', 'final']);
    expect(op.parameters.find((p: { name: string }) => p.name === 'meta')).to.include({ style: 'deepObject', required: false });
    expect(op.responses['201'].content['application/json'].schema.properties.data.properties.text.type).to.equal('string');
    expect(op.responses['400'].description).to.contain('validation_failed').and.contain('invalid_json');

    const blob = doc.paths['/api/v1/probe/blobs'].post;
    expect(blob.requestBody.content).to.have.key('application/octet-stream');
  });
});

describe('npm run openapi', () => {
  it('writes the platform document to the file it is given', async function () {
    this.timeout(60_000);
    const dir = mkdtempSync(join(tmpdir(), 'hp-openapi-'));
    const file = join(dir, 'platform.json');
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/openapi.ts', file], { encoding: 'utf8', env: { ...process.env, NODE_ENV: 'production', SIGNING_SECRET: 'x'.repeat(32), SETTINGS_ENCRYPTION_KEY: 'y'.repeat(32), AUTH_JWT_SECRET: 'z'.repeat(32) } });
    expect(run.status, run.stderr).to.equal(0);
    expect(run.stdout).to.match(/Wrote .*platform\.json: \d+ operations, \d+ bytes/);
    const doc = JSON.parse(readFileSync(file, 'utf8'));
    await expectValid(doc);
    expect(doc.paths).to.have.property('/api/v1/data/{ns}/{schema}');
    expect(doc.components.securitySchemes).to.not.have.property('testKey');
    rmSync(dir, { recursive: true, force: true });
  });
});
