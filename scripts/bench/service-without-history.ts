import { loadConfig } from '../../config/index.js';
import { createApp } from '../../core/app.js';
import type { RecordsService } from '../../core/data/records.service.js';

/**
 * The service as `core/main.ts` runs it, except that a record write keeps no revision and no audit entry:
 * "today's creates" before CONTRACT.md 16.3 / 16.4, the other side of scripts/bench/create-history.ts.
 * Only this benchmark process does this; the service has no such switch (every write keeps both).
 * Env: as core/main.ts (scripts/bench/harness.ts serviceEnv).
 */
const app = await createApp(loadConfig(process.env));
// RecordsService.keep queues a write's revision and audit entry; here it queues nothing.
(app.kernel.records as unknown as { keep: RecordsService['keepMany'] }).keep = async () => {};
await app.listen();
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
