import type { Readable } from 'node:stream';

export type Visibility = 'public' | 'private';

/** Inclusive byte range, as in an HTTP Range header. */
export interface ByteRange {
  start: number;
  end: number;
}

export interface PutOptions {
  contentType: string;
  /** Exact length when known (Content-Length); null for a stream of unknown length. */
  contentLength: number | null;
  /** Small string metadata kept with the bytes (the s3 driver stores it as x-amz-meta-*). */
  metadata: Record<string, string>;
  /** Hex SHA-256 of the body, callable once the body has ended (the s3 driver has the store verify it). */
  sha256?: () => string;
}

export interface ObjectHead {
  size: number;
  contentType: string | null;
  etag: string | null;
  lastModified: Date | null;
  metadata: Record<string, string>;
}

export interface PresignPutOptions {
  contentType: string;
  /** The exact length the upload must have, when the caller named it. */
  contentLength: number | null;
  /** The most bytes the upload may have (the exact length when given). */
  maxBytes: number;
  visibility: Visibility;
  expiresIn: number;
}

export interface PresignedPut {
  url: string;
  /** Headers the uploader must send with the PUT (they are bound into the signature). */
  headers: Record<string, string>;
}

export interface SignedGetOptions {
  expiresIn: number;
  /** Ask the store to answer with Content-Disposition: attachment (HTML, SVG). */
  attachment: boolean;
}

/**
 * Where the bytes live. A driver stores, reads and signs; it knows nothing of tenants or metadata
 * (the service and the repository do). Keys reaching a driver are validated already.
 */
export interface StorageDriver {
  readonly name: 'local' | 's3';
  /**
   * Stores the stream under the key. Readers see either the old object or the whole new one; when
   * the stream fails, nothing is kept and the promise rejects with the stream's error.
   */
  put(key: string, body: Readable, options: PutOptions): Promise<void>;
  /** The bytes of the object (or of one range of it). */
  read(key: string, range?: ByteRange): Promise<Readable>;
  head(key: string): Promise<ObjectHead | null>;
  delete(key: string): Promise<void>;
  presignPut(key: string, options: PresignPutOptions): Promise<PresignedPut>;
  signedGet(key: string, options: SignedGetOptions): Promise<string>;
  close(): Promise<void>;
}
