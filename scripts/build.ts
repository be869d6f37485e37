import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as esbuild from 'esbuild';
import { PACKAGE_ROOT } from '../core/base/package-root.js';

/**
 * npm run build (also run by `npm install` through `prepare`, and by `npm start` when a source is newer than
 * its last build): transpiles the service's TypeScript — core/, packs/, config/ — file by file into dist/
 * with esbuild, mirroring the tree (core/main.ts → dist/core/main.js): ESM, an external source map beside
 * each file, no bundling, so the lazy `import()`s (MCP, page extraction, the S3 and CSV libraries) stay lazy.
 * Relative imports of files that are not compiled (the JSON schemas under schemas/) are pointed back at the
 * sources; a relative `.js` import whose `.ts` is not among the compiled files fails the build. Type checking
 * stays `npm run typecheck`'s job. About a second for the whole service.
 *
 *   node --import tsx scripts/build.ts [--if-stale] [dir...]     (default dirs: core packs config)
 */

export const SERVICE_DIRS = ['core', 'packs', 'config'];
export const DIST = join(PACKAGE_ROOT, 'dist');
/** Where the build records, per source folder, what it compiled (to tell when it is stale). */
const STAMP = '.build.json';
const SELF = join(PACKAGE_ROOT, 'scripts', 'build.ts');

export interface BuildResult {
  /** Source folders compiled this time (the others were up to date). */
  built: string[];
  files: number;
  ms: number;
}

function sourcesUnder(dir: string): string[] {
  return readdirSync(join(PACKAGE_ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts') && !name.endsWith('.d.ts') && !name.endsWith('.test.ts'))
    // A pack's console screens (packs/<name>/admin/) are built into the console by Vite, not into the service.
    .filter((name) => !(dir === 'packs' && /^[^/\\]+[/\\]admin[/\\]/.test(name)))
    .map((name) => join(dir, name).split(sep).join('/'))
    .sort();
}

/** A folder is stale when its list of sources changed or a source (or this script) is newer than its last build. */
function isStale(dir: string, sources: string[]): boolean {
  const stamp = join(DIST, dir, STAMP);
  if (!existsSync(stamp)) return true;
  const builtAt = statSync(stamp).mtimeMs;
  const recorded = (JSON.parse(readFileSync(stamp, 'utf8')) as { sources: string[] }).sources;
  if (recorded.length !== sources.length || recorded.some((s, i) => s !== sources[i])) return true;
  return statSync(SELF).mtimeMs > builtAt || sources.some((s) => statSync(join(PACKAGE_ROOT, s)).mtimeMs > builtAt);
}

const SPECIFIER = /(\bfrom\s*|\bimport\s*\(?\s*)"(\.\.?\/[^"]*)"/g;

/**
 * Rewrites one compiled file's relative imports: `.js` ones must name a compiled source (kept as they are:
 * dist/ mirrors the tree); any other (a JSON schema) is pointed at the file in the sources.
 */
function relink(code: string, source: string, compiled: Set<string>): string {
  return code.replace(SPECIFIER, (whole, lead: string, specifier: string) => {
    const target = relative(PACKAGE_ROOT, resolve(PACKAGE_ROOT, dirname(source), specifier)).split(sep).join('/');
    if (specifier.endsWith('.js')) {
      const ts = target.replace(/\.js$/, '.ts');
      if (!compiled.has(ts)) throw new Error(`${source} imports ${specifier}, and ${ts} is not compiled (build ${ts.split('/')[0]}/ too, or import it differently)`);
      return whole;
    }
    if (!existsSync(join(PACKAGE_ROOT, target))) throw new Error(`${source} imports ${specifier}, which does not exist`);
    let back = relative(join(DIST, dirname(source)), join(PACKAGE_ROOT, target)).split(sep).join('/');
    if (!back.startsWith('.')) back = `./${back}`;
    return `${lead}"${back}"`;
  });
}

/** Writes a file so that a process importing it meanwhile sees the old or the new text, never half of it. */
function writeAtomically(file: string, text: string | Uint8Array): void {
  mkdirSync(dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, text);
  renameSync(temporary, file);
}

/** The package's own TypeScript files an entry point reaches through its imports (static and `import()`). */
async function importClosure(entries: string[]): Promise<string[]> {
  const result = await esbuild.build({
    absWorkingDir: PACKAGE_ROOT, entryPoints: entries, bundle: true, packages: 'external', platform: 'node', format: 'esm',
    target: 'node20.10', write: false, metafile: true, logLevel: 'silent', outdir: DIST,
  });
  return Object.keys(result.metafile.inputs).filter((file) => file.endsWith('.ts') && !file.includes('node_modules/')).sort();
}

/**
 * Compiles `dirs` (relative to the package root) into dist/, and with `entries` (e.g. a benchmark's
 * comparator, scripts/bench/baseline-server.ts) every file those reach outside `dirs`. With `ifStale`,
 * folders whose last build is current are left alone (entries' files are compiled every time). Outputs
 * whose source is gone are removed from the folders compiled.
 */
export async function build({ dirs = SERVICE_DIRS, entries = [], ifStale = false }: { dirs?: string[]; entries?: string[]; ifStale?: boolean } = {}): Promise<BuildResult> {
  const started = performance.now();
  const sourcesByDir = new Map(dirs.map((dir) => [dir, sourcesUnder(dir)]));
  const inDirs = new Set([...sourcesByDir.values()].flat());
  const extra = (entries.length ? await importClosure(entries) : []).filter((file) => !inDirs.has(file));
  const compiled = new Set([...inDirs, ...extra]);
  const todo = dirs.filter((dir) => !ifStale || isStale(dir, sourcesByDir.get(dir)!));
  let files = 0;
  if (todo.length || extra.length) {
    const entryPoints = [...todo.flatMap((dir) => sourcesByDir.get(dir)!), ...extra].map((s) => join(PACKAGE_ROOT, s));
    const result = await esbuild.build({
      absWorkingDir: PACKAGE_ROOT,
      entryPoints,
      outbase: PACKAGE_ROOT,
      outdir: DIST,
      bundle: false,
      format: 'esm',
      platform: 'node',
      target: 'node20.10', // import attributes (`with { type: 'json' }`) are kept from 20.10 on
      sourcemap: 'linked',
      sourcesContent: false,
      tsconfig: join(PACKAGE_ROOT, 'tsconfig.json'),
      write: false,
      logLevel: 'silent',
    });
    for (const output of result.outputFiles) {
      const out = relative(DIST, output.path).split(sep).join('/');
      if (out.endsWith('.js')) {
        writeAtomically(output.path, relink(output.text, out.replace(/\.js$/, '.ts'), compiled));
        files += 1;
      } else {
        writeAtomically(output.path, output.contents);
      }
    }
    for (const dir of todo) {
      const sources = sourcesByDir.get(dir)!;
      const wanted = new Set(sources.flatMap((s) => [s.replace(/\.ts$/, '.js'), s.replace(/\.ts$/, '.js.map')]));
      for (const name of readdirSync(join(DIST, dir), { recursive: true, encoding: 'utf8' })) {
        const path = join(DIST, dir, name);
        if (/\.js(\.map)?$/.test(name) && !wanted.has(`${dir}/${name.split(sep).join('/')}`)) rmSync(path, { force: true });
      }
      writeAtomically(join(DIST, dir, STAMP), JSON.stringify({ sources }));
    }
  }
  return { built: [...todo, ...(extra.length ? [`${extra.length} files for ${entries.join(', ')}`] : [])], files, ms: Math.round(performance.now() - started) };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const args = process.argv.slice(2);
  const ifStale = args.includes('--if-stale');
  const dirs = args.filter((a) => !a.startsWith('--'));
  try {
    const result = await build({ dirs: dirs.length ? dirs : SERVICE_DIRS, ifStale });
    if (result.built.length) console.error(`built ${result.built.join(', ')} into dist/ (${result.files} files) in ${result.ms} ms`);
  } catch (err) {
    console.error(`build failed: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  }
}
