import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
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
