import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Runs a TypeScript entry point of the copy with tsx, as npm scripts do. */
function run(cwd: string, args: string[], env: Record<string, string> = {}) {
  const result = spawnSync(process.execPath, ['--import', 'tsx', ...args], { cwd, encoding: 'utf8', env: { ...process.env, ...env }, timeout: 120_000 });
  return { status: result.status, out: `${result.stdout}${result.stderr}` };
}

describe('npm run new-pack -- <name> [thing]', function () {
  this.timeout(180_000);
  let copy: string;

  before(() => {
    // A temp copy of the repository, so that the generated files never land in the working tree.
    copy = mkdtempSync(join(tmpdir(), 'hp-new-pack-'));
    for (const path of ['config', 'core', 'packs', 'schemas', 'scripts', 'test/helpers', 'package.json', 'tsconfig.json']) {
      cpSync(join(ROOT, path), join(copy, path), { recursive: true });
    }
    symlinkSync(realpathSync(join(ROOT, 'node_modules')), join(copy, 'node_modules'), 'dir');
  });

  after(() => {
    if (copy) rmSync(copy, { recursive: true, force: true });
  });

  it('creates the pack, its schema and a test, and says how to list the pack', () => {
    const { status, out } = run(copy, ['scripts/new-pack.ts', 'book-shelf', 'book']);
    expect(status, out).to.equal(0);
    for (const file of ['packs/book-shelf/index.ts', 'schemas/book_shelf/book.schema.json', 'test/packs/book-shelf/book-shelf.test.ts']) {
      expect(existsSync(join(copy, file)), file).to.equal(true);
      expect(out).to.include(file);
    }
    expect(out).to.include("import bookShelf from '../packs/book-shelf/index.js';");
    const definition = JSON.parse(readFileSync(join(copy, 'schemas/book_shelf/book.schema.json'), 'utf8'));
    expect(definition).to.include({ namespace: 'book_shelf', name: 'book' });
    const source = readFileSync(join(copy, 'packs/book-shelf/index.ts'), 'utf8');
    expect(source).to.include("router.get('/book-shelf/books'");
    // One namespace, one schema, an endpoint, a hook and a handler, importing only the pack API, in under 80 lines.
    expect(source.split('\n').length).to.be.below(80);
    expect(source.match(/from '[^']+'/g)).to.deep.equal(["from '../../core/pack-api.js'", "from '../../schemas/book_shelf/book.schema.json'"]);
  });

  it('generates a test that passes through HTTP on this engine', () => {
    const stats = join(copy, 'stats.json');
    const { status, out } = run(copy, ['test/helpers/run-mocha.ts', 'test/packs/book-shelf'], { STATS_FILE: stats });
    expect(status, out).to.equal(0);
    expect(JSON.parse(readFileSync(stats, 'utf8'))).to.deep.equal({ passes: 4, failures: 0, pending: 0 });
  });

  it('writes "an" before a schema name that starts with a vowel (#34)', () => {
    const { status, out } = run(copy, ['scripts/new-pack.ts', 'sign-up', 'account']);
    expect(status, out).to.equal(0);
    const source = readFileSync(join(copy, 'packs/sign-up/index.ts'), 'utf8');
    expect(source).to.include("summary: 'Create an account'");
    expect(source).to.not.include('a account');
    expect(readFileSync(join(copy, 'test/packs/sign-up/sign-up.test.ts'), 'utf8')).to.include("it('creates an account,");
  });

  it('stops the boot with one line naming the pack and the key for a malformed hook key or an `on` key that matches no event (#34)', () => {
    const listed = readFileSync(join(copy, 'config/packs.ts'), 'utf8');
    const boot = (pack: string) => {
      writeFileSync(join(copy, 'packs/broken/index.ts'), pack);
      writeFileSync(join(copy, 'config/packs.ts'), `${listed.replace('\nexport const packs', "\nimport broken from '../packs/broken/index.js';\nexport const packs").replace(/\];\s*$/, ', broken];\n')}`);
      return run(copy, ['core/main.ts'], { DATABASE_URL: 'sqlite::memory:', PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', NODE_ENV: 'development' });
    };
    mkdirSync(join(copy, 'packs/broken'), { recursive: true });
    try {
      const hook = boot(`import { definePack } from '../../core/pack-api.js';
export default definePack({ name: 'broken', hooks: { 'erp.order.created': ({ data }) => data } });
`);
      expect(hook.status, hook.out).to.equal(1);
      expect(hook.out.trim().split('\n')).to.have.length(1);
      expect(hook.out).to.include('broken').and.include('"erp.order.created"');
      expect(hook.out).to.not.match(/\n\s+at /);
      const typo = boot(`import { definePack } from '../../core/pack-api.js';
export default definePack({ name: 'broken', requires: ['erp'], on: { 'erp.orders.*': () => {} } });
`);
      expect(typo.status, typo.out).to.equal(1);
      expect(typo.out.trim().split('\n')).to.have.length(1);
      expect(typo.out).to.include('"broken"').and.include('"erp.orders.*"');
    } finally {
      writeFileSync(join(copy, 'config/packs.ts'), listed);
    }
  });

  it('refuses a pack that exists and a name that is not kebab-case', () => {
    const again = run(copy, ['scripts/new-pack.ts', 'book-shelf']);
    expect(again.status).to.equal(1);
    expect(again.out).to.include('Already there: packs/book-shelf');
    const bad = run(copy, ['scripts/new-pack.ts', 'Bad_Name']);
    expect(bad.status).to.equal(1);
    expect(bad.out).to.include('must be kebab-case');
    const none = run(copy, ['scripts/new-pack.ts']);
    expect(none.status).to.equal(1);
    expect(none.out).to.include('Usage: npm run new-pack');
  });
});
