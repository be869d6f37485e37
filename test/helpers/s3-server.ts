import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from 's3rver';

export const S3_ACCESS_KEY = 'S3RVER';
export const S3_SECRET_KEY = 'S3RVER';

export interface S3TestServer {
  /** The endpoint to hand to the service: the SigV4 gate in front of s3rver. */
  endpoint: string;
  bucket: string;
  /** The app environment for STORAGE_DRIVER=s3 against this server. */
  env: Record<string, string>;
  /** Presigned requests the gate refused (for diagnostics). */
  refused: string[];
  close(): Promise<void>;
}

/**
 * A real S3-compatible server on loopback: s3rver (files in a temp dir) with a bucket.
 *
 * s3rver 3.7 checks the expiry of presigned SigV4 URLs but not their signature
 * (lib/middleware/authentication.js: "Signature version 4 calculation is unimplemeneted"), so a
 * tampered URL, or a PUT with another Content-Type or Content-Length than the signed ones, would pass.
 * Real S3, MinIO or R2 refuse those. To test what they do, requests go through a small gate that
 * verifies presigned (query) SigV4 signatures as AWS documents them, written here with node:crypto
 * (independent of the SDK that signs), answers 403 SignatureDoesNotMatch when they fail, and
 * forwards everything else to s3rver unchanged.
 */
export async function startS3Server(bucket = 'platform-test'): Promise<S3TestServer> {
  const directory = mkdtempSync(join(tmpdir(), 's3rver-'));
  const s3rver = new S3rver({
    port: 0, address: '127.0.0.1', silent: true, directory, configureBuckets: [{ name: bucket }],
  });
  const { port: upstreamPort } = await s3rver.run();
  const refused: string[] = [];
  const gate = createServer((req, res) => {
    const failure = verifyPresigned(req);
    if (failure) {
      refused.push(`${req.method} ${req.url}: ${failure}`);
      req.resume();
      res.writeHead(403, { 'Content-Type': 'application/xml', Connection: 'close' });
      res.end(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>SignatureDoesNotMatch</Code><Message>${failure}</Message></Error>`);
      return;
    }
    forward(req, res, upstreamPort);
  });
  await new Promise<void>((resolve) => gate.listen(0, '127.0.0.1', () => resolve()));
  const endpoint = `http://127.0.0.1:${(gate.address() as AddressInfo).port}`;
  return {
    endpoint, bucket, refused,
    env: {
      STORAGE_DRIVER: 's3', S3_ENDPOINT: endpoint, S3_BUCKET: bucket, S3_REGION: 'us-east-1',
      S3_ACCESS_KEY_ID: S3_ACCESS_KEY, S3_SECRET_ACCESS_KEY: S3_SECRET_KEY, S3_FORCE_PATH_STYLE: 'true',
    },
    async close() {
      await closeServer(gate);
      await s3rver.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

function forward(req: IncomingMessage, res: ServerResponse, port: number): void {
  const upstream = request({ host: '127.0.0.1', port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
    res.writeHead(answer.statusCode ?? 502, answer.headers);
    answer.pipe(res);
  });
  upstream.on('error', () => res.destroy());
  req.on('close', () => {
    if (!req.complete) upstream.destroy();
  });
  req.pipe(upstream);
}

/** RFC 3986 encoding as SigV4 wants it. */
function encode(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

function hmac(key: Buffer | string, text: string): Buffer {
  return createHmac('sha256', key).update(text).digest();
}

/** Null when the request is not presigned or its signature holds; else why it fails. */
function verifyPresigned(req: IncomingMessage): string | null {
  const url = new URL(req.url ?? '/', 'http://gate');
  if (!url.searchParams.has('X-Amz-Algorithm')) return null;
  const q = url.searchParams;
  const credential = (q.get('X-Amz-Credential') ?? '').split('/');
  const [accessKey, date, region, service] = credential;
  if (accessKey !== S3_ACCESS_KEY || credential.length !== 5) return 'unknown access key';
  const signedHeaders = (q.get('X-Amz-SignedHeaders') ?? '').split(';');
  const canonicalQuery = [...q.entries()]
    .filter(([name]) => name !== 'X-Amz-Signature')
    .map(([name, value]) => [encode(name), encode(value)])
    .sort(([a, av], [b, bv]) => (a < b ? -1 : a > b ? 1 : av < bv ? -1 : av > bv ? 1 : 0))
    .map(([name, value]) => `${name}=${value}`)
    .join('&');
  const canonicalHeaders = signedHeaders
    .map((name) => `${name}:${String(req.headers[name] ?? '').trim().replace(/\s+/g, ' ')}\n`)
    .join('');
  const canonicalRequest = [
    req.method, url.pathname, canonicalQuery, canonicalHeaders, signedHeaders.join(';'), q.get('X-Amz-Content-Sha256') ?? 'UNSIGNED-PAYLOAD',
  ].join('\n');
  const scope = credential.slice(1).join('/');
  const stringToSign = ['AWS4-HMAC-SHA256', q.get('X-Amz-Date'), scope, createHash('sha256').update(canonicalRequest).digest('hex')].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${S3_SECRET_KEY}`, date), region), service), 'aws4_request');
  const expected = Buffer.from(hmac(key, stringToSign).toString('hex'));
  const given = Buffer.from(q.get('X-Amz-Signature') ?? '');
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return 'the signature does not match the request';
  return null;
}
