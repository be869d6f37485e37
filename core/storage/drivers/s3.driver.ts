import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { S3Client } from '@aws-sdk/client-s3';
import { StorageUnavailable } from '../../base/errors.js';
import type { ByteRange, ObjectHead, PresignPutOptions, PresignedPut, PutOptions, SignedGetOptions, StorageDriver } from './storage-driver.js';

export interface S3DriverOptions {
  endpoint: string | null;
  bucket: string;
  region: string;
  accessKeyId: string | null;
  secretAccessKey: string | null;
  forcePathStyle: boolean;
}

type Sdk = typeof import('@aws-sdk/client-s3') & Pick<typeof import('@aws-sdk/s3-request-presigner'), 'getSignedUrl'>;

/**
 * Any S3-compatible store through the AWS SDK v3, loaded on first use (the SDK adds about 20 MiB to the
 * process, which a service on local storage never needs). Presigned PUTs sign `content-type` and
 * `content-length` (SigV4 signed headers), so the store refuses an upload of another type or size.
 */
/** What a client is told to wait before retrying when the store cannot be reached. */
const RETRY_AFTER_SECONDS = 5;
/** Node's errors for a store that cannot be reached (refused, unknown host, cut off, timed out). */
const NETWORK_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE']);

function unreachable(err: unknown): boolean {
  const { code, name } = (err ?? {}) as { code?: unknown; name?: unknown };
  return (typeof code === 'string' && NETWORK_ERRORS.has(code)) || name === 'TimeoutError';
}

export class S3Driver implements StorageDriver {
  readonly name = 's3' as const;
  private readonly bucket: string;
  private loaded: Promise<{ sdk: Sdk; client: S3Client }> | null = null;

  constructor(private readonly options: S3DriverOptions) {
    this.bucket = options.bucket;
  }

  /** The SDK and the client, made on first use. */
  private s3(): Promise<{ sdk: Sdk; client: S3Client }> {
    this.loaded ??= Promise.all([import('@aws-sdk/client-s3'), import('@aws-sdk/s3-request-presigner')]).then(([s3, presigner]) => {
      const sdk: Sdk = { ...s3, getSignedUrl: presigner.getSignedUrl };
      const client = this.makeClient(sdk);
      // A store that cannot be reached is named as such (503 unavailable), not taken for the database.
      const send = client.send.bind(client) as (command: unknown) => Promise<unknown>;
      client.send = ((command: unknown) => send(command).catch((err: unknown) => {
        throw unreachable(err) ? StorageUnavailable(RETRY_AFTER_SECONDS, [], { 'Retry-After': String(RETRY_AFTER_SECONDS) }) : err;
      })) as S3Client['send'];
      return { sdk, client };
    });
    return this.loaded;
  }

  private makeClient(sdk: Sdk): S3Client {
    const { options } = this;
    return new sdk.S3Client({
      region: options.region,
      ...(options.endpoint ? { endpoint: options.endpoint } : {}),
      forcePathStyle: options.forcePathStyle,
      ...(options.accessKeyId && options.secretAccessKey
        ? { credentials: { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey } }
        : {}),
      // Checksums only where S3 requires them: many S3-compatible stores do not know the newer ones.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  }

  /**
   * The upload is spooled to a temporary file (streamed, so memory stays flat) and sent once it is
   * complete. An upload that fails or is cut off never reaches the store, whatever the store would
   * do with a short body (S3 refuses it; s3rver keeps a truncated object), and the store checks the
   * SHA-256 computed on the way (x-amz-checksum-sha256).
   */
  async put(key: string, body: Readable, options: PutOptions): Promise<void> {
    const dir = await mkdtemp(join(tmpdir(), 'storage-spool-'));
    const file = join(dir, randomBytes(6).toString('hex'));
    try {
      await pipeline(body, createWriteStream(file));
      const { size } = await stat(file);
      const checksum = options.sha256 ? Buffer.from(options.sha256(), 'hex').toString('base64') : undefined;
      const { sdk, client } = await this.s3();
      await client.send(new sdk.PutObjectCommand({
        Bucket: this.bucket, Key: key, Body: createReadStream(file), ContentLength: size,
        ContentType: options.contentType, Metadata: options.metadata, ...(checksum ? { ChecksumSHA256: checksum } : {}),
      }));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  async read(key: string, range?: ByteRange): Promise<Readable> {
    const { sdk, client } = await this.s3();
    const out = await client.send(new sdk.GetObjectCommand({
      Bucket: this.bucket, Key: key, ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}),
    }));
    return out.Body as Readable;
  }

  async head(key: string): Promise<ObjectHead | null> {
    const { sdk, client } = await this.s3();
    try {
      const out = await client.send(new sdk.HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return {
        size: Number(out.ContentLength ?? 0),
        contentType: out.ContentType ?? null,
        etag: out.ETag ?? null,
        lastModified: out.LastModified ?? null,
        metadata: out.Metadata ?? {},
      };
    } catch (err) {
      if ((err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) return null;
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    const { sdk, client } = await this.s3();
    await client.send(new sdk.DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
  }

  async presignPut(key: string, options: PresignPutOptions): Promise<PresignedPut> {
    const length = options.contentLength ?? options.maxBytes;
    const { sdk, client } = await this.s3();
    const command = new sdk.PutObjectCommand({
      Bucket: this.bucket, Key: key, ContentType: options.contentType, ContentLength: length,
      Metadata: { visibility: options.visibility },
    });
    const url = await sdk.getSignedUrl(client, command, {
      expiresIn: options.expiresIn,
      signableHeaders: new Set(['content-type', 'content-length']),
    });
    return { url, headers: { 'Content-Type': options.contentType, 'Content-Length': String(length) } };
  }

  async signedGet(key: string, options: SignedGetOptions): Promise<string> {
    const { sdk, client } = await this.s3();
    const command = new sdk.GetObjectCommand({
      Bucket: this.bucket, Key: key, ...(options.attachment ? { ResponseContentDisposition: 'attachment' } : {}),
    });
    return sdk.getSignedUrl(client, command, { expiresIn: options.expiresIn });
  }

  async close(): Promise<void> {
    if (this.loaded) (await this.loaded.catch(() => null))?.client.destroy();
  }
}
