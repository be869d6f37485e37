import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { createTestDatabase, type TestDatabase } from '../helpers/engine.js';
import { startServiceProcess, type ServiceProcess } from '../helpers/service-process.js';
import { testEnvironment } from '../helpers/test-app.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The README's shell blocks, in order. */
function shellBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]);
}

/**
 * Blocks that are not run: installing and starting (the test starts the service itself), the test suite and the
 * benchmarks (minutes of their own), and the MCP Inspector (fetched by npx from the registry).
 */
const NOT_RUN = [/^npm install/, /^npm test/, /^npm run bench/, /npx @modelcontextprotocol\/inspector/];

/**
 * Every curl of the script writes its status and arguments to README_LOG (the body is printed as curl prints
 * it), so that the test can check each answer; the output goes to README_OUT. At the end the script waits for
 * the receiver of the README to print the order's delivery, then stops what it started in the background.
 */
const PROLOGUE = `exec > "$README_OUT" 2>&1
curl() {
  local out status args
  out=$(command curl -w '\\n%{http_code}' "$@")
  status=\${out##*$'\\n'}
  args="$*"
  printf '%s\\t%s\\n' "$status" "\${args//$'\\n'/ }" >> "$README_LOG"
  printf '%s\\n' "\${out%$'\\n'*}"
}
`;
const EPILOGUE = `
for i in $(seq 1 100); do grep -q 'erp.order.created' "$README_OUT" && break; sleep 0.1; done
kill $(jobs -p) 2>/dev/null
exit 0
`;

describe('README: every example works pasted as written (#34)', function () {
  this.timeout(300_000);
  let database: TestDatabase;
  let service: ServiceProcess;
  let folder: string;

  before(async () => {
    database = await createTestDatabase();
    // The development test key the README uses; connectors may call the README's receiver on loopback.
    service = await startServiceProcess(database.url, { TEST_API_KEY: 'dev-test-key', ALLOW_PRIVATE_NETWORK_FETCH: 'true' });
    folder = mkdtempSync(join(tmpdir(), 'hp-test-readme-'));
  });
  after(async () => {
    service?.kill('SIGTERM');
    await service?.exited;
    if (folder) rmSync(folder, { recursive: true, force: true });
    await database?.drop();
  });

  it('runs the README\'s shell blocks in order against a started service: every request answers 2xx, the cart is recovered and its coupon redeemed', () => {
    const blocks = shellBlocks(readFileSync(join(ROOT, 'README.md'), 'utf8'));
    const run = blocks.filter((b) => !NOT_RUN.some((skip) => skip.test(b.trim())));
    expect(run.length, 'shell blocks to run').to.be.at.least(5);
    // The one change: the service listens on a port of its own instead of 8080.
    const port = new URL(service.baseUrl).port;
    const script = PROLOGUE + run.join('\n').replace(/127\.0\.0\.1:8080/g, `127.0.0.1:${port}`) + EPILOGUE;
    const log = join(folder, 'requests.log');
    const out = join(folder, 'output.txt');
    writeFileSync(join(folder, 'readme.sh'), script);
    const result = spawnSync('bash', [join(folder, 'readme.sh')], {
      cwd: ROOT, encoding: 'utf8', timeout: 240_000,
      // The shell of a developer who runs npm start: the service's own environment (npm run token signs with its secret).
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...testEnvironment(database.url), TEST_API_KEY: 'dev-test-key', README_LOG: log, README_OUT: out },
    });
    const output = readFileSync(out, 'utf8');
    expect(result.status, output).to.equal(0);
    const requests = readFileSync(log, 'utf8').trim().split('\n').map((line) => ({ status: Number(line.slice(0, line.indexOf('\t'))), args: line.slice(line.indexOf('\t') + 1) }));
    expect(requests.length).to.be.at.least(20);
    for (const r of requests) expect(r.status, `${r.args}\n${output}`).to.be.within(200, 299);

    // The cart was recovered with a coupon, and the order took it (10 % off the mug: 200 cents of 1999).
    const code = /^coupon ([A-Z2-9]{12})$/m.exec(output)?.[1];
    expect(code, output).to.be.a('string');
    const order = output.split('\n').map((l) => { try { return JSON.parse(l); } catch { return null; } })
      .find((b) => b?.data?.couponCode === code);
    expect(order?.data?.discountCents, output).to.equal(200);
    // The receiver printed the signed deliveries.
    expect(output).to.match(/t=\d+,v1=[0-9a-f]{64} .*erp\.order\.created/);
  });
});
