import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { createTenant, sharedTestApp, type TestApp } from '../helpers/test-app.js';
import { superadmin } from '../helpers/tokens.js';

describe('npm run types -- --tenant <id> --out <file>', function () {
  this.timeout(120_000);
  let t: TestApp;

  before(async () => {
    t = await sharedTestApp();
  });

  it('writes TypeScript types of the tenant\'s schemas from its OpenAPI document (openapi-typescript)', async () => {
    const tenant = await createTenant(t, 'types');
    await t.http.post('/api/v1/metadata/schemas').set(superadmin(tenant)).send({
      namespace: 'shop', name: 'widget',
      schema: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, priceCents: { type: 'integer' }, size: { enum: ['s', 'm'] } } },
    }).expect(201);
    const folder = mkdtempSync(join(tmpdir(), 'hp-test-types-'));
    const out = join(folder, 'api.d.ts');
    const result = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/types.ts', '--tenant', tenant, '--out', out], {
      env: { ...process.env, DATABASE_URL: t.database.url, MIGRATE_ON_START: 'false', LOG_LEVEL: 'silent' }, encoding: 'utf8',
    });
    expect(result.status, result.stderr).to.equal(0);
    const types = readFileSync(out, 'utf8');
    rmSync(folder, { recursive: true, force: true });
    expect(types).to.contain('"/api/v1/data/shop/widget"');
    expect(types).to.contain("export type ShopWidget = components['schemas']['data.shop.widget.record'];");
    const start = types.indexOf('"data.shop.widget": {');
    const widget = types.slice(start, types.indexOf('};', start));
    expect(widget).to.contain('name: string;').and.contain('priceCents?: number;').and.contain('size?: "s" | "m";');
  });

  it('fails with a message for an unknown tenant', () => {
    const result = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/types.ts', '--tenant', 'no-such-tenant'], {
      env: { ...process.env, DATABASE_URL: t.database.url, MIGRATE_ON_START: 'false', LOG_LEVEL: 'silent' }, encoding: 'utf8',
    });
    expect(result.status).to.equal(1);
    expect(result.stderr).to.match(/no-such-tenant/);
  });
});
