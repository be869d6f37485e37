import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import supertest from 'supertest';
import { loadConfig, type Config } from '../../config/index.js';
import { createApp, type App } from '../../core/app.js';
import type { PackDefinition } from '../../core/kernel/define-pack.js';
import { createTestDatabase, ENGINE, processWide, type Engine, type TestDatabase } from './engine.js';
import { TEST_JWT_SECRET, TEST_KEY, superadmin } from './tokens.js';
import { recordResponses, validateRecorded } from './response-validation.js';

export interface TestApp {
  app: App;
  config: Config;
  engine: Engine;
  baseUrl: string;
  server: Server;
  database: TestDatabase;
  /** supertest against the real listening server. */
  http: ReturnType<typeof supertest>;
  close(): Promise<void>;
}

export interface TestAppOptions {
  /** Extra environment variables (strings, as in process.env). */
  env?: Record<string, string>;
  packs?: PackDefinition[];
  /** Reuse an existing database instead of a fresh one (two processes on one database). */
  database?: TestDatabase;
  /** A logger of the test's own (e.g. writing to a stream the test reads). */
  logger?: import('pino').Logger;
}

/** The environment every test app starts from. */
export function testEnvironment(databaseUrl: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    NODE_ENV: 'test',
    DATABASE_URL: databaseUrl,
    TEST_API_KEY: TEST_KEY,
    AUTH_JWT_SECRET: TEST_JWT_SECRET,
    SIGNING_SECRET: 'test-signing-secret-0123456789abcdefghij',
    SETTINGS_ENCRYPTION_KEY: 'test-encryption-key-0123456789abcdefghij',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    ALLOW_PRIVATE_NETWORK_FETCH: 'true',
    DISPATCHER_INTERVAL_MS: '50',
    PORT: '0',
    // One shared app serves every test file from one address: the rate limit tests set their own limits.
    PUBLIC_RATE_LIMIT_PER_MINUTE: '1000000',
    EVENTS_PUBLISH_RATE_LIMIT_PER_MINUTE: '1000000',
    ...extra,
    // Production refuses the private-network allowance (config/index.ts); production-mode test apps go without it.
    ...(extra.NODE_ENV === 'production' && extra.ALLOW_PRIVATE_NETWORK_FETCH === undefined ? { ALLOW_PRIVATE_NETWORK_FETCH: 'false' } : {}),
  };
}

/** Builds the real app on a fresh database of the engine under test and listens on a loopback port. */
export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const database = options.database ?? (await createTestDatabase(ENGINE));
  // Listen first to know the port, so that URLs the service hands out point at it.
  const { createServer } = await import('node:http');
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', () => resolve()));
  const port = (probe.address() as AddressInfo).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));

  // The storage folder: beside a SQLite file (removed with its folder), else a temp folder of its own.
  const storageRoot = database.url.startsWith('sqlite:') ? null : mkdtempSync(join(tmpdir(), 'hp-test-storage-'));
  const removeStorage = () => { if (storageRoot) rmSync(storageRoot, { recursive: true, force: true }); };
  let app: App;
  let server: Server;
  try {
    const storageDir = storageRoot ? join(storageRoot, 'storage') : `${database.url.slice(7).replace(/test\.db$/, '')}storage-${randomBytes(4).toString('hex')}`;
    const config = loadConfig(testEnvironment(database.url, { PUBLIC_BASE_URL: `http://127.0.0.1:${port}`, STORAGE_DIR: storageDir, ...options.env }));
    app = await createApp(config, { packs: options.packs, logger: options.logger });
    server = await app.listen(port, '127.0.0.1');
  } catch (err) {
    // A start that fails leaves nothing behind either.
    removeStorage();
    if (!options.database) await database.drop().catch(() => {});
    throw err;
  }
  const config = app.config;
  const recording = recordResponses(server, `http://127.0.0.1:${port}`);
  const baseUrl = `http://127.0.0.1:${port}`;
  let closed = false;
  const testApp: TestApp = {
    app, config, engine: ENGINE, baseUrl, server, database,
    http: supertest(baseUrl),
    async close() {
      if (closed) return;
      closed = true;
      openApps.delete(testApp);
      await validateRecorded(recording).catch(() => {});
      try {
        await app.close();
      } finally {
        removeStorage();
        if (!options.database) await database.drop();
      }
    },
  };
  openApps.add(testApp);
  return testApp;
}

/** Apps started and not closed yet (see closeLeftoverApps). */
const openApps = processWide('hp-test-open-apps', () => new Set<TestApp>());

/** Closes every app a test left open (test/helpers/setup.ts, at the end of the run): its database and folders go with it. */
export async function closeLeftoverApps(): Promise<void> {
  for (const t of [...openApps]) await t.close().catch((err: unknown) => console.error(`could not close a test app: ${(err as Error).message}`));
}

const shared = processWide('hp-test-shared-app', () => ({ app: null as Promise<TestApp> | null }));

/** One app per test process, shared by the test files; each test makes its own tenant. */
export function sharedTestApp(): Promise<TestApp> {
  shared.app ??= startTestApp();
  return shared.app;
}

export async function closeSharedTestApp(): Promise<void> {
  const app = shared.app;
  shared.app = null;
  if (app) await (await app).close();
}

/** A tenant id unique to this run. */
export function uniqueTenantId(prefix = 't'): string {
  return `${prefix}-${randomBytes(5).toString('hex')}`;
}

/** Creates a tenant through POST /admin/tenants with the test key and returns its id. */
export async function createTenant(t: TestApp, prefix = 't', plan: 'free' | 'pro' | 'enterprise' = 'free'): Promise<string> {
  const id = uniqueTenantId(prefix);
  const res = await t.http.post('/api/v1/admin/tenants').set(superadmin()).send({ id, name: `Tenant ${id}`, plan });
  if (res.status !== 201) throw new Error(`creating tenant ${id} failed: ${res.status} ${JSON.stringify(res.body)}`);
  return id;
}
