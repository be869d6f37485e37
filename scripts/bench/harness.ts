import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type RequestListener } from 'node:http';
import { SourceMap } from 'node:module';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../../core/base/package-root.js';
import { createScratchDatabase, type Engine } from '../../test/helpers/engine.js';
import { freePort } from '../../test/helpers/service-process.js';

/** What the benchmark scripts share: a throwaway database, the service's environment, its process. */

export type { Engine };
export { freePort };

/** The package root, with a trailing slash. */
export const ROOT = `${PACKAGE_ROOT}/`;
export const JWT_SECRET = 'bench-jwt-secret-0123456789abcdef';
export const DEFAULT_POSTGRES_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** A fresh database: a SQLite file in a temporary folder, or a new PostgreSQL database on `postgresUrl`'s server. */
export function makeDatabase(engine: Engine, postgresUrl = DEFAULT_POSTGRES_URL): Promise<{ url: string; drop(): Promise<void> }> {
  return createScratchDatabase(engine, { adminUrl: postgresUrl, prefix: 'hp_bench' });
}

/** Node flags that write the process's CPU profile to BENCH_PROFILE's directory when it stops (none without it). */
export function profileFlags(): string[] {
  return process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : [];
}

/** The service's environment: production mode on `url`, listening on `port`. */
export function serviceEnv(url: string, port: number): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    NODE_ENV: 'production',
    DATABASE_URL: url,
    PORT: String(port),
    HOST: '127.0.0.1',
    AUTH_JWT_SECRET: JWT_SECRET,
    SIGNING_SECRET: 'bench-signing-secret-0123456789abcdefghij',
    SETTINGS_ENCRYPTION_KEY: 'bench-encryption-key-0123456789abcdefghij',
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
    DATABASE_POOL_MAX: '10',
    // One bench client address would pass the public runtime's per-address limit at once: keep the limit's
    // bookkeeping (its cost is part of the figure) but not its 429s.
    PUBLIC_RATE_LIMIT_PER_MINUTE: '1000000',
  };
}

/** The Node options `npm start` runs the service with (the flags between `node` and `dist/core/main.js`). */
export function startNodeFlags(): string[] {
  const start = (JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start;
  const flags = /\bexec node\s+(.*?)\s*dist\/core\/main\.js/.exec(start);
  if (!flags) throw new Error(`package.json's start script does not run dist/core/main.js: ${start}`);
  return flags[1] ? flags[1].split(/\s+/) : [];
}

/**
 * Starts a TypeScript entry point in its own process the way `npm start` runs the service: compiled into
 * dist/ (rebuilt first if a source is newer) and run with npm start's Node options, so the service and the
 * hand-written twins (scripts/bench/*baseline*.ts) are measured alike. Waits until it answers on `port`.
 */
export async function startProcess(script: string, env: Record<string, string>, port: number, nodeArgs: string[] = []): Promise<ChildProcess> {
  const { build, SERVICE_DIRS } = await import('../build.js'); // not loaded by the comparators, which import serveComparator
  await build({ dirs: SERVICE_DIRS, entries: script.startsWith('scripts/') ? [script] : [], ifStale: true });
  const compiled = join('dist', script.replace(/\.ts$/, '.js'));
  if (!existsSync(join(PACKAGE_ROOT, compiled))) throw new Error(`${script} is not among the compiled files`);
  const child = spawn(process.execPath, [...startNodeFlags(), ...nodeArgs, compiled], { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'inherit'] });
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${script} exited with ${child.exitCode}`);
    try {
      const res = await fetch(`http://127.0.0.1:${port}/api/v1/health`);
      if (res.status === 200 || res.status === 400) return child;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${script} did not start`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const sourceMaps = new Map<string, SourceMap | null>();

/**
 * Where a CPU profile's frame is in the sources: `core/data/records.service.ts:120` for a compiled file of
 * dist/ (through its source map), `~/pkg/file.js:12` for a dependency, empty for native code.
 */
export function frameLocation(frame: { url: string; lineNumber: number; columnNumber?: number }): string {
  const file = frame.url.replace(`file://${ROOT}`, '');
  if (file.includes('node_modules/')) return `${file.replace(/^.*node_modules\//, '~/')}:${frame.lineNumber + 1}`;
  if (!file.startsWith('dist/')) return file ? `${file}:${frame.lineNumber + 1}` : '';
  if (!sourceMaps.has(file)) {
    const map = join(PACKAGE_ROOT, `${file}.map`);
    sourceMaps.set(file, existsSync(map) ? new SourceMap(JSON.parse(readFileSync(map, 'utf8'))) : null);
  }
  const entry = sourceMaps.get(file)?.findEntry(frame.lineNumber, frame.columnNumber ?? 0);
  const source = file.slice('dist/'.length).replace(/\.js$/, '.ts');
  return entry && 'originalLine' in entry ? `${source}:${entry.originalLine + 1}` : `${source}:?`;
}

/** Stops a process started with startProcess (SIGTERM: the service shuts down gracefully). */
export async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  await new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

/** Serves a comparator on PORT (loopback) until SIGTERM, then closes its store and exits. */
export function serveComparator(listener: RequestListener, close: () => Promise<void>): void {
  const server = createServer(listener);
  server.keepAliveTimeout = 65_000;
  server.listen(Number(process.env.PORT), '127.0.0.1');
  process.on('SIGTERM', () => {
    server.close();
    server.closeAllConnections();
    void close().then(() => process.exit(0));
  });
}
