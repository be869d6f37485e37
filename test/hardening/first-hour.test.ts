import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import pino from 'pino';
import { startTestApp, testEnvironment } from '../helpers/test-app.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Runs one of the npm scripts' files the way npm does, and returns what it printed. */
function run(script: string, args: string[], env: Record<string, string> = {}) {
  const result = spawnSync(process.execPath, ['--import', 'tsx', script, ...args], {
    cwd: ROOT, encoding: 'utf8', timeout: 150_000, maxBuffer: 64 * 1024 * 1024,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...testEnvironment('sqlite::memory:'), ...env },
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('The first hour (#17)', function () {
  this.timeout(180_000);

  it('npm run token -- --help prints the usage, an unknown option the usage without a stack trace', () => {
    const help = run('scripts/token.ts', ['--help']);
    expect(help.status).to.equal(0);
    expect(help.stdout).to.match(/^Usage: npm run -s token/);
    const bad = run('scripts/token.ts', ['--tenat', 'acme']);
    expect(bad.status).to.equal(2);
    expect(bad.stderr).to.include('Usage:');
    expect(bad.stderr).to.not.match(/\n\s+at /);
  });

  it('npm run migrate reports a failure in one line', () => {
    const res = run('scripts/migrate.ts', [], { DATABASE_URL: 'postgres://postgres@127.0.0.1:1/nowhere' });
    expect(res.status).to.equal(1);
    expect(res.stderr.trim().split('\n').filter((l) => !l.startsWith('npm warn'))).to.have.length(1);
    expect(res.stderr).to.match(/^Migration failed: .*ECONNREFUSED/);
  });

  it('npm run openapi writes the document to stdout and leaves no file behind', () => {
    const res = run('scripts/openapi.ts', []);
    expect(res.status, res.stderr).to.equal(0);
    expect(JSON.parse(res.stdout).openapi).to.equal('3.1.0');
    expect(existsSync(`${ROOT}/openapi.json`)).to.equal(false);
  });

  it('npm test stops at once, naming the install command, when Chromium is missing', () => {
    const res = run('scripts/test.ts', [], { CHROMIUM_PATH: '/nonexistent/chromium' });
    expect(res.status).to.equal(1);
    expect(res.stderr).to.include('apt-get install -y chromium');
    expect(res.stdout).to.not.include('===');
  });

  it('the dispatcher says once, without a stack trace, that the tables are missing before migrations', async () => {
    const lines: string[] = [];
    const sink = new Writable({ write(chunk, _enc, done) { lines.push(...chunk.toString().split('\n').filter(Boolean)); done(); } });
    const t = await startTestApp({ env: { MIGRATE_ON_START: 'false', DISPATCHER_INTERVAL_MS: '20' }, logger: pino({ level: 'info' }, sink) });
    try {
      await new Promise((r) => setTimeout(r, 600));
      const dispatcher = lines.filter((l) => l.includes('outbox'));
      expect(dispatcher).to.have.length(1);
      expect(dispatcher[0]).to.include('npm run migrate');
      expect(dispatcher[0]).to.not.include('"stack"');
    } finally {
      await t.close();
    }
  });
});
