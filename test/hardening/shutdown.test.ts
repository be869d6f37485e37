import { spawn } from 'node:child_process';
import { Agent, request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { createTestDatabase, type TestDatabase } from '../helpers/engine.js';
import { freePort, startServiceProcess, type ServiceProcess } from '../helpers/service-process.js';
import { testEnvironment } from '../helpers/test-app.js';
import { TEST_KEY } from '../helpers/tokens.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Sends a POST whose body arrives in two parts, `pauseMs` apart (a slow client): the request is in flight meanwhile. */
function slowPost(service: ServiceProcess, path: string, body: string, pauseMs: number, sent: () => void): Promise<string> {
  const { port } = new URL(service.baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1', () => {
      socket.write(`POST ${path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${TEST_KEY}\r\n`
        + `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: keep-alive\r\n\r\n`);
      const half = Math.floor(body.length / 2);
      socket.write(body.slice(0, half));
      sent();
      setTimeout(() => socket.write(body.slice(half)), pauseMs);
    });
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk) => (answer += chunk));
    socket.on('close', () => resolve(answer));
    socket.on('error', reject);
  });
}

describe('Clean shutdown on SIGTERM (#17)', function () {
  this.timeout(90_000);
  let database: TestDatabase;

  before(async () => {
    database = await createTestDatabase();
  });
  after(() => database?.drop());

  it('stops accepting, answers the request in flight with Connection: close, and exits 0', async () => {
    const service = await startServiceProcess(database.url, { SHUTDOWN_TIMEOUT_MS: '10000' });
    let signalled: () => void = () => {};
    const signalledAt = new Promise<void>((resolve) => { signalled = resolve; });
    const answer = slowPost(service, '/api/v1/admin/tenants', JSON.stringify({ id: 'slow-client', name: 'A slow client' }), 3000, () => {
      setTimeout(() => {
        service.kill('SIGTERM');
        signalled();
      }, 300);
    });
    await signalledAt;
    await new Promise((r) => setTimeout(r, 500));
    // No new connections once shutdown began.
    const refused = await fetch(`${service.baseUrl}/api/v1/health`).then(() => null, (err: Error) => err);
    expect(refused, 'a new connection after SIGTERM').to.be.instanceOf(Error);

    const response = await answer;
    expect(response).to.match(/^HTTP\/1\.1 201 Created\r\n/);
    expect(response).to.match(/\r\nconnection: close\r\n/i);
    expect(await service.exited, service.output()).to.equal(0);
  });

  it('answers requests that arrive on kept-alive connections during the drain with Connection: close, never resets them (#34)', async () => {
    const service = await startServiceProcess(database.url, { SHUTDOWN_TIMEOUT_MS: '10000' });
    const { port } = new URL(service.baseUrl);
    let signalledAt = 0;
    const outcomes = { beforeSignal: 0, closedAfterSignal: 0, keptAfterSignal: 0, refused: 0, resets: [] as string[] };
    /** One client on its own kept-alive connection, sending one request after the other until it is refused. */
    const client = async () => {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      try {
        for (;;) {
          const outcome = await new Promise<{ status: number; connection: string | undefined } | { error: NodeJS.ErrnoException }>((resolve) => {
            const req = httpRequest({ host: '127.0.0.1', port, path: '/api/v1/health', agent }, (res) => {
              res.resume();
              res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection }));
            });
            req.on('error', (error: NodeJS.ErrnoException) => resolve({ error }));
            req.end();
          });
          if ('error' in outcome) {
            if (outcome.error.code === 'ECONNREFUSED') outcomes.refused += 1;
            else outcomes.resets.push(`${outcome.error.code ?? ''} ${outcome.error.message}`);
            return;
          }
          expect(outcome.status).to.equal(200);
          if (!signalledAt) outcomes.beforeSignal += 1;
          else if (outcome.connection === 'close') outcomes.closedAfterSignal += 1;
          else outcomes.keptAfterSignal += 1;
        }
      } finally {
        agent.destroy();
      }
    };
    const clients = Array.from({ length: 40 }, () => client());
    await new Promise((r) => setTimeout(r, 1500));
    signalledAt = Date.now();
    service.kill('SIGTERM');
    await Promise.all(clients);
    expect(await service.exited, service.output()).to.equal(0);
    expect(outcomes.resets, JSON.stringify(outcomes)).to.deep.equal([]);
    expect(outcomes.beforeSignal).to.be.greaterThan(40);
    expect(outcomes.closedAfterSignal, JSON.stringify(outcomes)).to.be.greaterThan(0);
    expect(outcomes.refused).to.equal(40);
  });

  it('npm start passes SIGTERM to the service: the service stops and nothing is left listening', async () => {
    const port = await freePort();
    const child = spawn('npm', ['start'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...testEnvironment(database.url, { PORT: String(port), HOST: '127.0.0.1' }) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (c: Buffer) => { output += c.toString(); });
    child.stderr.on('data', (c: Buffer) => { output += c.toString(); });
    const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)));
    const deadline = Date.now() + 30_000;
    while (!(await fetch(`http://127.0.0.1:${port}/api/v1/ready`).then((r) => r.ok, () => false))) {
      if (Date.now() > deadline) throw new Error(`not ready:\n${output}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    child.kill('SIGTERM');
    await exited;
    // The node process went down with npm: the port is free again within moments.
    const stopDeadline = Date.now() + 15_000;
    while (await fetch(`http://127.0.0.1:${port}/api/v1/health`).then(() => true, () => false)) {
      if (Date.now() > stopDeadline) throw new Error(`the service outlived npm:\n${output}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(output).to.match(/Headless platform listening on/);
  });
});
