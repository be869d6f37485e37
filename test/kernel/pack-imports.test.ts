import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { packs } from '../../config/packs.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PACKS = join(ROOT, 'packs');
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(?\s*)['"]([^'"]+)['"]/g;

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return filesUnder(path);
    return /\.(ts|tsx|mts)$/.test(entry.name) ? [path] : [];
  });
}

/**
 * What a pack file may import: packages, its own pack's files, core/pack-api, and the schema files of the
 * namespaces its pack declares. Its console screens (packs/<name>/admin/) import packages, their own folder and
 * the console kit (admin/src/pack-kit.ts) only, and no other file of the pack imports them (browser code and
 * service code stay apart). Both may import the pack's `shared/` folder: plain functions of its documents (an
 * order's units left to ship) that import nothing but each other, so that they run alike in the browser and the
 * service. Returns the offending imports as `file: specifier`.
 */
export function forbiddenImports(file: string, source: string, ownNamespaces: string[]): string[] {
  const [pack, folder] = relative(PACKS, file).split(sep);
  const screens = `packs/${pack}/admin/`;
  const shared = `packs/${pack}/shared/`;
  const bad: string[] = [];
  for (const [, specifier] of source.matchAll(SPECIFIER)) {
    if (folder === 'shared') {
      if (!specifier.startsWith('./')) bad.push(`${relative(ROOT, file)}: ${specifier}`);
      continue;
    }
    if (!specifier.startsWith('.')) continue;
    const target = relative(ROOT, resolve(dirname(file), specifier)).split(sep).join('/');
    if (target.startsWith(shared)) continue;
    if (folder === 'admin') {
      if (!target.startsWith(screens) && target !== 'admin/src/pack-kit.js') bad.push(`${relative(ROOT, file)}: ${specifier}`);
      continue;
    }
    if (target.startsWith(screens)) {
      bad.push(`${relative(ROOT, file)}: ${specifier}`);
      continue;
    }
    if (target.startsWith(`packs/${pack}/`)) continue;
    if (target === 'core/pack-api.js' || target === 'core/pack-api/index.js') continue;
    if (ownNamespaces.some((ns) => target.startsWith(`schemas/${ns}/`))) continue;
    bad.push(`${relative(ROOT, file)}: ${specifier}`);
  }
  return bad;
}

const namespacesOf = (pack: string) => packs.find((p) => p.name === pack)?.namespaces?.map((ns) => ns.name) ?? [];

describe('packs import only core/pack-api', () => {
  it('no file under packs/ imports core internals, config or another pack', () => {
    const bad = filesUnder(PACKS).flatMap((file) => {
      const pack = relative(PACKS, file).split(sep)[0];
      return forbiddenImports(file, readFileSync(file, 'utf8'), namespacesOf(pack));
    });
    expect(bad).to.deep.equal([]);
  });

  it('catches an import of a core internal, of config, of another pack and of another pack\'s schema', () => {
    const file = join(PACKS, 'erp', 'example.ts');
    const source = [
      "import { definePack } from '../../core/pack-api.js';",
      "import { Database } from '../../core/db/database.js';",
      "import type { Config } from '../../config/index.js';",
      "import { dealsRoutes } from '../crm/deals.routes.js';",
      "const lazy = await import('../tenant-admin/index.js');",
      "import deal from '../../schemas/crm/deal.schema.json' with { type: 'json' };",
      "import invoice from '../../schemas/erp/invoice.schema.json' with { type: 'json' };",
      "import { totals } from './invoice-totals.js';",
      "import Ajv from 'ajv';",
    ].join('\n');
    expect(forbiddenImports(file, source, ['erp'])).to.deep.equal([
      'packs/erp/example.ts: ../../core/db/database.js',
      'packs/erp/example.ts: ../../config/index.js',
      'packs/erp/example.ts: ../crm/deals.routes.js',
      'packs/erp/example.ts: ../tenant-admin/index.js',
      'packs/erp/example.ts: ../../schemas/crm/deal.schema.json',
    ]);
  });

  it('lets console screens import the console kit and their own folder only, and no service file import them', () => {
    const screen = join(PACKS, 'erp', 'admin', 'Example.tsx');
    const source = [
      "import { api } from '../../../admin/src/pack-kit.js';",
      "import { useState } from 'react';",
      "import type { Ticket } from './TicketPanel.js';",
      "import { session } from '../../../admin/src/api/session.js';",
      "import Carts from '../../crm/admin/Carts.js';",
      "import { placeOrder } from '../orders.service.js';",
      "import { definePack } from '../../../core/pack-api.js';",
    ].join('\n');
    expect(forbiddenImports(screen, source, ['erp'])).to.deep.equal([
      'packs/erp/admin/Example.tsx: ../../../admin/src/api/session.js',
      'packs/erp/admin/Example.tsx: ../../crm/admin/Carts.js',
      'packs/erp/admin/Example.tsx: ../orders.service.js',
      'packs/erp/admin/Example.tsx: ../../../core/pack-api.js',
    ]);
    const service = join(PACKS, 'erp', 'example.ts');
    expect(forbiddenImports(service, "import screens from './admin/screens.js';\nimport { api } from '../../admin/src/pack-kit.js';", ['erp'])).to.deep.equal([
      'packs/erp/example.ts: ./admin/screens.js',
      'packs/erp/example.ts: ../../admin/src/pack-kit.js',
    ]);
  });

  it('lets screens and service files import their own pack\'s shared/ folder, which imports nothing but itself', () => {
    const screen = join(PACKS, 'erp', 'admin', 'Example.tsx');
    expect(forbiddenImports(screen, "import { leftToShip } from '../shared/order-units.js';\nimport { x } from '../../crm/shared/x.js';", ['erp']))
      .to.deep.equal(['packs/erp/admin/Example.tsx: ../../crm/shared/x.js']);
    const service = join(PACKS, 'erp', 'example.ts');
    expect(forbiddenImports(service, "import { leftToShip } from './shared/order-units.js';", ['erp'])).to.deep.equal([]);
    const shared = join(PACKS, 'erp', 'shared', 'units.ts');
    const source = ["import { a } from './other.js';", "import Ajv from 'ajv';", "import { b } from '../orders.service.js';", "import { c } from '../../../core/pack-api.js';"].join('\n');
    expect(forbiddenImports(shared, source, ['erp'])).to.deep.equal([
      'packs/erp/shared/units.ts: ajv', 'packs/erp/shared/units.ts: ../orders.service.js', 'packs/erp/shared/units.ts: ../../../core/pack-api.js',
    ]);
  });
});

/** Names that reach the kernel's record tables or its write path's internals. */
const KERNEL_INTERNALS = /\b(tableName|jsonField|knex|changeWhere|runHooks)\b|records\.repository/g;

describe('packs name no kernel table', () => {
  it('no pack file (its migrations aside) names a record table, knex or the write path\'s internals', () => {
    const bad = filesUnder(PACKS)
      .map((file) => relative(ROOT, file).split(sep).join('/'))
      .filter((file) => !/\/migrations\/|\.migrations?\.ts$/.test(file))
      .flatMap((file) => [...readFileSync(join(ROOT, file), 'utf8').matchAll(KERNEL_INTERNALS)].map((m) => `${file}: ${m[0]}`));
    expect(bad).to.deep.equal([]);
  });
});
