import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { ByteRange, ObjectHead, PresignPutOptions, PresignedPut, PutOptions, SignedGetOptions, StorageDriver } from './storage-driver.js';

export interface S3DriverOptions {
  endpoint: string | null;
  bucket: string;
  region: string;
  accessKeyId: string | null;
  secretAccessKey: string | null;
  forcePathStyle: boolean;
}

/**
 * Any S3-compatible store through the AWS SDK v3. Presigned PUTs sign `content-type` and
 * `content-length` (SigV4 signed headers), so the store refuses an upload of another type or size.
 * S3 itself makes a PUT atomic: a failed or aborted upload leaves no object.
 */
export class S3Driver implements StorageDriver {
  readonly name = 's3' as const;
  private readonly client: S3Client;
  private readonly bucket: string;

  constructor(options: S3DriverOptions) {
    this.bucket = options.bucket;
    this.client = new S3Client({
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

  async put(key: string, body: Readable, options: PutOptions): Promise<void> {
    if (options.contentLength === null) {
      // S3 needs the length up front: spool a stream of unknown length to a temporary file first.
      const dir = await mkdtemp(join(tmpdir(), 'storage-spool-'));
      const file = join(dir, randomBytes(6).toString('hex'));
      try {
        await pipeline(body, createWriteStream(file));
        const { size } = await stat(file);
        await this.send(key, createReadStream(file), { ...options, contentLength: size });
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
      return;
    }
    await this.send(key, body, options);
  }

  private async send(key: string, body: Readable, options: PutOptions): Promise<void> {
    // The SDK pipes the body into its request, and a pipe does not forward errors: abort on them.
    const abort = new AbortController();
    let failure: unknown = null;
    const onError = (err: unknown) => {
      failure ??= err;
      abort.abort();
    };
    body.once('error', onError);
    try {
      await this.client.send(new PutObjectCommand({
        Bucket: this.bucket, Key: key, Body: body, ContentLength: options.contentLength ?? undefined,
        ContentType: options.contentType, Metadata: options.metadata,
      }), { abortSignal: abort.signal });
    } catch (err) {
      throw failure ?? err;
    } finally {
      body.off('error', onError);
    }
    if (failure) throw failure;
  }

  async read(key: string, range?: ByteRange): Promise<Readable> {
    const out = await this.client.send(new GetObjectCommand({
      Bucket: this.bucket, Key: key, ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}),
    }));
    return out.Body as Readable;
  }

  async head(key: string): Promise<ObjectHead | null> {
    try {
      const out = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
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
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
  }

  async presignPut(key: string, options: PresignPutOptions): Promise<PresignedPut> {
    const length = options.contentLength ?? options.maxBytes;
    const command = new PutObjectCommand({
      Bucket: this.bucket, Key: key, ContentType: options.contentType, ContentLength: length,
      Metadata: { visibility: options.visibility },
    });
    const url = await getSignedUrl(this.client, command, {
      expiresIn: options.expiresIn,
      signableHeaders: new Set(['content-type', 'content-length']),
    });
    return { url, headers: { 'Content-Type': options.contentType, 'Content-Length': String(length) } };
  }

  async signedGet(key: string, options: SignedGetOptions): Promise<string> {
    const command = new GetObjectCommand({
      Bucket: this.bucket, Key: key, ...(options.attachment ? { ResponseContentDisposition: 'attachment' } : {}),
    });
    return getSignedUrl(this.client, command, { expiresIn: options.expiresIn });
  }

  async close(): Promise<void> {
    this.client.destroy();
  }
}
