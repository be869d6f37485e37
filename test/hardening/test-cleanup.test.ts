import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import pg from 'pg';
import { ENGINE, POSTGRES_ADMIN_URL } from '../helpers/engine.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

describe('a test run leaves no hp_test_* database and no hp-test-* folder behind (#34)', function () {
  this.timeout(120_000);

  it('cleans up after tests that forget to: an app never closed, a database never dropped, a start that failed', async () => {
    // The child's temp folder is its own, so that other runs on the machine do not blur the count.
    const tmp = mkdtempSync(join(tmpdir(), 'hp-cleanup-check-'));
    try {
      const run = spawnSync(process.execPath, ['--import', 'tsx', 'test/helpers/run-mocha.ts', 'test/hardening/fixtures/leaky.test.ts'], {
        cwd: ROOT, encoding: 'utf8', timeout: 100_000,
        env: { ...process.env, TEST_DB: ENGINE, TMPDIR: tmp, HP_LEAK_FIXTURE: '1', STATS_FILE: '' },
      });
      expect(run.status, `${run.stdout}\n${run.stderr}`).to.equal(0);
      expect(run.stdout).to.include('4 passing');
      expect(readdirSync(tmp).filter((f) => f.startsWith('hp-test') || f.startsWith('hp_test'))).to.deep.equal([]);
      if (ENGINE === 'postgres') {
        const admin = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
        await admin.connect();
        try {
          // The child's databases carry its process id: hp_test_<pid>_<random>.
          const { rows } = await admin.query<{ datname: string }>('SELECT datname FROM pg_database WHERE datname LIKE $1', [`hp\\_test\\_${run.pid}\\_%`]);
          expect(rows.map((r) => r.datname)).to.deep.equal([]);
        } finally {
          await admin.end();
        }
      }
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});
