import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type RequestListener } from 'node:http';
import { createScratchDatabase, type Engine } from '../../test/helpers/engine.js';
import { freePort } from '../../test/helpers/service-process.js';

/** What the benchmark scripts share: a throwaway database, the service's environment, its process. */

export type { Engine };
export { freePort };

export const ROOT = new URL('../../', import.meta.url).pathname;
export const JWT_SECRET = 'bench-jwt-secret-0123456789abcdef';
export const DEFAULT_POSTGRES_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** A fresh database: a SQLite file in a temporary folder, or a new PostgreSQL database on `postgresUrl`'s server. */
export function makeDatabase(engine: Engine, postgresUrl = DEFAULT_POSTGRES_URL): Promise<{ url: string; drop(): Promise<void> }> {
  return createScratchDatabase(engine, { adminUrl: postgresUrl, prefix: 'hp_bench' });
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

/** Starts a TypeScript entry point in its own process and waits until it answers on `port`. */
export async function startProcess(script: string, env: Record<string, string>, port: number, nodeArgs: string[] = []): Promise<ChildProcess> {
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', script], { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'inherit'] });
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
