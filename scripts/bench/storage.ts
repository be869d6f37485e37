import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { request, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../config/index.js';
import { createApp } from '../../core/app.js';

/**
 * Storage throughput: uploads an object of BENCH_MIB MiB (default 100) through POST /storage/objects and
 * reads it back through GET /public/assets on the local driver, sampling the process RSS every 20 ms.
 * Flat RSS (a few MiB of growth, not the object size) shows that both directions stream.
 * Client and server run in this one process; the client sends one reused 1 MiB buffer, so it adds no
 * growth of its own. Usage: node --import tsx scripts/bench/storage.ts [MiB]
 */
const MIB = 1024 * 1024;
const sizeMib = Number(process.argv[2] ?? 100);
const size = sizeMib * MIB;
const key = 'bench-key-0123456789abcdef';
const work = mkdtempSync(join(tmpdir(), 'bench-storage-'));

const config = loadConfig({
  NODE_ENV: 'test', DATABASE_URL: `sqlite:${join(work, 'bench.db')}`, TEST_API_KEY: key,
  AUTH_JWT_SECRET: 'bench-jwt-secret-0123456789abcdef', SIGNING_SECRET: 'bench-signing-secret-0123456789abcdef',
  SETTINGS_ENCRYPTION_KEY: 'bench-encryption-key-0123456789abcdef', LOG_LEVEL: 'silent',
  STORAGE_DRIVER: 'local', STORAGE_DIR: join(work, 'storage'), STORAGE_MAX_UPLOAD_BYTES: String(size), PORT: '0',
});
const app = await createApp(config);
const server = await app.listen(0, '127.0.0.1');
const port = (server.address() as AddressInfo).port;

function call(method: string, path: string, headers: Record<string, string>, write?: (req: ReturnType<typeof request>) => void): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers }, resolve);
    req.on('error', reject);
    if (write) write(req);
    else req.end();
  });
}

async function readAll(res: IncomingMessage): Promise<string> {
  let text = '';
  for await (const chunk of res) text += chunk;
  return text;
}

const samples: number[] = [];
let phase: 'idle' | 'upload' | 'download' = 'idle';
const peaks = { upload: 0, download: 0 };
const sampler = setInterval(() => {
  const rss = process.memoryUsage().rss;
  samples.push(rss);
  if (phase !== 'idle') peaks[phase] = Math.max(peaks[phase], rss);
}, 20);

try {
  const tenant = `bench-${randomBytes(3).toString('hex')}`;
  const created = await call('POST', '/api/v1/admin/tenants', { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' }, (req) => req.end(JSON.stringify({ id: tenant, name: 'Bench' })));
  if (created.statusCode !== 201) throw new Error(`tenant: ${created.statusCode} ${await readAll(created)}`);
  await readAll(created);

  global.gc?.();
  await new Promise((r) => setTimeout(r, 200));
  const baseline = process.memoryUsage().rss;

  // Upload: 100 MiB from one reused 1 MiB buffer, honouring backpressure.
  const block = randomBytes(MIB);
  const expected = createHash('sha256');
  for (let i = 0; i < sizeMib; i++) expected.update(block);
  const expectedSha = expected.digest('hex');
  phase = 'upload';
  const upStart = process.hrtime.bigint();
  const uploaded = await call('POST', '/api/v1/storage/objects', {
    Authorization: `Bearer ${key}`, 'X-Tenant-Id': tenant, 'X-Platform-Product': 'bench', 'X-Platform-Collection': 'blobs',
    'X-Platform-Filename': 'big.bin', 'X-Platform-Visibility': 'public', 'Content-Type': 'application/octet-stream', 'Content-Length': String(size),
  }, (req) => {
    let sent = 0;
    const pump = () => {
      while (sent < sizeMib) {
        sent += 1;
        if (!req.write(block)) return void req.once('drain', pump);
      }
      req.end();
    };
    pump();
  });
  const upBody = JSON.parse(await readAll(uploaded));
  const upSeconds = Number(process.hrtime.bigint() - upStart) / 1e9;
  if (uploaded.statusCode !== 201 || upBody.data.sha256 !== expectedSha) throw new Error(`upload: ${uploaded.statusCode} ${JSON.stringify(upBody)}`);

  // Download through the public asset endpoint.
  phase = 'download';
  const downStart = process.hrtime.bigint();
  const asset = await call('GET', `/api/v1/public/assets/${tenant}/products/bench/blobs/big.bin`, {});
  const got = createHash('sha256');
  let received = 0;
  for await (const chunk of asset) {
    received += (chunk as Buffer).length;
    got.update(chunk as Buffer);
  }
  const downSeconds = Number(process.hrtime.bigint() - downStart) / 1e9;
  phase = 'idle';
  if (asset.statusCode !== 200 || received !== size || got.digest('hex') !== expectedSha) throw new Error(`download: ${asset.statusCode}, ${received} bytes`);

  const mib = (n: number) => (n / MIB).toFixed(1);
  const result = {
    objectMiB: sizeMib,
    upload: { seconds: +upSeconds.toFixed(2), mibPerSecond: +(sizeMib / upSeconds).toFixed(1), peakRssMiB: +mib(peaks.upload) },
    download: { seconds: +downSeconds.toFixed(2), mibPerSecond: +(sizeMib / downSeconds).toFixed(1), peakRssMiB: +mib(peaks.download) },
    rss: {
      baselineMiB: +mib(baseline), peakMiB: +mib(Math.max(peaks.upload, peaks.download)),
      growthMiB: +mib(Math.max(peaks.upload, peaks.download) - baseline), samples: samples.length,
    },
  };
  console.log(`storage bench, local driver, ${sizeMib} MiB object (node ${process.version})`);
  console.log(`  upload   POST /storage/objects     ${result.upload.mibPerSecond} MiB/s (${result.upload.seconds} s), peak RSS ${result.upload.peakRssMiB} MiB`);
  console.log(`  download GET /public/assets/...    ${result.download.mibPerSecond} MiB/s (${result.download.seconds} s), peak RSS ${result.download.peakRssMiB} MiB`);
  console.log(`  RSS baseline ${result.rss.baselineMiB} MiB, peak ${result.rss.peakMiB} MiB, growth ${result.rss.growthMiB} MiB over ${result.rss.samples} samples`);
  console.log(JSON.stringify(result));
} finally {
  clearInterval(sampler);
  await app.close();
  rmSync(work, { recursive: true, force: true });
}
