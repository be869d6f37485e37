import { expect } from 'chai';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { packs } from '../../config/packs.js';
import { definePack } from '../../core/kernel/define-pack.js';
import { PACK_SCREENS_FILE, packScreensModule } from '../../scripts/admin-pack-screens.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CONSOLE = join(ROOT, 'admin', 'src');

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return filesUnder(path);
    return /\.(ts|tsx)$/.test(entry.name) ? [path] : [];
  });
}

/** The names a pack owns: its namespaces (schemas `ns.name`, events `ns.*`) and its module code (routes `/ns/...`). */
const packWords = [...new Set(packs.flatMap((p) => [...(p.namespaces ?? []).map((ns) => ns.name), ...(p.licensed ? [p.licensed] : [])]))];

/**
 * The first path segment of each route a pack declares (`/tenants/:id/branding` → `tenants`), by running its
 * `routes` against a router that records paths, with a context that answers anything. Segments that several packs
 * share (`public`), that the kernel serves too (`tenants`: its audit log and API tokens) or that the console's own
 * address starts with (`admin`) are left out: they name no one pack.
 */
function packRouteSegments(): string[] {
  const anything: any = new Proxy(function anything() {}, {
    get: (_target, key) => (key === 'then' ? undefined : key === Symbol.toPrimitive ? () => 'x' : anything),
    apply: () => anything,
    construct: () => anything,
  });
  const owners = new Map<string, Set<string>>();
  for (const pack of packs) {
    const router = new Proxy({}, { get: () => (path: string) => {
      const segment = String(path).split('/')[1];
      owners.set(segment, (owners.get(segment) ?? new Set()).add(pack.name));
    } });
    pack.routes?.(router as never, anything);
  }
  const kernel = new Set(filesUnder(join(ROOT, 'core')).filter((file) => file.endsWith('.routes.ts'))
    .flatMap((file) => [...readFileSync(file, 'utf8').matchAll(/router\.(?:get|post|put|patch|delete)\('\/([a-z][a-z0-9-]*)/g)].map((m) => m[1])));
  return [...owners].filter(([segment, by]) => by.size === 1 && !kernel.has(segment) && segment !== 'admin' && /^[a-z]/.test(segment)).map(([segment]) => segment);
}

/**
 * Where `source` names one of `words` as a schema, event, namespace or route (`'erp.order'`, `'erp.*'`, `'crm'`,
 * `/crm/carts`), or one of the route `segments` (`/tenants/...`).
 */
export function packNames(source: string, words: string[], segments: string[] = []): string[] {
  const found: string[] = [];
  const patterns = [
    ...words.map((word) => new RegExp(`['"\`/]${word}['"\`/?]|\\b${word}\\.[a-z_*]`, 'g')),
    ...segments.map((segment) => new RegExp(`/${segment}['"\`/?]`, 'g')),
  ];
  for (const pattern of patterns) {
    for (const match of source.matchAll(pattern)) {
      const line = source.slice(0, match.index).split('\n').length;
      found.push(`${line}: ${match[0]}`);
    }
  }
  return found;
}

describe('the generic console names no pack; packs declare their screens (#28)', () => {
  it('no file under admin/src names a pack namespace, schema, event or route', () => {
    expect(packWords).to.include.members(['cms', 'crm', 'erp']);
    const segments = packRouteSegments();
    expect(segments).to.include.members(['crm', 'erp', 'cms', 'platform']).and.not.include('tenants');
    const named = filesUnder(CONSOLE).flatMap((file) => packNames(readFileSync(file, 'utf8'), packWords, segments).map((hit) => `${relative(ROOT, file)}:${hit}`));
    expect(named).to.deep.equal([]);
  });

  it('the scan catches a schema, an event pattern, a namespace and a route', () => {
    const source = [
      "const sealed = new Set(['erp.order']);",
      "helperText: 'erp.*, or * for all'",
      "if (ns === 'cms' && name === 'content') {}",
      "navigate('/crm/tickets/new');",
      'api(`/crm/coupons?limit=${n}`);',
      "const crmless = 'scrm'; // a word in a sentence: crm",
      "api(tenantPath('/branding'), `/tenants/${id}/domains`);",
    ].join('\n');
    expect(packNames(source, ['cms', 'crm', 'erp'], ['tenants', 'branding'])).to.deep.equal(['3: \'cms\'', '4: /crm/', '5: /crm/', '1: erp.o', '2: erp.*', '7: /tenants/', '7: /branding\'']);
  });

  it('admin/pack-screens.generated.ts imports the admin module of each pack that declares one, in config/packs.ts order', () => {
    const text = readFileSync(PACK_SCREENS_FILE, 'utf8');
    expect(text, 'run npm run build:admin to write it again').to.equal(packScreensModule(packs));
    const declared = packs.filter((p) => p.admin).map((p) => p.name);
    expect(declared).to.include.members(['cms', 'crm', 'erp']);
    for (const name of declared) expect(text).to.include(`'../packs/${name}/admin/screens.js'`);
  });

  it('each pack declares console paths of its own (from /, none shared) and screens for schemas of its own namespaces', async () => {
    // Loaded as the console loads it: the declarations only (the screens behind their loaders are not imported).
    const { packScreens } = await import(pathToFileURL(PACK_SCREENS_FILE).href) as { packScreens: Array<{ pack: string; screens: Record<string, any> }> };
    const owner = new Map<string, string>();
    const problems: string[] = [];
    for (const { pack, screens } of packScreens) {
      const namespaces = packs.find((p) => p.name === pack)?.namespaces?.map((ns) => ns.name) ?? [];
      for (const path of [...(screens.routes ?? []).map((r: { path: string }) => r.path), ...(screens.menu ?? []).map((m: { to: string }) => m.to)]) {
        if (!path.startsWith('/')) problems.push(`${pack}: ${path} does not start with /`);
      }
      for (const { path } of screens.routes ?? []) {
        if (owner.has(path) && owner.get(path) !== pack) problems.push(`${pack}: ${path} is ${owner.get(path)}'s too`);
        owner.set(path, pack);
      }
      const schemas = [
        ...[...(screens.panels ?? []), ...(screens.listActions ?? [])].map((p: { resource: string }) => p.resource),
        ...(screens.hidden ?? []), ...(screens.menu ?? []).flatMap((m: { needs?: string }) => (m.needs ? [m.needs] : [])),
        ...(screens.inputs ?? []).map((i: { namespace: string }) => `${i.namespace}.`),
      ];
      for (const schema of schemas) if (!namespaces.includes(schema.split('.')[0])) problems.push(`${pack}: ${schema} is not of its namespaces`);
    }
    expect(problems).to.deep.equal([]);
    expect(owner.get('/crm/carts')).to.equal('crm');
  });

  it('a pack\'s admin module must be a .ts or .tsx file under its admin/ folder, and exist', () => {
    expect(definePack({ name: 'shop', admin: 'admin/screens.ts' }).admin).to.equal('admin/screens.ts');
    for (const admin of ['../erp/admin/screens.ts', 'screens.ts', 'admin/../../x.ts', '/abs/admin/screens.ts', 'admin/screens.js']) {
      expect(() => definePack({ name: 'shop', admin }), admin).to.throw(/invalid admin module/);
    }
    const root = mkdtempSync(join(tmpdir(), 'pack-screens-'));
    const shop = definePack({ name: 'shop-floor', admin: 'admin/screens.ts' });
    mkdirSync(join(root, 'packs', 'shop-floor', 'admin'), { recursive: true });
    expect(() => packScreensModule([shop], root)).to.throw('pack shop-floor: its admin module packs/shop-floor/admin/screens.ts does not exist');
    writeFileSync(join(root, 'packs', 'shop-floor', 'admin', 'screens.ts'), 'export default {};\n');
    const text = packScreensModule([shop, definePack({ name: 'plain' })], root);
    expect(text).to.include("import shopFloorScreens from '../packs/shop-floor/admin/screens.js';");
    expect(text).to.include("{ pack: 'shop-floor', screens: shopFloorScreens },").and.not.include('plain');
  });
});
