import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import supertest from 'supertest';
import { createTestDatabase, type TestDatabase } from './engine.js';
import { testEnvironment } from './test-app.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The service from its sources (`npm run dev`: node --import tsx core/main.ts) as a child process on a given database. */
export interface ServiceProcess {
  child: ChildProcess;
  baseUrl: string;
  http: ReturnType<typeof supertest>;
  /** Everything the process wrote, for failure messages. */
  output(): string;
  /** Resolves with the exit code (or signal name) once the process ended. */
  exited: Promise<number | string>;
  kill(signal: NodeJS.Signals): void;
}

export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', () => resolve()));
  const port = (probe.address() as AddressInfo).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/** Starts the service and waits until GET /api/v1/ready answers 200. */
export async function startServiceProcess(databaseUrl: string, env: Record<string, string> = {}, timeoutMs = 60_000): Promise<ServiceProcess> {
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, ['--import', 'tsx', 'core/main.ts'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', ...testEnvironment(databaseUrl, { PORT: String(port), HOST: '127.0.0.1', PUBLIC_BASE_URL: baseUrl, ...env }) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (c: Buffer) => { output += c.toString(); });
  child.stderr!.on('data', (c: Buffer) => { output += c.toString(); });
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  const service: ServiceProcess = {
    child, baseUrl, http: supertest(baseUrl), output: () => output, exited,
    kill: (signal) => { child.kill(signal); },
  };
  const deadline = Date.now() + timeoutMs;
  let ended = false;
  void exited.then(() => { ended = true; });
  for (;;) {
    if (ended) throw new Error(`the service exited during start:\n${output}`);
    try {
      const res = await fetch(`${baseUrl}/api/v1/ready`);
      if (res.status === 200) return service;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the service did not become ready:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * The before and after hooks of a suite with `count` service processes on one fresh database of the engine under
 * test (the first one migrates, then the others start; on SQLite one file, each with its own connection and write
 * lock). `services` is filled before the suite's tests run.
 */
export function serviceProcessesOnOneDatabase(count = 2): { services: ServiceProcess[] } {
  const services: ServiceProcess[] = [];
  let database: TestDatabase | null = null;
  before(async () => {
    database = await createTestDatabase();
    for (let i = 0; i < count; i++) services.push(await startServiceProcess(database.url));
  });
  after(async () => {
    for (const s of services.splice(0)) {
      s.kill('SIGTERM');
      await s.exited;
    }
    await database?.drop();
  });
  return { services };
}
