import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import jwt from 'jsonwebtoken';
import { ConfigError, loadConfig } from '../../config/index.js';
import { DEV_DEFAULTS } from '../../config/dev-defaults.js';

const base = { NODE_ENV: 'test', DATABASE_URL: 'sqlite::memory:' };
const strong = 'x'.repeat(32);

function configError(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).to.be.instanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error('loadConfig accepted a bad environment');
}

describe('configuration (config/index.ts)', () => {
  it('fills the documented defaults', () => {
    const config = loadConfig({});
    expect(config).to.deep.include({ port: 8080, host: '127.0.0.1', databaseUrl: 'sqlite:./data/platform.db', migrateOnStart: true, nodeEnv: 'development' });
    expect(config.auth.tenantClaim).to.equal('tenant_id');
    expect(Object.isFrozen(config) && Object.isFrozen(config.auth)).to.equal(true);
  });

  it('names the variable of a bad value', () => {
    const cases: Array<[Record<string, string>, string]> = [
      [{ PORT: 'eighty' }, 'PORT'],
      [{ PORT: '70000' }, 'PORT'],
      [{ DATABASE_URL: 'mysql://localhost/db' }, 'DATABASE_URL'],
      [{ MIGRATE_ON_START: 'perhaps' }, 'MIGRATE_ON_START'],
      [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
      [{ AUTH_JWKS_URI: 'ftp://idp/jwks' }, 'AUTH_JWKS_URI'],
      [{ SIGNING_SECRET: 'short' }, 'SIGNING_SECRET'],
      [{ NODE_ENV: 'staging' }, 'NODE_ENV'],
    ];
    for (const [env, variable] of cases) {
      const err = configError({ ...base, ...env });
      expect(err.variable, JSON.stringify(env)).to.equal(variable);
      expect(err.message).to.include(variable);
    }
  });

  it('requires SIGNING_SECRET and SETTINGS_ENCRYPTION_KEY in production', () => {
    const prod = { ...base, NODE_ENV: 'production', AUTH_JWT_SECRET: strong };
    expect(configError({ ...prod, SETTINGS_ENCRYPTION_KEY: strong }).variable).to.match(/^SIGNING_SECRET/);
    expect(configError({ ...prod, SIGNING_SECRET: strong }).variable).to.match(/^SETTINGS_ENCRYPTION_KEY/);
    const config = loadConfig({ ...prod, SIGNING_SECRET: strong, SETTINGS_ENCRYPTION_KEY: strong, TEST_API_KEY: 'a-test-key-123' });
    expect(config.isProduction).to.equal(true);
    expect(config.testApiKey).to.equal(null);
    const ready = { ...prod, SIGNING_SECRET: strong, SETTINGS_ENCRYPTION_KEY: strong };
    expect(configError({ ...ready, ALLOW_PRIVATE_NETWORK_FETCH: 'true' }).variable).to.equal('ALLOW_PRIVATE_NETWORK_FETCH');
  });

  it('never lets the development defaults override .env or reach production (review finding)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'hp-env-'));
    try {
      const file = join(dir, '.env');
      writeFileSync(file, [
        'NODE_ENV=production', `SIGNING_SECRET=${strong}`, `SETTINGS_ENCRYPTION_KEY=${strong}`,
        'AUTH_JWKS_URI=https://idp.example.test/jwks', 'AUTH_JWT_SECRET=the-real-secret-from-dotenv-0123',
      ].join('\n'));
      // NODE_ENV=production is only in .env, not in the process environment.
      const fromFile = loadConfig({}, { dotenv: file, devDefaults: true });
      expect(fromFile.isProduction).to.equal(true);
      expect(fromFile.auth.jwtSecret).to.equal('the-real-secret-from-dotenv-0123');
      expect(fromFile.testApiKey).to.equal(null);

      writeFileSync(file, 'AUTH_JWT_SECRET=a-dotenv-development-secret-0123\n');
      const development = loadConfig({}, { dotenv: file, devDefaults: true });
      expect(development.auth.jwtSecret).to.equal('a-dotenv-development-secret-0123');
      expect(development.testApiKey).to.equal(DEV_DEFAULTS.TEST_API_KEY);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reports every missing production secret at once (#17)', () => {
    const err = configError({ ...base, NODE_ENV: 'production' });
    for (const name of ['SIGNING_SECRET', 'SETTINGS_ENCRYPTION_KEY', 'AUTH_JWKS_URI or AUTH_JWT_SECRET']) expect(err.message).to.include(name);
    expect(err.message).to.include('are required in production');
  });

  it('requires a token verifier in production', () => {
    const err = configError({ ...base, NODE_ENV: 'production', SIGNING_SECRET: strong, SETTINGS_ENCRYPTION_KEY: strong });
    expect(err.message).to.match(/AUTH_JWKS_URI|AUTH_JWT_SECRET/);
  });
});

describe('npm start', () => {
  const root = new URL('../../', import.meta.url).pathname;
  const cleanEnv = () => {
    const env: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp' };
    return env;
  };

  it('exits non-zero naming PORT when PORT is bad', () => {
    const result = spawnSync(process.execPath, ['--import', 'tsx', 'core/main.ts'], {
      cwd: root, env: { ...cleanEnv(), PORT: 'not-a-port' }, encoding: 'utf8', timeout: 20_000,
    });
    expect(result.status).to.not.equal(0);
    expect(result.stderr).to.include('PORT');
  });

  it('the Dockerfile runs the service with the command npm start runs (the same Node options)', () => {
    const start = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start;
    const command = /\bexec (node\b.*\bdist\/core\/main\.js)$/.exec(start)?.[1];
    expect(command, start).to.be.a('string');
    const cmd = /^CMD (\[.*\])$/m.exec(readFileSync(join(root, 'Dockerfile'), 'utf8'))?.[1];
    expect((JSON.parse(cmd ?? '[]') as string[]).join(' ')).to.equal(command);
  });

  it('builds dist/ and runs it compiled: prints the URL and the development test key, answers /health, serves the console, stops on SIGTERM', async function () {
    this.timeout(60_000);
    const dir = mkdtempSync(join(tmpdir(), 'hp-main-'));
    try {
      // Exactly what a user types: the start script builds dist/ when a source is newer, then runs it.
      const child = spawn('npm', ['start'], {
        cwd: root, env: { ...cleanEnv(), PORT: '0', DATABASE_URL: `sqlite:${join(dir, 'p.db')}`, LOG_LEVEL: 'silent' },
      });
      let out = '';
      child.stdout.on('data', (c: Buffer) => { out += c.toString(); });
      child.stderr.on('data', (c: Buffer) => { out += c.toString(); });
      const deadline = Date.now() + 50_000;
      while (!/listening on (http:\/\/\S+)/.test(out) && Date.now() < deadline && child.exitCode === null) await new Promise((r) => setTimeout(r, 100));
      const url = /listening on (http:\/\/\S+)/.exec(out)?.[1];
      expect(url, out).to.match(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(out).to.include('dev-test-key');
      expect(out).to.match(/dist\/core\/main\.js/);
      const res = await fetch(`${url}/api/v1/health`);
      expect(res.status).to.equal(200);
      const console = await fetch(`${url}/admin/`);
      expect(console.status).to.equal(200);
      expect(await console.text()).to.include('<div id="root">');
      const code = await new Promise<number | null>((resolve) => {
        child.once('exit', (c) => resolve(c));
        child.kill('SIGTERM');
      });
      expect(code, out).to.equal(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('npm run token (scripts/token.ts)', () => {
  it('prints an HS256 development token with the tenant and role asked for', () => {
    const root = new URL('../../', import.meta.url).pathname;
    const result = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/token.ts', '--tenant', 'acme', '--role', 'editor', '--sub', 'alice'], {
      cwd: root, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp' }, encoding: 'utf8', timeout: 20_000,
    });
    expect(result.status, result.stderr).to.equal(0);
    const claims = jwt.verify(result.stdout.trim(), DEV_DEFAULTS.AUTH_JWT_SECRET, { algorithms: ['HS256'] }) as jwt.JwtPayload;
    expect(claims).to.include({ sub: 'alice', tenant_id: 'acme' });
    expect(claims.roles).to.deep.equal(['editor']);
    expect(claims.exp! - claims.iat!).to.equal(8 * 3600);
  });
});
