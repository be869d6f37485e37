import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadConfig } from '../config/index.js';
import { createApp } from '../core/app.js';
import { packModulesOf } from '../core/kernel/pack-loader.js';
import { countOperations } from '../core/openapi/openapi.builder.js';
import { OpenApiService } from '../core/openapi/openapi.service.js';

/**
 * npm run -s openapi [file]: writes the platform's OpenAPI 3.1 document to the file, or to stdout without one. The app is
 * built on a throw-away in-memory SQLite database, so no real database is touched; NODE_ENV and
 * PUBLIC_BASE_URL of the environment shape the document (security schemes, server URL).
 */
const target = process.argv[2] ? resolve(process.argv[2]) : null;
const config = loadConfig({ ...process.env, DATABASE_URL: 'sqlite::memory:', MIGRATE_ON_START: 'true', LOG_LEVEL: 'silent', DISPATCHER_ENABLED: 'false' }, { dotenv: true, devDefaults: true });
const app = await createApp(config);
try {
  const openapi = new OpenApiService({
    routes: app.routes, config, schemas: app.kernel.schemas, tenants: app.kernel.tenants, packModules: packModulesOf(app.packs),
  });
  const json = `${JSON.stringify(openapi.platformDocument(), null, 2)}\n`;
  if (target) {
    writeFileSync(target, json);
    console.log(`Wrote ${target}: ${countOperations(openapi.platformDocument())} operations, ${Buffer.byteLength(json)} bytes.`);
  } else {
    process.stdout.write(json);
  }
} finally {
  await app.close();
}
