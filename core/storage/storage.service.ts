import { Readable } from 'node:stream';
import type { Config } from '../../config/index.js';
import type { Logger } from 'pino';
import type { Database } from '../db/database.js';
import { nowIso } from '../base/ids.js';
import { BadRequest, Forbidden, NotFound, PayloadTooLarge, TenantNotFound, ValidationFailed } from '../base/errors.js';
import type { RequestContext } from '../base/request-context.js';
import type { TenantsService } from '../tenants/tenants.service.js';
import { LocalDriver } from './drivers/local.driver.js';
import { S3Driver } from './drivers/s3.driver.js';
import type { ByteRange, StorageDriver, Visibility } from './drivers/storage-driver.js';
import { assertSegment, buildKey, parseKey, tryParseKey } from './storage-key.js';
import { StorageRepository, type ObjectFilter, type StoredObject } from './storage.repository.js';
import { UploadCutOff, UploadMeter, UploadTooLarge } from './upload-meter.js';
import { UrlSigner } from './url-signer.js';

export type { StoredObject } from './storage.repository.js';
export type { Visibility } from './drivers/storage-driver.js';

/** Presigned uploads: 15 minutes by default, at most 7 days (the SigV4 limit). */
export const UPLOAD_EXPIRY_DEFAULT = 15 * 60;
export const UPLOAD_EXPIRY_MAX = 7 * 24 * 3600;
/** Signed downloads: 1 hour by default, at most 7 days. */
export const DOWNLOAD_EXPIRY_DEFAULT = 3600;
export const DOWNLOAD_EXPIRY_MAX = 7 * 24 * 3600;

/**
 * White space, spelled out: `\s` is not the same class everywhere (RE2, which the service's Ajv uses, leaves out the
 * vertical tab that JavaScript's and Python's take), and a document's pattern must mean one thing to every validator.
 */
const SPACE = '[\\t\\n\\f\\r ]';
const CONTENT_TYPE = new RegExp(`^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,63}\\/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}(${SPACE}*;${SPACE}*[A-Za-z0-9_.-]+=("[^"\\\\\\r\\n]{0,100}"|[A-Za-z0-9_.-]{1,100})){0,4}$`);
/** What a `contentType` parameter may be: a media type (surrounding spaces ignored), or empty for application/octet-stream. */
export const CONTENT_TYPE_PARAMETER = `^${SPACE}*(?:${CONTENT_TYPE.source.slice(1, -1)})?${SPACE}*$`;
/** Types a browser would render as a document: always served as attachments. */
const ACTIVE_CONTENT = /^(text\/html|application\/xhtml\+xml|image\/svg\+xml|text\/xml|application\/xml)\b/i;

export interface ObjectLocation {
  product: string;
  collection: string;
  filename: string;
}

export interface PutObjectInput extends ObjectLocation {
  contentType?: string;
  visibility?: Visibility;
  body: Buffer | Readable;
  /** The declared length (Content-Length), when known; more than the limit is refused before reading. */
  contentLength?: number | null;
}

export interface PresignUploadInput extends ObjectLocation {
  contentType?: string;
  visibility?: Visibility;
  expiresIn?: number;
  /** Exact size of the coming upload; required by the s3 driver (SigV4 signs an exact Content-Length). */
  contentLength?: number | null;
}

export interface PresignedUpload {
  key: string;
  url: string;
  method: 'PUT';
  headers: Record<string, string>;
  expiresAt: string;
}

/** What the local driver's signed PUT carries in its query (see storage-local.routes.ts). */
export interface SignedUploadQuery {
  key: string;
  contentType: string;
  maxBytes: number;
  visibility: Visibility;
  expires: number;
  signature: string;
}

/**
 * The storage mediator: tenant-scoped objects on the local driver or any S3-compatible store.
 * The tenant of a key always comes from the caller's request context, never from input.
 */
export class StorageService {
  readonly driver: StorageDriver;
  private readonly repo: StorageRepository;
  private readonly signer: UrlSigner;

  constructor(readonly config: Config, readonly db: Database, readonly logger: Logger, private readonly tenants: Pick<TenantsService, 'get'>) {
    this.repo = new StorageRepository(db);
    this.signer = new UrlSigner(config.signingSecret);
    const s3 = config.storage.s3;
    this.driver = config.storage.driver === 's3'
      ? new S3Driver({ ...s3, bucket: s3.bucket ?? '' })
      : new LocalDriver(config.storage.dir, this.signer, config.publicBaseUrl);
  }

  get maxUploadBytes(): number {
    return this.config.storage.maxUploadBytes;
  }

  /** Streams the body to the driver (sha256 and size computed on the way), then records the metadata. */
  async putObject(rc: RequestContext, input: PutObjectInput): Promise<StoredObject> {
    const tenant = requireTenant(rc);
    const key = buildKey({ tenant, product: input.product, collection: input.collection, filename: input.filename });
    const contentType = checkContentType(input.contentType);
    const visibility = input.visibility ?? 'private';
    const limit = this.maxUploadBytes;
    const body = Buffer.isBuffer(input.body) ? Readable.from([input.body]) : input.body;
    const declared = Buffer.isBuffer(input.body) ? input.body.length : (input.contentLength ?? null);
    return this.store(rc, tenant, key, body, { contentType, contentLength: declared, visibility, limit });
  }

  /** Metadata and bytes of one of the caller's objects. */
  async getObject(rc: RequestContext, key: string, range?: ByteRange): Promise<{ object: StoredObject; body: Readable }> {
    const object = await this.requireOwn(rc, key);
    return { object, body: await this.driver.read(object.key, range) };
  }

  async deleteObject(rc: RequestContext, key: string): Promise<void> {
    const object = await this.requireOwn(rc, key);
    await this.repo.delete(rc, object.tenantId, object.key);
    await this.driver.delete(object.key);
  }

  async list(rc: RequestContext, filter: ObjectFilter, limit: number, offset: number) {
    const tenant = requireTenant(rc);
    if (filter.product) assertSegment(filter.product);
    if (filter.collection) assertSegment(filter.collection);
    const { items, total } = await this.repo.list(rc, tenant, filter, limit, offset);
    return {
      items: items.map((o) => this.view(o)),
      pagination: { limit, offset, total, hasMore: offset + items.length < total, nextCursor: null },
    };
  }

  /** The public URL of `products/{product}/{collection}/{filename}` (or a whole key) of a tenant. */
  publicUrl(tenantId: string, path: string): string {
    assertSegment(tenantId);
    const rest = path.startsWith(`tenants/${tenantId}/`) ? path.slice(`tenants/${tenantId}/`.length) : path.replace(/^\/+/, '');
    parseKey(`tenants/${tenantId}/${rest}`);
    return `${this.config.publicBaseUrl}/api/v1/public/assets/${tenantId}/${rest}`;
  }

  async presignUpload(rc: RequestContext, input: PresignUploadInput): Promise<PresignedUpload> {
    const tenant = requireTenant(rc);
    const key = buildKey({ tenant, product: input.product, collection: input.collection, filename: input.filename });
    const contentType = checkContentType(input.contentType);
    const expiresIn = checkExpiry(input.expiresIn ?? UPLOAD_EXPIRY_DEFAULT, UPLOAD_EXPIRY_MAX);
    const limit = this.maxUploadBytes;
    const contentLength = input.contentLength ?? null;
    if (contentLength !== null && contentLength > limit) throw PayloadTooLarge(limit);
    if (contentLength === null && this.driver.name === 's3') {
      throw ValidationFailed('contentLength is required with the s3 driver: the store signs an exact size', [
        { path: 'query/contentLength', message: 'is required with the s3 driver' },
      ]);
    }
    const { url, headers } = await this.driver.presignPut(key, {
      contentType, contentLength, maxBytes: contentLength ?? limit, visibility: input.visibility ?? 'private', expiresIn,
    });
    return { key, url, method: 'PUT', headers, expiresAt: expiry(expiresIn) };
  }

  /** A time-limited download URL for one of the caller's objects (private ones included). */
  async signedUrl(rc: RequestContext, key: string, expiresIn = DOWNLOAD_EXPIRY_DEFAULT): Promise<{ url: string; expiresAt: string }> {
    checkExpiry(expiresIn, DOWNLOAD_EXPIRY_MAX);
    const object = await this.requireOwn(rc, key, { refresh: true });
    const url = await this.driver.signedGet(object.key, { expiresIn, attachment: isActiveContent(object.contentType) });
    return { url, expiresAt: expiry(expiresIn) };
  }

  /**
   * The local driver's signed PUT: checks signature, expiry, content type and size, stores the bytes and
   * records the object under the tenant named in the (signed) key.
   */
  async receiveSignedUpload(query: SignedUploadQuery, contentType: string | undefined, contentLength: number | null, body: Readable): Promise<StoredObject> {
    const parts = tryParseKey(query.key);
    const constraints = { contentType: query.contentType, maxBytes: query.maxBytes, visibility: query.visibility };
    if (!parts || !this.signer.verify('PUT', query.key, query.expires, constraints, query.signature)) {
      throw Forbidden('The upload URL is not valid: its signature does not match');
    }
    if (query.expires * 1000 < Date.now()) throw Forbidden('The upload URL has expired');
    if ((contentType ?? '').toLowerCase() !== query.contentType.toLowerCase()) {
      throw Forbidden(`The upload URL is signed for Content-Type ${query.contentType}`);
    }
    await this.assertTenantActive(parts.tenant);
    const rc = { tenantId: parts.tenant, principal: null, requestId: 'signed-upload' };
    return this.store(rc, parts.tenant, query.key, body, {
      contentType: query.contentType, contentLength, visibility: query.visibility, limit: query.maxBytes,
    });
  }

  /** The local driver's signed GET: the object when signature and expiry hold, else 403. */
  async openSignedDownload(key: string, expires: number, signature: string): Promise<StoredObject> {
    const parts = tryParseKey(key);
    if (!parts || !this.signer.verify('GET', key, expires, {}, signature)) throw Forbidden('The download URL is not valid: its signature does not match');
    if (expires * 1000 < Date.now()) throw Forbidden('The download URL has expired');
    await this.assertTenantActive(parts.tenant);
    const object = await this.lookup(parts.tenant, key);
    if (!object) throw NotFound('No such object');
    return object;
  }

  /** Signed URLs outlive a suspension or deletion: like every public path, they answer 404 then. */
  private async assertTenantActive(tenantId: string): Promise<void> {
    const tenant = await this.tenants.get(null, tenantId);
    if (!tenant || tenant.status !== 'active') throw TenantNotFound(tenantId);
  }

  /** A public object of a tenant by its path below `tenants/{tenant}/`; anything else (traversal included) is null. */
  async findPublic(tenantId: string, path: string): Promise<StoredObject | null> {
    const key = `tenants/${tenantId}/${path}`;
    const parts = tryParseKey(key);
    if (!parts || parts.tenant !== tenantId) return null;
    const object = await this.lookup(tenantId, key);
    return object && object.visibility === 'public' ? object : null;
  }

  /** Opens the bytes of an object found by one of the methods above. */
  open(object: StoredObject, range?: ByteRange): Promise<Readable> {
    return this.driver.read(object.key, range);
  }

  /** The public shape of an object in API answers. */
  view(object: StoredObject) {
    return {
      key: object.key, product: object.product, collection: object.collection, filename: object.filename,
      size: object.size, contentType: object.contentType, sha256: object.sha256, visibility: object.visibility,
      url: object.visibility === 'public' ? this.publicUrl(object.tenantId, object.key) : null,
      createdAt: object.createdAt, updatedAt: object.updatedAt,
    };
  }

  async close(): Promise<void> {
    await this.driver.close();
  }

  private async requireOwn(rc: RequestContext, key: string, options: { refresh?: boolean } = {}): Promise<StoredObject> {
    const tenant = requireTenant(rc);
    const parts = parseKey(key);
    if (parts.tenant !== tenant) throw Forbidden('The key belongs to another tenant');
    const object = await this.lookup(tenant, key, options.refresh);
    if (!object) throw NotFound(`No object ${key}`);
    return object;
  }

  /**
   * The metadata of a key. An object uploaded straight to S3 with a presigned URL is not known to the
   * service until it is first asked for: it is then registered from the store's HEAD answer.
   * `refresh` re-reads the store (s3) to notice a presigned overwrite of a known key.
   */
  private async lookup(tenant: string, key: string, refresh = false): Promise<StoredObject | null> {
    const known = await this.repo.find(null, tenant, key);
    if (this.driver.name !== 's3' || (known && !refresh)) return known;
    const head = await this.driver.head(key);
    if (!head) {
      if (known) await this.repo.delete(null, tenant, key);
      return null;
    }
    if (known && head.etag === known.etag) return known;
    const rc = { tenantId: tenant, principal: null, requestId: 'storage-register' };
    const visibility: Visibility = head.metadata.visibility === 'public' ? 'public' : 'private';
    return this.record(rc, tenant, key, {
      size: head.size, contentType: head.contentType ?? 'application/octet-stream', sha256: null,
      etag: head.etag ?? `"${head.size}-${head.lastModified?.getTime() ?? 0}"`, visibility,
    }, known, false);
  }

  /**
   * Streams a body to the driver through an UploadMeter (size, SHA-256, limit), then records the metadata.
   * A declared length over the limit is refused before anything is read.
   */
  private async store(
    rc: RequestContext, tenant: string, key: string, body: Readable,
    options: { contentType: string; contentLength: number | null; visibility: Visibility; limit: number },
  ): Promise<StoredObject> {
    const { contentType, contentLength, visibility, limit } = options;
    if (contentLength !== null && contentLength > limit) throw PayloadTooLarge(limit);
    const meter = new UploadMeter(limit);
    feed(body, meter);
    const existed = await this.repo.find(rc, tenant, key);
    try {
      await this.driver.put(key, meter, { contentType, contentLength, metadata: { visibility }, sha256: () => meter.sha256() });
    } catch (err) {
      throw uploadError(err, limit);
    }
    const sha256 = meter.sha256();
    return this.record(rc, tenant, key, { size: meter.size, contentType, sha256, etag: `"${sha256}"`, visibility }, existed, true);
  }

  /** Writes the metadata once the bytes are stored; a brand-new object whose row fails is removed again. */
  private async record(
    rc: RequestContext, tenant: string, key: string,
    bytes: Pick<StoredObject, 'size' | 'contentType' | 'sha256' | 'etag' | 'visibility'>,
    existed: StoredObject | null, removeOnFailure: boolean,
  ): Promise<StoredObject> {
    const parts = parseKey(key);
    const now = nowIso();
    const object: StoredObject = {
      tenantId: tenant, key, product: parts.product, collection: parts.collection, filename: parts.filename,
      ...bytes, createdAt: existed?.createdAt ?? now, updatedAt: now,
    };
    try {
      await this.repo.upsert(rc, object);
    } catch (err) {
      if (removeOnFailure && !existed) await this.driver.delete(key).catch(() => {});
      throw err;
    }
    return object;
  }
}

export function isActiveContent(contentType: string): boolean {
  return ACTIVE_CONTENT.test(contentType);
}

function requireTenant(rc: RequestContext): string {
  if (!rc.tenantId) throw Forbidden('Storage needs a tenant');
  return rc.tenantId;
}

function checkContentType(value: string | undefined): string {
  const type = (value ?? '').trim() || 'application/octet-stream';
  if (type.length > 200 || !CONTENT_TYPE.test(type)) {
    throw ValidationFailed('Invalid content type', [{ path: 'contentType', message: 'must be a media type such as image/png' }]);
  }
  return type;
}

/** The answer for a failed upload stream: 413 past the limit, 400 when the uploader went away. */
function uploadError(err: unknown, limit: number): unknown {
  if (err instanceof UploadTooLarge) return PayloadTooLarge(limit);
  if (err instanceof UploadCutOff) return BadRequest(err.message);
  return err;
}

function checkExpiry(seconds: number, max: number): number {
  if (!Number.isInteger(seconds) || seconds < 1 || seconds > max) {
    throw ValidationFailed('Invalid expiry', [{ path: 'expiresIn', message: `must be an integer from 1 to ${max} seconds` }]);
  }
  return seconds;
}

function expiry(seconds: number): string {
  return new Date(Math.floor(Date.now() / 1000) * 1000 + seconds * 1000).toISOString();
}

/**
 * Pipes the source into the meter without ever destroying the source (an HTTP request must stay
 * able to receive its 413 answer). A source that fails or closes before its end fails the meter.
 */
function feed(source: Readable, meter: UploadMeter): void {
  const cutOff = () => {
    if (!source.readableEnded) meter.destroy(new UploadCutOff());
  };
  source.once('error', (err) => meter.destroy(err));
  source.once('close', cutOff);
  meter.once('close', () => {
    source.off('close', cutOff);
    source.unpipe(meter);
  });
  source.pipe(meter);
}
