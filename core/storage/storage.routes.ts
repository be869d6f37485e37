import { KEY_SCHEMA, KEY_SEGMENT, KEY_SEGMENT_SCHEMA } from './storage-key.js';
import type { AppContext } from '../http/app-state.js';
import { MissingHeader, ValidationFailed } from '../base/errors.js';
import type { PackRouter } from '../http/route.js';
import { OFFSET_QUERY } from '../http/response-schemas.js';
import {
  CONTENT_TYPE_PARAMETER, DOWNLOAD_EXPIRY_DEFAULT, DOWNLOAD_EXPIRY_MAX, UPLOAD_EXPIRY_DEFAULT, UPLOAD_EXPIRY_MAX, type StorageService, type Visibility,
} from './storage.service.js';
import { releaseUpload } from './upload-request.js';
import { UPLOAD_ANSWER_SCHEMA, uploadAnswer } from './upload-answer.js';
import { storageLocalRoutes } from './storage-local.routes.js';
import { publicAssetRoutes } from './public-assets.routes.js';

const tags = ['storage'];
const visibility = { type: 'string', enum: ['public', 'private'] };
const objectItem = {
  type: 'object',
  properties: {
    key: { type: 'string' }, product: { type: 'string' }, collection: { type: 'string' }, filename: { type: 'string' },
    size: { type: 'integer' }, contentType: { type: 'string' }, sha256: { type: ['string', 'null'] }, visibility,
    url: { type: ['string', 'null'], description: 'public asset URL of a public object' },
    createdAt: { type: 'string' }, updatedAt: { type: 'string' },
  },
};

/** The storage mediator's authenticated endpoints (CONTRACT.md section 8). */
export function storageRoutes(router: PackRouter, storage: StorageService): void {
  router.post('/storage/objects', {
    summary: 'Upload an object (streamed)',
    description: 'The raw body is streamed to the store under `tenants/{tenant}/products/{product}/{collection}/{filename}`; '
      + 'its SHA-256 is computed on the way. An existing object of the same key is replaced.',
    tags, auth: 'tenant', role: 'editor', body: 'raw', status: 201, idempotent: true, response: UPLOAD_ANSWER_SCHEMA,
    headers: [
      ...['X-Platform-Product', 'X-Platform-Collection', 'X-Platform-Filename'].map((name) => ({
        name, required: true, schema: { type: 'string', pattern: KEY_SEGMENT.source, not: { enum: ['.', '..'] } }, description: 'A segment of the storage key',
      })),
      { name: 'X-Platform-Visibility', required: false, schema: { type: 'string', enum: ['public', 'private'], default: 'private' } },
    ],
    errors: ['missing_header', 'invalid_key_segment', 'validation_failed', 'payload_too_large'],
  }, async (ctx) => {
    const product = requireHeader(ctx, 'X-Platform-Product');
    const collection = requireHeader(ctx, 'X-Platform-Collection');
    const filename = requireHeader(ctx, 'X-Platform-Filename');
    const visibilityHeader = ctx.get('X-Platform-Visibility').trim().toLowerCase();
    if (visibilityHeader && visibilityHeader !== 'public' && visibilityHeader !== 'private') {
      throw ValidationFailed('X-Platform-Visibility must be public or private', [{ path: 'header/X-Platform-Visibility', message: 'must be public or private' }]);
    }
    const object = await releaseUpload(ctx, () => storage.putObject(ctx.state.rc, {
      product, collection, filename,
      contentType: ctx.get('Content-Type') || undefined,
      visibility: (visibilityHeader || 'private') as Visibility,
      body: ctx.req,
      contentLength: ctx.request.length ?? null,
    }));
    return uploadAnswer(object);
  });

  router.get('/storage/presigned-upload', {
    summary: 'Presign a direct upload',
    description: 'Answers a URL the client PUTs the bytes to, with the headers it must send. Content type and size are bound '
      + 'into the signature. `contentLength` (exact size) is required with the s3 driver; the local driver bounds the size '
      + 'by it or by STORAGE_MAX_UPLOAD_BYTES.',
    tags, auth: 'tenant', role: 'editor',
    query: {
      type: 'object',
      required: ['product', 'collection', 'filename'],
      properties: {
        product: KEY_SEGMENT_SCHEMA, collection: KEY_SEGMENT_SCHEMA, filename: KEY_SEGMENT_SCHEMA,
        contentType: { type: 'string', default: 'application/octet-stream', maxLength: 200, pattern: CONTENT_TYPE_PARAMETER },
        visibility: { ...visibility, default: 'private' },
        expiresIn: { type: 'integer', minimum: 1, maximum: UPLOAD_EXPIRY_MAX, default: UPLOAD_EXPIRY_DEFAULT, description: 'seconds' },
        // A size over the upload limit is a parameter out of range (400, as the document's maximum says); the PUT of
        // more bytes than the limit is the upload's 413.
        contentLength: { type: 'integer', minimum: 0, maximum: storage.maxUploadBytes, description: 'exact size of the upload in bytes, at most STORAGE_MAX_UPLOAD_BYTES' },
      },
    },
    response: {
      type: 'object',
      properties: {
        key: { type: 'string' }, url: { type: 'string' }, method: { const: 'PUT' },
        headers: { type: 'object', additionalProperties: { type: 'string' } }, expiresAt: { type: 'string' },
      },
    },
    errors: ['validation_failed', 'invalid_key_segment', 'payload_too_large'],
  }, async (ctx) => {
    const q = ctx.state.query;
    return storage.presignUpload(ctx.state.rc, {
      product: q.product, collection: q.collection, filename: q.filename, contentType: q.contentType,
      visibility: q.visibility, expiresIn: q.expiresIn, contentLength: q.contentLength ?? null,
    });
  });

  router.get('/storage/signed-url', {
    summary: 'A time-limited download URL for an object of the tenant',
    tags, auth: 'tenant',
    query: {
      type: 'object',
      required: ['key'],
      properties: {
        key: KEY_SCHEMA,
        expiresIn: { type: 'integer', minimum: 1, maximum: DOWNLOAD_EXPIRY_MAX, default: DOWNLOAD_EXPIRY_DEFAULT, description: 'seconds' },
      },
    },
    response: { type: 'object', properties: { url: { type: 'string' }, expiresAt: { type: 'string' } } },
    errors: ['invalid_key_segment', 'forbidden', 'not_found'],
  }, async (ctx) => storage.signedUrl(ctx.state.rc, ctx.state.query.key, ctx.state.query.expiresIn));

  router.get('/storage/objects', {
    summary: 'List the tenant\'s objects, by product and collection',
    tags, auth: 'tenant',
    query: {
      type: 'object',
      properties: {
        product: KEY_SEGMENT_SCHEMA, collection: KEY_SEGMENT_SCHEMA,
        limit: { type: 'integer', minimum: 1, maximum: 200, default: 50 },
        offset: OFFSET_QUERY,
      },
    },
    response: { type: 'object', properties: { items: { type: 'array', items: objectItem }, pagination: { type: 'object' } } },
    errors: ['invalid_key_segment'],
  }, async (ctx) => {
    const q = ctx.state.query;
    return storage.list(ctx.state.rc, { product: q.product, collection: q.collection }, q.limit, q.offset);
  });

  router.delete('/storage/objects', {
    summary: 'Delete an object of the tenant',
    tags, auth: 'tenant', role: 'editor',
    query: { type: 'object', required: ['key'], properties: { key: KEY_SCHEMA } },
    response: { type: 'object', properties: { key: { type: 'string' }, deleted: { const: true } } },
    errors: ['invalid_key_segment', 'forbidden', 'not_found'],
  }, async (ctx) => {
    await storage.deleteObject(ctx.state.rc, ctx.state.query.key);
    return { key: ctx.state.query.key, deleted: true };
  });
}

function requireHeader(ctx: AppContext, name: string): string {
  const value = ctx.get(name).trim();
  if (!value) throw MissingHeader(name);
  return value;
}

/** Everything the storage mediator serves: its API, the local driver's signed URLs, the public assets. */
export function mountStorageRoutes(router: PackRouter, storage: StorageService): void {
  storageRoutes(router, storage);
  if (storage.driver.name === 'local') storageLocalRoutes(router, storage);
  publicAssetRoutes(router, storage);
}
