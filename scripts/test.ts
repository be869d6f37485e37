import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { postgresAvailable } from '../test/helpers/engine.js';

/**
 * npm test: the whole suite on SQLite, then on PostgreSQL. PostgreSQL is required when CI is set or
 * REQUIRE_POSTGRES=1; elsewhere the PostgreSQL run is left out (and said so) when no server answers.
 * TEST_DB=sqlite|postgres runs one engine. Extra arguments (files, --grep x) go to mocha.
 */
const args = process.argv.slice(2);

// The API reference tests drive a headless Chromium: without one, say so before anything runs.
const chromium = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
if (!existsSync(chromium)) {
  console.error(`npm test needs Chromium at ${chromium} (or set CHROMIUM_PATH): install it with \`apt-get install -y chromium\` (Debian/Ubuntu), then run npm test again.`);
  process.exit(1);
}
const required = process.env.CI === 'true' || process.env.REQUIRE_POSTGRES === '1';
const engines = process.env.TEST_DB ? [process.env.TEST_DB] : ['sqlite', 'postgres'];

let passed = 0;
let failed = 0;
let pending = 0;
const summary: string[] = [];
for (const engine of engines) {
  if (engine === 'postgres' && !(await postgresAvailable())) {
    if (required) {
      console.error('PostgreSQL does not answer on 127.0.0.1:5432, and this run requires it.');
      failed += 1;
      summary.push('postgres: not reachable (required)');
      continue;
    }
    console.log('\nPostgreSQL does not answer on 127.0.0.1:5432: the PostgreSQL run is left out (set REQUIRE_POSTGRES=1 to require it).\n');
    summary.push('postgres: not run (no server)');
    continue;
  }
  console.log(`\n=== ${engine} ===`);
  const statsFolder = mkdtempSync(join(tmpdir(), 'hp-test-stats-'));
  const statsFile = join(statsFolder, 'stats.json');
  const result = spawnSync(process.execPath, ['--import', 'tsx', 'test/helpers/run-mocha.ts', ...args], {
    stdio: 'inherit',
    env: { ...process.env, TEST_DB: engine, STATS_FILE: statsFile },
  });
  if (!existsSync(statsFile)) {
    console.error(`The ${engine} run ended without results (exit ${result.status}).`);
    failed += 1;
    summary.push(`${engine}: crashed`);
    continue;
  }
  const stats = JSON.parse(readFileSync(statsFile, 'utf8')) as { passes: number; failures: number; pending: number };
  rmSync(statsFolder, { recursive: true, force: true });
  passed += stats.passes;
  failed += stats.failures;
  pending += stats.pending;
  summary.push(`${engine}: ${stats.passes} passed, ${stats.failures} failed${stats.pending ? `, ${stats.pending} pending` : ''}`);
}
console.log(`\n${summary.join('\n')}`);
if (pending > 0) console.log(`${pending} tests are pending (skipped): skipped tests are not passing tests.`);
console.log(`tests: ${passed} passed, ${failed + pending} failed`);
process.exit(failed + pending > 0 || passed === 0 ? 1 : 0);
