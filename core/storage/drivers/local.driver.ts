import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { UrlSigner } from '../url-signer.js';
import type { ByteRange, ObjectHead, PresignPutOptions, PresignedPut, PutOptions, SignedGetOptions, StorageDriver } from './storage-driver.js';

/** Path of the local driver's signed endpoints (see storage-local.routes.ts). */
export const LOCAL_OBJECT_PATH = '/api/v1/storage/local/objects';

/**
 * Files under STORAGE_DIR, one file per key. Writes stream into a temporary file in the same
 * directory tree and are renamed into place, so a reader never sees half an object and a failed
 * upload leaves nothing behind. Presigned and signed URLs point at the service itself.
 */
export class LocalDriver implements StorageDriver {
  readonly name = 'local' as const;
  private readonly root: string;
  private readonly tmpDir: string;

  constructor(dir: string, private readonly signer: UrlSigner, private readonly publicBaseUrl: string) {
    this.root = resolve(dir);
    // Key segments never start with a dot, so no key can reach this folder.
    this.tmpDir = join(this.root, '.tmp');
  }

  private pathOf(key: string): string {
    const path = resolve(this.root, key);
    if (!path.startsWith(this.root + sep)) throw new Error(`Key escapes the storage root: ${key}`);
    return path;
  }

  async put(key: string, body: Readable, _options: PutOptions): Promise<void> {
    const target = this.pathOf(key);
    await mkdir(this.tmpDir, { recursive: true });
    const temp = join(this.tmpDir, `${Date.now()}-${randomBytes(8).toString('hex')}.part`);
    try {
      await pipeline(body, createWriteStream(temp, { flags: 'wx' }));
      await mkdir(dirname(target), { recursive: true });
      await rename(temp, target);
    } catch (err) {
      await rm(temp, { force: true });
      throw err;
    }
  }

  async read(key: string, range?: ByteRange): Promise<Readable> {
    const path = this.pathOf(key);
    const stream = createReadStream(path, range ? { start: range.start, end: range.end } : {});
    await new Promise<void>((ok, fail) => {
      stream.once('open', () => ok());
      stream.once('error', fail);
    });
    return stream;
  }

  async head(key: string): Promise<ObjectHead | null> {
    try {
      const s = await stat(this.pathOf(key));
      return { size: s.size, contentType: null, etag: null, lastModified: s.mtime, metadata: {} };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    await rm(this.pathOf(key), { force: true });
  }

  async presignPut(key: string, options: PresignPutOptions): Promise<PresignedPut> {
    const expires = Math.floor(Date.now() / 1000) + options.expiresIn;
    const constraints = { contentType: options.contentType, maxBytes: options.maxBytes, visibility: options.visibility };
    const signature = this.signer.sign('PUT', key, expires, constraints);
    const query = new URLSearchParams({ key, contentType: options.contentType, maxBytes: String(options.maxBytes), visibility: options.visibility, expires: String(expires), signature });
    const headers: Record<string, string> = { 'Content-Type': options.contentType };
    if (options.contentLength !== null) headers['Content-Length'] = String(options.contentLength);
    return { url: `${this.publicBaseUrl}${LOCAL_OBJECT_PATH}?${query}`, headers };
  }

  async signedGet(key: string, options: SignedGetOptions): Promise<string> {
    const expires = Math.floor(Date.now() / 1000) + options.expiresIn;
    const signature = this.signer.sign('GET', key, expires);
    const query = new URLSearchParams({ key, expires: String(expires), signature });
    return `${this.publicBaseUrl}${LOCAL_OBJECT_PATH}?${query}`;
  }

  async close(): Promise<void> {}
}
