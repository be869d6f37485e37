import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import supertest from 'supertest';
import { loadConfig } from '../../config/index.js';
import { packs as defaultPacks } from '../../config/packs.js';
import { createApp, type App } from '../../core/app.js';
import { createLogger } from '../../core/base/logger.js';
import { createTestDatabase, type TestDatabase } from '../helpers/engine.js';
import { testEnvironment } from '../helpers/test-app.js';
import { probePack } from './probe-pack.js';

/** The real app with the real logger, writing its JSON lines into `output` instead of stdout. */
export interface CapturedApp {
  app: App;
  http: ReturnType<typeof supertest>;
  /** Where the app listens (http://127.0.0.1:port). */
  url: string;
  database: TestDatabase;
  /** Everything logged so far, one string per line. */
  output: string[];
  lines(): Array<Record<string, any>>;
  close(): Promise<void>;
}

export async function startCapturedApp(env: Record<string, string> = {}, database?: TestDatabase): Promise<CapturedApp> {
  const db = database ?? (await createTestDatabase());
  const output: string[] = [];
  const storageDir = mkdtempSync(join(tmpdir(), 'hp-test-obs-storage-'));
  const config = loadConfig(testEnvironment(db.url, { STORAGE_DIR: storageDir, LOG_LEVEL: 'info', ...env }));
  const logger = createLogger(config, { write: (chunk: string) => { output.push(...chunk.split('\n').filter(Boolean)); } });
  const app = await createApp(config, { packs: [...defaultPacks, probePack], logger });
  const server: Server = await app.listen(0, '127.0.0.1');
  const { port } = server.address() as AddressInfo;
  return {
    app, database: db, output,
    http: supertest(`http://127.0.0.1:${port}`),
    url: `http://127.0.0.1:${port}`,
    lines: () => output.map((line) => JSON.parse(line) as Record<string, any>),
    async close() {
      try {
        await app.close();
      } finally {
        rmSync(storageDir, { recursive: true, force: true });
        if (!database) await db.drop();
      }
    },
  };
}
