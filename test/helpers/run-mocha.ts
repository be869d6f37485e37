import { readdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import Mocha from 'mocha';

/**
 * Runs the test files for one engine (TEST_DB) and writes the counts to STATS_FILE for scripts/test.ts.
 * Arguments: optional file paths or folders to run instead of all of test/.
 */
const args = process.argv.slice(2);
const grepIndex = args.indexOf('--grep');
const grep = grepIndex >= 0 ? args.splice(grepIndex, 2)[1] : process.env.TEST_GREP;
const roots = args.length ? args : ['test'];

function collect(path: string): string[] {
  const full = resolve(path);
  if (full.endsWith('.test.ts')) return [full];
  return readdirSync(full, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.test.ts'))
    .map((f) => join(full, f))
    .sort();
}

const mocha = new Mocha({ timeout: 30_000, reporter: 'spec', ...(grep ? { grep } : {}) });
const setup = await import('./setup.js');
mocha.rootHooks(setup.mochaHooks);
for (const file of roots.flatMap(collect)) mocha.addFile(file);
await mocha.loadFilesAsync();
const runner = mocha.run((failures) => {
  const stats = runner.stats ?? { passes: 0, failures, pending: 0, tests: 0 };
  if (process.env.STATS_FILE) {
    writeFileSync(process.env.STATS_FILE, JSON.stringify({ passes: stats.passes, failures: stats.failures, pending: stats.pending }));
  }
  process.exitCode = failures > 0 ? 1 : 0;
  // Background timers (dispatcher loops, pools) must not keep a finished run alive.
  setTimeout(() => process.exit(process.exitCode), 500).unref();
});
