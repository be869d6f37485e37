import { createHash, type Hash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';

/** Raised by UploadMeter when the stream passes its byte limit. */
export class UploadTooLarge extends Error {
  constructor(readonly limit: number) {
    super(`The upload exceeds ${limit} bytes`);
    this.name = 'UploadTooLarge';
  }
}

/** Raised when the uploader's stream ends or closes before all of its bytes arrived. */
export class UploadCutOff extends Error {
  constructor() {
    super('The upload was cut off before its end');
    this.name = 'UploadCutOff';
  }
}

/**
 * A pass-through that counts the bytes, hashes them with SHA-256 while they stream, and fails with
 * UploadTooLarge as soon as more than `limit` bytes went through (nothing past the limit is passed on).
 */
export class UploadMeter extends Transform {
  size = 0;
  private readonly hash: Hash = createHash('sha256');
  private digest: string | null = null;

  constructor(readonly limit: number) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.size += chunk.length;
    if (this.size > this.limit) {
      done(new UploadTooLarge(this.limit));
      return;
    }
    this.hash.update(chunk);
    done(null, chunk);
  }

  /** The hex SHA-256 of everything that went through; call once the stream has ended. */
  sha256(): string {
    this.digest ??= this.hash.digest('hex');
    return this.digest;
  }
}
